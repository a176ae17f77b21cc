import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/promises.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

/**
 * A webhook receiver that never answers (docs/api.md, Signatures and retries): deliveries to other
 * endpoints keep their pace (no head-of-line blocking), and the hanging one follows the retry
 * schedule, each attempt cut at the timeout, then ends `failed` with every attempt recorded. The
 * schedule and timeout are shortened here (1 s timeout; retries after 1, 2 and 3 s) so the whole
 * life of a delivery fits in a test.
 */
let t: TestApp;
let hanging: Receiver;
let healthy: Receiver;
beforeAll(async () => {
  hanging = await startReceiver(() => ({ status: 200, delayMs: 600_000 }));
  healthy = await startReceiver();
  t = await startTestApp({
    workers: true,
    env: {
      KAIROS_ALLOW_PRIVATE_NETWORK: 'true',
      KAIROS_WEBHOOK_TIMEOUT_MS: '1000',
      KAIROS_WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s',
    },
  });
});
afterAll(async () => {
  await t.close();
  await Promise.all([hanging.close(), healthy.close()]);
});

function nextFridayAt(hour: number, minute: number): string {
  const d = new Date(Date.now() + 2 * 86_400_000);
  d.setUTCHours(hour, minute, 0, 0);
  while (d.getUTCDay() !== 5) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

describe('a webhook receiver that hangs', () => {
  it('does not slow another account’s deliveries, and its own follow the retries (each cut at the timeout) to failed', async () => {
    const stuck = await t.account();
    const fine = await t.account();
    const subscribe = async (key: string, url: string) => {
      const res = await t.call('POST', '/v1/webhooks', {
        token: key,
        body: { url, events: ['booking.created'] },
      });
      expect(res.status).toBe(201);
      return (await res.json()).id as string;
    };
    const stuckHook = await subscribe(stuck.key, hanging.url);
    await subscribe(fine.key, healthy.url);
    const book = async (key: string, i: number) => {
      const res = await t.call('POST', '/v1/bookings', {
        token: key,
        body: {
          start_time: nextFridayAt(9 + Math.floor(i / 4), (i % 4) * 15),
          customer_email: `g${i}@example.com`,
          customer_name: 'Guest',
          duration_minutes: 15,
        },
      });
      expect(res.status, await res.clone().text()).toBe(201);
    };
    // Twelve deliveries hang at the stuck receiver (more than any per-endpoint share of workers).
    for (let i = 0; i < 12; i++) await book(stuck.key, i);
    await hanging.waitFor(1, 5_000);

    // Meanwhile the healthy receiver gets each of its deliveries promptly.
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const before = healthy.received.length;
      const sent = Date.now();
      await book(fine.key, i);
      const [got] = (await healthy.waitFor(before + 1, 5_000)).slice(before);
      latencies.push(got!.at - sent);
    }
    expect(Math.max(...latencies), `latencies ${latencies.join(', ')} ms`).toBeLessThan(1_500);

    // The hanging endpoint's deliveries: four attempts each (the first and three retries), then failed.
    let deliveries: { status: string; attempts: { error: string | null }[] }[] = [];
    const allFailed = async () => {
      const res = await t.call('GET', `/v1/webhooks/${stuckHook}/deliveries?limit=100`, { token: stuck.key });
      deliveries = (await res.json()).deliveries;
      return deliveries.length === 12 && deliveries.every((d) => d.status === 'failed');
    };
    await waitUntil('every delivery to the hanging endpoint failed', allFailed, 45_000, 500).catch(
      () => undefined,
    );
    expect(deliveries.map((d) => d.status)).toEqual(Array(12).fill('failed'));
    for (const d of deliveries) {
      expect(d.attempts).toHaveLength(4);
      for (const a of d.attempts) expect(a.error).toBe('timeout');
    }
  }, 90_000);
});
