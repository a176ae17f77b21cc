/**
 * Several attempts in flight to one endpoint, batched claims (with their contexts) and records: each event is
 * still delivered exactly once, signed, whether one runner or two share the database.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { sampleBooking } from '../../../test/helpers/events.js';
import { waitUntil } from '../../../test/helpers/promises.js';
import type { JobRunner } from '../../jobs/runner.js';
import { delivererRunner, webhookWorkDone } from '../../../test/helpers/deliverer.js';
import { closeOutboundDispatchers } from '../../platform/outbound.js';
import { ENDPOINT_CONCURRENCY } from './delivery.js';
import { emitEvent } from './events.js';
import { verifySignature, verifyStandardSignature } from './signing.js';

interface Got {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A receiver that answers 200 after `delayMs` and counts the requests open at once. */
async function slowReceiver(delayMs: number) {
  const got: Got[] = [];
  const open = { now: 0, max: 0 };
  const server: Server = createServer((req, res) => {
    open.now++;
    open.max = Math.max(open.max, open.now);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      // A slow receiver on purpose: the answer is held for delayMs of real time.
      setTimeout(() => {
        open.now--;
        res.end();
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    got,
    open,
    waitFor: (n: number, timeoutMs: number) =>
      waitUntil(`${n} deliveries received`, () => got.length >= n, timeoutMs),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function subscribe(t: TestApp, token: string, url: string): Promise<{ id: string; secret: string }> {
  const res = await t.call('POST', '/v1/webhooks', { token, body: { url, events: ['booking.created'] } });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; secret: string };
}

/** `count` booking.created events of the account, committed in transactions of 100; their ids. */
async function emitMany(t: TestApp, accountId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count; done += 100) {
    await t.ctx.db.transaction().execute(async (trx) => {
      for (let i = done; i < Math.min(count, done + 100); i++) {
        const data = { booking: sampleBooking({ notes: String(i) }) };
        ids.push(
          (await emitEvent(trx, t.ctx.clock, { accountId, livemode: true, type: 'booking.created', data }))
            .id,
        );
      }
    });
  }
  return ids;
}

/** Each event arrived exactly once, with both signatures valid for the subscription's secret. */
function expectOncePerEventSigned(got: Got[], ids: string[], secret: string): void {
  const byId = new Map<string, number>();
  for (const r of got) {
    const id = String(r.headers['webhook-id']);
    byId.set(id, (byId.get(id) ?? 0) + 1);
    expect((JSON.parse(r.body) as { id: string }).id).toBe(id);
    expect(verifySignature(secret, r.body, String(r.headers['x-webhook-signature']))).toBe(true);
    expect(
      verifyStandardSignature({
        secret,
        id,
        timestamp: String(r.headers['webhook-timestamp']),
        signatures: String(r.headers['webhook-signature']),
        body: r.body,
        nowMs: r.at,
      }),
    ).toBe(true);
  }
  expect(got).toHaveLength(ids.length);
  expect([...byId.keys()].sort()).toEqual([...ids].sort());
  expect([...byId.values()].every((n) => n === 1)).toBe(true);
}

/** Every delivery of the subscription succeeded at its first attempt, and one attempt row each. */
async function expectRecordedOnce(t: TestApp, webhookId: string, count: number): Promise<void> {
  const rows = await t.ctx.db
    .selectFrom('webhook_deliveries')
    .select(['id', 'status', 'attempt_count', 'pending_job'])
    .where('webhook_id', '=', webhookId)
    .execute();
  expect(rows).toHaveLength(count);
  expect(
    rows.filter((r) => r.status === 'succeeded' && r.attempt_count === 1 && r.pending_job === null),
  ).toHaveLength(count);
  const attempts = await t.ctx.db
    .selectFrom('webhook_attempts')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where(
      'delivery_id',
      'in',
      rows.map((r) => r.id),
    )
    .executeTakeFirstOrThrow();
  expect(Number(attempts.n)).toBe(count);
}

describe('several deliveries in flight to one endpoint', () => {
  let t: TestApp;
  let receiver: Awaited<ReturnType<typeof slowReceiver>>;
  beforeAll(async () => {
    receiver = await slowReceiver(30);
    t = await startTestApp({ workers: true, env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
    await closeOutboundDispatchers();
  });

  it('delivers each of 300 events exactly once, signed, with at most ENDPOINT_CONCURRENCY requests open', async () => {
    const acc = await t.account();
    const hook = await subscribe(t, acc.key, receiver.url);
    const ids = await emitMany(t, acc.id, 300);
    await receiver.waitFor(ids.length, 60_000);
    // Every job ended and the runner idle: whatever would be sent again has been.
    await webhookWorkDone(t, [t.ctx.jobs]);
    expectOncePerEventSigned(receiver.got, ids, hook.secret);
    expect(receiver.open.max).toBeGreaterThan(1);
    expect(receiver.open.max).toBeLessThanOrEqual(ENDPOINT_CONCURRENCY);
    await expectRecordedOnce(t, hook.id, ids.length);
  }, 90_000);
});

describe('two job runners claiming batches from one database', () => {
  let t: TestApp;
  let receiver: Awaited<ReturnType<typeof slowReceiver>>;
  const runners: JobRunner[] = [];
  const ran = [0, 0];
  beforeAll(async () => {
    receiver = await slowReceiver(2);
    // The app's own runner stays off: the two below are the only workers.
    t = await startTestApp({ env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
    for (const n of [0, 1]) {
      const runner = delivererRunner(t, {
        onJob: () => {
          ran[n]!++;
        },
      });
      runners.push(runner);
    }
    await Promise.all(runners.map((r) => r.start(t.ctx.notifier)));
  });
  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()));
    await t.close();
    await receiver.close();
    await closeOutboundDispatchers();
  });

  it('never delivers one delivery twice (1,000 events, both runners working)', async () => {
    const acc = await t.account();
    const hook = await subscribe(t, acc.key, receiver.url);
    const ids = await emitMany(t, acc.id, 1000);
    await receiver.waitFor(ids.length, 90_000);
    // Every job ended and both runners idle: whatever would be sent again has been.
    await webhookWorkDone(t, runners);
    expectOncePerEventSigned(receiver.got, ids, hook.secret);
    await expectRecordedOnce(t, hook.id, ids.length);
    // Both claimed jobs (dispatches and attempts): the claims really competed.
    expect(ran[0]).toBeGreaterThan(0);
    expect(ran[1]).toBeGreaterThan(0);
  }, 120_000);
});
