/**
 * The events outbox (docs/api.md#events: a state change and its events commit together; delivery happens
 * after commit). `emitEvent` is the implementation of `WebhooksApi.emit`, which every emitting module
 * calls through its declared need, inside its own transaction.
 */
import { Type } from '@sinclair/typebox';
import type { Tx } from '../../db/store.js';
import { WriteBatch } from '../../jobs/runner.js';
import type { Clock } from '../../platform/clock.js';
import type { EmitEventInput, EventType, StoredEvent } from './api.js';
import { FixedClock, OffsetClock } from '../../platform/test-clocks.js';
import type { TestClocks } from '../../platform/test-clocks.js';
import { anySubscriptionFor, eventInsert } from './repo.js';

/** Sent by POST /v1/webhooks/{id}/test to one endpoint only; not subscribable. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** Queue of the dispatcher: one job per event, turning it into deliveries. */
export const DISPATCH_QUEUE = 'webhook-dispatch';
/** Queue of delivery attempts: one job per attempt. */
export const ATTEMPT_QUEUE = 'webhook-attempt';

/** The payload of the test event (POST /v1/webhooks/{id}/test). */
export const TestEventPayload = Type.Object(
  {
    webhook_id: Type.String({ pattern: '^wh_[0-9a-z]{26}$' }),
    message: Type.String(),
  },
  {
    additionalProperties: false,
    description: 'A test event, sent by POST /v1/webhooks/{id}/test to that subscription only',
    examples: [
      {
        webhook_id: 'wh_01jxk2m4q8r7t5v3w9y6z1a2b3',
        message: 'This is a test event sent from the Kairos API.',
      },
    ],
  },
);

/**
 * Writes an event and enqueues its dispatch, inside the caller's transaction, in one statement: the
 * event exists and is delivered only if that transaction commits. With `batch`, both join the
 * caller's batch instead (sent when the caller runs it, with its other writes). Returns the envelope
 * as it will be delivered.
 */
export async function emitEvent<T extends EventType>(
  trx: Tx,
  clock: Clock,
  input: EmitEventInput<T>,
  batch?: WriteBatch,
  testClocks?: Pick<TestClocks, 'offsetMs'>,
): Promise<StoredEvent> {
  const livemode = input.livemode;
  const { event, insert } = eventInsert(await clockOfEvent(trx, clock, input, livemode, testClocks), {
    accountId: input.accountId,
    type: input.type,
    data: input.data as Record<string, unknown>,
    principalId: input.recipientPrincipalId ?? null,
    livemode,
  });
  const into = batch ?? new WriteBatch();
  // The dispatch job only when a subscription of the account could want the event: an account
  // without webhooks pays for the event row alone.
  into.add(insert, [
    {
      queue: DISPATCH_QUEUE,
      payload: { event_id: event.id },
      runAt: clock.now(),
      onlyIf: anySubscriptionFor(input.accountId, livemode, input.type),
    },
  ]);
  if (!batch) await into.run(trx);
  return event;
}

/**
 * The time an event is stamped with (docs/api.md#test-clock): the one its emitter gives (`at`: the
 * clock its change ran on), else the server's clock for a live event and the account's test clock
 * (read in `trx`) for a test-mode one.
 */
async function clockOfEvent(
  trx: Tx,
  clock: Clock,
  input: Pick<EmitEventInput, 'accountId' | 'at'>,
  livemode: boolean,
  testClocks: Pick<TestClocks, 'offsetMs'> | undefined,
): Promise<Clock> {
  if (input.at !== undefined) return new FixedClock(input.at.getTime());
  if (livemode) return clock;
  if (!testClocks) throw new Error('a test-mode event needs its time (`at`) or the test clocks');
  return new OffsetClock(clock, await testClocks.offsetMs(input.accountId, trx));
}
