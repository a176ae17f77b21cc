/**
 * The first attempts a dispatch enqueues with the deliveries it makes are jobs like any other: NOTIFY
 * wakes the processes that run attempts, and exactly one of them claims each. None is made for a
 * subscription paused after the dispatch's claim read its targets.
 */
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { sampleBooking } from '../../../test/helpers/events.js';
import { type Receiver, startReceiver } from '../../../test/helpers/receiver.js';
import { JOBS_CHANNEL, type JobRunner } from '../../jobs/runner.js';
import { delivererRunner, webhookWorkDone } from '../../../test/helpers/deliverer.js';
import { closeOutboundDispatchers } from '../../platform/outbound.js';
import { makeDeliveries } from './delivery.js';
import { ATTEMPT_QUEUE, DISPATCH_QUEUE, emitEvent } from './events.js';
import { claimTargets, targetsRead } from './repo.js';

let t: TestApp;
let receiver: Receiver;
/** The queues NOTIFY woke since the test began. */
const woken: string[] = [];
const runners: JobRunner[] = [];

beforeAll(async () => {
  receiver = await startReceiver(() => ({ status: 200 }));
  // The app's own runner stays off: each test starts the runners it needs.
  t = await startTestApp({ env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
  await t.ctx.notifier!.listen(JOBS_CHANNEL, (queue) => woken.push(queue));
});
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
  await t.ctx.db.deleteFrom('webhooks').execute();
  woken.length = 0;
});
afterAll(async () => {
  await t.close();
  await receiver.close();
  await closeOutboundDispatchers();
});

/** A started runner of the webhook queues named, counting the jobs it ran per queue. */
async function runnerOf(queues: string[]): Promise<Map<string, number>> {
  const ran = new Map<string, number>();
  const runner = delivererRunner(t, { queues, onJob: (q) => ran.set(q, (ran.get(q) ?? 0) + 1) });
  runners.push(runner);
  await runner.start(t.ctx.notifier);
  return ran;
}

async function subscribe(token: string): Promise<string> {
  const res = await t.call('POST', '/v1/webhooks', {
    token,
    body: { url: receiver.url, events: ['booking.created'] },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** `count` booking.created events, each committed on its own; their ids. */
async function emitEach(accountId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const data = { booking: sampleBooking({ notes: String(i) }) };
    const event = await t.ctx.db
      .transaction()
      .execute((trx) =>
        emitEvent(trx, t.ctx.clock, { accountId, livemode: true, type: 'booking.created', data }),
      );
    ids.push(event.id);
  }
  return ids;
}

/** Each event arrived once since `from`, and each delivery succeeded at its first attempt. */
async function expectDeliveredOnce(webhookId: string, ids: string[], from: number): Promise<void> {
  await receiver.waitFor(from + ids.length, 20_000);
  // Every job ended and the runners idle: whatever would be sent again has been.
  await webhookWorkDone(t, runners);
  const got = receiver.received.slice(from).map((r) => String(r.headers['webhook-id']));
  expect(got.sort()).toEqual([...ids].sort());
  const rows = await t.ctx.db
    .selectFrom('webhook_deliveries')
    .select(['status', 'attempt_count'])
    .where('webhook_id', '=', webhookId)
    .execute();
  expect(rows).toEqual(ids.map(() => ({ status: 'succeeded', attempt_count: 1 })));
}

describe('the first attempt of a delivery', () => {
  it('is woken by NOTIFY and made once, by one of the processes that make attempts', async () => {
    const acc = await t.account();
    const hook = await subscribe(acc.key);
    const dispatching = await runnerOf([DISPATCH_QUEUE, ATTEMPT_QUEUE]);
    const other = await runnerOf([ATTEMPT_QUEUE]);
    const from = receiver.received.length;
    const ids = await emitEach(acc.id, 10);
    await expectDeliveredOnce(hook, ids, from);
    expect((dispatching.get(ATTEMPT_QUEUE) ?? 0) + (other.get(ATTEMPT_QUEUE) ?? 0)).toBe(10);
    expect(woken).toContain(DISPATCH_QUEUE);
    expect(woken).toContain(ATTEMPT_QUEUE);
  });

  it('is left to any process, woken by NOTIFY, when the dispatching one does not make attempts', async () => {
    const acc = await t.account();
    const hook = await subscribe(acc.key);
    const dispatching = await runnerOf([DISPATCH_QUEUE]);
    const attempting = await runnerOf([ATTEMPT_QUEUE]);
    const from = receiver.received.length;
    const ids = await emitEach(acc.id, 5);
    await expectDeliveredOnce(hook, ids, from);
    expect(dispatching.get(DISPATCH_QUEUE)).toBeGreaterThan(0);
    expect(attempting.get(ATTEMPT_QUEUE)).toBe(5);
    expect(woken).toContain(ATTEMPT_QUEUE);
  });

  it('is not made for a subscription paused after the dispatch read its targets', async () => {
    const acc = await t.account();
    const hook = await subscribe(acc.key);
    const [eventId] = await emitEach(acc.id, 1);
    // What the dispatch job's claim reads (claimTargets), before the pause.
    const { rows: read } = await sql<{ read: unknown }>`
      SELECT ${claimTargets(sql`${JSON.stringify({ event_id: eventId })}::jsonb`)} AS read`.execute(t.ctx.db);
    const targets = targetsRead(read[0]!.read);
    expect(targets.map((x) => x.webhook_id)).toEqual([hook]);
    const paused = await t.call('PATCH', `/v1/webhooks/${hook}`, { token: acc.key, body: { active: false } });
    expect(paused.status).toBe(200);
    const { made } = await makeDeliveries(t.ctx.db, targets, t.ctx.clock.now());
    expect(made).toEqual([]);
    const rows = await t.ctx.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', hook)
      .execute();
    expect(rows).toEqual([]);
    const jobs = await t.ctx.db
      .selectFrom('jobs')
      .select('id')
      .where('queue', '=', ATTEMPT_QUEUE)
      .where(sql<boolean>`payload->>'webhook_id' = ${hook}`)
      .execute();
    expect(jobs).toEqual([]);
  });
});
