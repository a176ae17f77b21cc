/**
 * The webhooks module's public surface (docs/architecture.md#modules): types only. A module that
 * emits webhook events lists `webhooks: Pick<WebhooksApi, 'emit'>` in its needs.
 */
import type { Tx } from '../../db/store.js';
import type { WriteBatch } from '../../jobs/runner.js';

/**
 * The payload (`data`) of each webhook event type, by type. Empty here: each module that emits events
 * adds its own with declaration merging, beside their TypeBox schemas in its `events.ts` (which its
 * definition declares as `events`), so `emit` accepts exactly the declared payload of each type.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in the emitting modules
export interface EventPayloads {}

/** A webhook event type some module declares. */
export type EventType = keyof EventPayloads & string;

export interface EmitEventInput<T extends EventType = EventType> {
  /** The account whose subscriptions receive the event. */
  accountId: string;
  type: T;
  /** The payload (`data` of the envelope, docs/api.md#events), as the emitting module declares it. */
  data: EventPayloads[T];
  /**
   * For events meant for one principal only (`proposal.resolved` goes to the organiser's
   * subscriptions only, docs/api.md#events): the account's own subscriptions (made with an API key) and
   * those the principal made (with a session) receive it; other users' subscriptions do not.
   */
  recipientPrincipalId?: string | null;
  /**
   * The mode of what it is about (docs/api.md#test-mode): a test-mode event goes to test-mode
   * subscriptions only, its envelope says `livemode: false`. Absent: live.
   */
  livemode: boolean;
  /**
   * When it happened (its `created_at`): the time of the clock the change ran on — `actor.clock.now()`,
   * or a test clock's timed work's `clock.now()` (the time the work fell due). Absent: the server's
   * clock for a live event, the account's test clock (read in `trx`) for a test-mode one.
   */
  at?: Date;
}

/** An event's envelope, exactly as it is delivered (docs/api.md#events). */
export interface StoredEvent {
  id: string;
  type: string;
  created_at: string;
  /** False for an event of test mode (docs/api.md#test-mode). */
  livemode: boolean;
  data: Record<string, unknown>;
}

/** What the webhooks module does for other modules. */
export interface WebhooksApi {
  /**
   * Writes an event and enqueues its dispatch inside the caller's transaction, in one statement: the
   * event exists and is delivered only if that transaction commits (docs/api.md#events: a state
   * change and its events commit together). With `batch`, both join the caller's batch instead (sent
   * when the caller runs it, with its other writes). Returns the envelope as it will be delivered.
   */
  emit<T extends EventType>(trx: Tx, input: EmitEventInput<T>, batch?: WriteBatch): Promise<StoredEvent>;
}

/** The webhooks module needs no other module. */
export type WebhooksNeeds = Record<never, never>;
