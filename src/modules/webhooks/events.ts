/**
 * The events outbox (docs/architecture.md: a state change and its events commit together; delivery happens
 * after commit). Every module emits its events with `emitEvent`, inside its own transaction.
 */
import type { Tx } from '../../db/store.js';
import { WriteBatch } from '../../jobs/runner.js';
import type { Clock } from '../../platform/clock.js';
import { anySubscriptionFor, eventInsert, type StoredEvent } from './repo.js';

/** docs/api.md#events: the event types a subscription can list. */
export const EVENT_TYPES = [
  'booking.created',
  'booking.updated',
  'booking.confirmed',
  'booking.cancelled',
  'consent.granted',
  'consent.revoked',
  'proposal.created',
  'proposal.countered',
  'proposal.accepted',
  'proposal.rejected',
  'proposal.cancelled',
  'proposal.expired',
  'proposal.resolved',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Sent by POST /v1/webhooks/{id}/test to one endpoint only; not subscribable. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** Queue of the dispatcher: one job per event, turning it into deliveries. */
export const DISPATCH_QUEUE = 'webhook-dispatch';
/** Queue of delivery attempts: one job per attempt. */
export const ATTEMPT_QUEUE = 'webhook-attempt';

export function isEventType(type: string): type is EventType {
  return (EVENT_TYPES as readonly string[]).includes(type);
}

export interface EmitEventInput {
  /** The account whose subscriptions receive the event. */
  accountId: string;
  type: EventType;
  /** The payload (`data` of the envelope, docs/api.md#events); must be JSON-serialisable. */
  data: Record<string, unknown>;
  /**
   * For events meant for one principal only (`proposal.resolved` goes to the organiser's
   * subscriptions only, docs/api.md#events): the account's own subscriptions (made with an API key) and
   * those the principal made (with a session) receive it; other users' subscriptions do not.
   */
  recipientPrincipalId?: string | null;
}

/**
 * Writes an event and enqueues its dispatch, inside the caller's transaction, in one statement: the
 * event exists and is delivered only if that transaction commits. With `batch`, both join the
 * caller's batch instead (sent when the caller runs it, with its other writes). Returns the envelope
 * as it will be delivered.
 */
export async function emitEvent(
  trx: Tx,
  clock: Clock,
  input: EmitEventInput,
  batch?: WriteBatch,
): Promise<StoredEvent> {
  if (!isEventType(input.type)) throw new Error(`emitEvent: unknown event type ${input.type}`);
  const { event, insert } = eventInsert(clock, {
    accountId: input.accountId,
    type: input.type,
    data: input.data,
    principalId: input.recipientPrincipalId ?? null,
  });
  const into = batch ?? new WriteBatch();
  // The dispatch job only when a subscription of the account could want the event: an account
  // without webhooks pays for the event row alone.
  into.add(insert, [
    {
      queue: DISPATCH_QUEUE,
      payload: { event_id: event.id },
      runAt: clock.now(),
      onlyIf: anySubscriptionFor(input.accountId, input.type),
    },
  ]);
  if (!batch) await into.run(trx);
  return event;
}
