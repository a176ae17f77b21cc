/**
 * The contract's client rules as the SDK keeps them (docs/api.md, Errors, Idempotency, Pagination,
 * Signatures and retries), against the real server on the embedded store, with a proxy in front
 * (./proxy.ts) where a test needs to count requests, answer 429/503 itself, or lose an answer.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { startReceiver, type Receiver } from '../../../test/helpers/receiver.js';
import { clearOfHourBoundary } from '../../../test/helpers/windows.js';
import { weekdaySlots } from '../../../test/helpers/slots.js';
import {
  AuthenticationError,
  ConflictError,
  Kairos,
  type KairosError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  SlotTakenError,
  SlotUnavailableError,
  UnprocessableError,
  ValidationError,
  verifyWebhook,
  WebhookVerificationError,
} from '../src/index.js';
import { type TestProxy, startProxy } from './proxy.js';

let t: TestApp;
let proxy: TestProxy;
let receiver: Receiver;
let key: string;
const slots = weekdaySlots();
const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };

beforeAll(async () => {
  t = await startTestApp({ workers: true, env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } });
  proxy = await startProxy(t.url);
  receiver = await startReceiver();
  key = (await t.account()).key;
});
afterEach(() => {
  proxy.seen.length = 0;
  proxy.plan = () => 'forward';
});
afterAll(async () => {
  await proxy?.close();
  await receiver?.close();
  await t?.close();
});

/** A client through the proxy, so its requests are counted. */
const viaProxy = (o: { apiKey?: string; maxRetries?: number } = {}) =>
  new Kairos({ apiKey: key, baseUrl: proxy.url, maxRetries: 3, ...o });

const gaps = () => proxy.seen.slice(1).map((s, i) => s.at - proxy.seen[i]!.at);

describe('errors', () => {
  it('a taken slot is a SlotTakenError (a ConflictError) with the reason, sent once', async () => {
    const start = slots.next().value!;
    await new Kairos({ apiKey: key, baseUrl: t.url }).bookings.create({ ...customer, start_time: start });
    const err = (await viaProxy()
      .bookings.create({ ...customer, start_time: start })
      .catch((e) => e)) as KairosError;
    expect(err).toBeInstanceOf(SlotTakenError);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ status: 409, code: 'slot_unavailable', title: expect.any(String) });
    expect(err.problem?.reason).toBe('taken');
    expect(err.type).toMatch(/\/errors\/conflict$/);
    expect(err.requestId).toMatch(/^req_/);
    expect(proxy.seen).toHaveLength(1);
    expect(err).toBeInstanceOf(SlotUnavailableError);
    expect((err as SlotUnavailableError).reason).toBe('taken');
  });

  it('a time refused for another reason (horizon, hours) is a SlotUnavailableError with it, not taken', async () => {
    const kairos = new Kairos({ apiKey: key, baseUrl: t.url });
    const late = new Date(Date.now() + 90 * 86_400_000);
    late.setUTCHours(10, 0, 0, 0);
    while (late.getUTCDay() === 0 || late.getUTCDay() === 6) late.setUTCDate(late.getUTCDate() + 1);
    const sunday = new Date(Date.now() + 3 * 86_400_000);
    sunday.setUTCHours(10, 0, 0, 0);
    while (sunday.getUTCDay() !== 0) sunday.setUTCDate(sunday.getUTCDate() + 1);
    for (const [start, reason] of [
      [late, 'max_days_ahead'],
      [sunday, 'outside_working_hours'],
    ] as const) {
      const err = (await kairos.bookings
        .create({ ...customer, start_time: start.toISOString() })
        .catch((e) => e)) as SlotUnavailableError;
      expect(err).toBeInstanceOf(SlotUnavailableError);
      expect(err).toBeInstanceOf(ConflictError);
      expect(err).not.toBeInstanceOf(SlotTakenError);
      expect(err).toMatchObject({ status: 409, code: 'slot_unavailable', reason });
      expect(err.name).toBe('SlotUnavailableError');
    }
  });

  it('400, 401, 403, 404 and 422 are thrown as their classes at once, never retried', async () => {
    const { api_key: publishable } = await new Kairos({ apiKey: key, baseUrl: t.url }).apiKeys.create({
      name: 'site',
      key_type: 'publishable',
    });
    const cases: [() => Promise<unknown>, new (...a: never[]) => KairosError, number, string?][] = [
      [
        () =>
          viaProxy().bookings.create({
            ...customer,
            customer_email: 'nope',
            start_time: slots.next().value!,
          }),
        ValidationError,
        400,
      ],
      [() => viaProxy({ apiKey: 'svc_sk_live_wrong' }).bookings.list().page(), AuthenticationError, 401],
      [() => viaProxy({ apiKey: publishable.key! }).bookings.list().page(), PermissionError, 403],
      [() => viaProxy().bookings.get('booking_01jxk9c2e1d3f5g7h9j1k3m5n7'), NotFoundError, 404],
      [
        () => viaProxy().bookings.create({ ...customer, start_time: '2020-01-06T10:00:00Z' }),
        UnprocessableError,
        422,
        'start_in_past',
      ],
    ];
    for (const [call, Class, status, code] of cases) {
      proxy.seen.length = 0;
      const err = (await call().catch((e) => e)) as KairosError;
      expect(err, String(status)).toBeInstanceOf(Class);
      expect(err.status).toBe(status);
      if (code) expect(err.code).toBe(code);
      expect(proxy.seen, `${status} sent once`).toHaveLength(1);
    }
    const invalid = (await viaProxy()
      .bookings.create({ ...customer, customer_email: 'nope', start_time: slots.next().value! })
      .catch((e) => e)) as ValidationError;
    expect(invalid.errors).toHaveProperty('customer_email');
  });
});

describe('retries', () => {
  it('retries a 503 after its Retry-After and stops after maxRetries', { timeout: 20_000 }, async () => {
    proxy.plan = () => ({
      status: 503,
      headers: { 'retry-after': '1' },
      body: {
        type: 'x/errors/service-unavailable',
        title: 'Service unavailable',
        status: 503,
        detail: 'restarting',
        request_id: 'req_1',
        code: 'store_unavailable',
      },
    });
    const err = (await viaProxy({ maxRetries: 2 })
      .me()
      .catch((e) => e)) as ServerError;
    expect(err).toBeInstanceOf(ServerError);
    expect(err.code).toBe('store_unavailable');
    expect(proxy.seen).toHaveLength(3);
    for (const gap of gaps()) expect(gap).toBeGreaterThanOrEqual(1000);
  });

  it('retries a 429 after its Retry-After, then succeeds', { timeout: 20_000 }, async () => {
    proxy.plan = (n) =>
      n === 1 ? { status: 429, headers: { 'retry-after': '1' }, body: { status: 429 } } : 'forward';
    const me = await viaProxy().me();
    expect(me.credential).toBe('secret');
    expect(proxy.seen).toHaveLength(2);
    expect(gaps()[0]).toBeGreaterThanOrEqual(1000);
  });

  it('a real 429 asking for longer than maxRetryDelayMs is thrown at once with retryAfter', async () => {
    await clearOfHourBoundary();
    const limited = await t.account({ rateLimit: 1 });
    const client = new Kairos({ apiKey: limited.key, baseUrl: proxy.url, maxRetryDelayMs: 5000 });
    await client.me();
    const err = (await client.me().catch((e) => e)) as RateLimitError;
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.retryAfter).toBeGreaterThan(5);
    expect(proxy.seen).toHaveLength(2);
  });

  it('a creating POST whose answer was lost is sent again with the same Idempotency-Key: one booking', async () => {
    const owner = await t.account();
    const start = slots.next().value!;
    proxy.plan = (n) => (n === 1 ? 'drop' : 'forward');
    const client = new Kairos({ apiKey: owner.key, baseUrl: proxy.url });
    const { booking } = await client.bookings.create({ ...customer, start_time: start });
    expect(proxy.seen).toHaveLength(2);
    const keys = proxy.seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    const all = await new Kairos({ apiKey: owner.key, baseUrl: t.url }).bookings.list();
    expect(all.bookings.map((b) => b.id)).toEqual([booking.id]);
  });

  it('a caller’s Idempotency-Key makes a repeat a replay of the first answer', async () => {
    const client = new Kairos({ apiKey: key, baseUrl: t.url });
    const body = { ...customer, start_time: slots.next().value! };
    const first = await client.bookings.create(body, { idempotencyKey: 'order-42' });
    const again = await client.bookings.create(body, { idempotencyKey: 'order-42' });
    expect(again.booking.id).toBe(first.booking.id);
  });

  it('a network error on a GET is retried; maxRetries: 0 sends once', async () => {
    proxy.plan = (n) => (n === 1 ? 'drop' : 'forward');
    expect((await viaProxy().me()).credential).toBe('secret');
    expect(proxy.seen).toHaveLength(2);
    proxy.seen.length = 0;
    proxy.plan = () => 'drop';
    await expect(viaProxy({ maxRetries: 0 }).me()).rejects.toMatchObject({
      name: 'ConnectionError',
      status: 0,
    });
    expect(proxy.seen).toHaveLength(1);
  });
});

describe('retries: when repeating is not safe, and other signals', () => {
  const problem = (status: number, extra: object = {}) => ({
    type: `x/errors/${status}`,
    title: 'Failure',
    status,
    detail: 'failure',
    request_id: 'req_proxy',
    ...extra,
  });
  // Signing in is a POST the server does not deduplicate (it has no Idempotency-Key).
  const signIn = { email: 'ada@example.com', password: 'correct horse battery' };

  it('a POST the server does not deduplicate is not repeated after a 500 or a lost answer, only after a 503', {
    timeout: 20_000,
  }, async () => {
    proxy.plan = () => ({ status: 500, body: problem(500) });
    await expect(viaProxy().sessions.create(signIn)).rejects.toBeInstanceOf(ServerError);
    expect(proxy.seen).toHaveLength(1);
    proxy.seen.length = 0;
    proxy.plan = () => 'drop';
    await expect(viaProxy().sessions.create(signIn)).rejects.toMatchObject({ name: 'ConnectionError' });
    expect(proxy.seen).toHaveLength(1);
    proxy.seen.length = 0;
    proxy.plan = () => ({ status: 503, headers: { 'retry-after': '0' }, body: problem(503) });
    await expect(viaProxy({ maxRetries: 2 }).sessions.create(signIn)).rejects.toBeInstanceOf(ServerError);
    expect(proxy.seen).toHaveLength(3);
  });

  it('a 409 idempotency-key-in-use is retried under the same key; the body’s retry_after is honoured', {
    timeout: 20_000,
  }, async () => {
    proxy.plan = (n) =>
      n === 1
        ? {
            status: 409,
            headers: { 'retry-after': '1' },
            body: problem(409, { type: 'x/errors/idempotency-key-in-use' }),
          }
        : n === 2
          ? { status: 429, body: problem(429, { retry_after: new Date(Date.now() + 1200).toISOString() }) }
          : 'forward';
    const { booking } = await viaProxy().bookings.create({ ...customer, start_time: slots.next().value! });
    expect(booking.status).toBe('confirmed');
    expect(proxy.seen).toHaveLength(3);
    expect(new Set(proxy.seen.map((s) => s.headers['idempotency-key'])).size).toBe(1);
    for (const gap of gaps()) expect(gap).toBeGreaterThanOrEqual(1000);
  });

  it('an attempt past timeoutMs is abandoned and retried, then thrown as a ConnectionError', async () => {
    proxy.plan = () => 'hang';
    const started = Date.now();
    const err = (await new Kairos({ apiKey: key, baseUrl: proxy.url, timeoutMs: 300, maxRetries: 1 })
      .me()
      .catch((e) => e)) as KairosError;
    expect(err.name).toBe('ConnectionError');
    expect(err.detail).toMatch(/timed out after 300 ms/);
    expect(proxy.seen).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('an aborted signal stops the call and its retries', async () => {
    proxy.plan = () => 'hang';
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('the user left')), 200);
    await expect(viaProxy().me({ signal: controller.signal })).rejects.toThrow('the user left');
    expect(proxy.seen).toHaveLength(1);
  });
});

describe('pagination', () => {
  it('walks 250 bookings in pages of 100 with for await, and .page() gives one page', {
    timeout: 120_000,
  }, async () => {
    const owner = await t.account();
    const direct = new Kairos({ apiKey: owner.key, baseUrl: t.url });
    const starts = Array.from({ length: 250 }, () => slots.next().value!);
    for (let i = 0; i < starts.length; i += 10) {
      await Promise.all(
        starts.slice(i, i + 10).map((s) => direct.bookings.create({ ...customer, start_time: s })),
      );
    }
    const client = new Kairos({ apiKey: owner.key, baseUrl: proxy.url });
    const ids: string[] = [];
    for await (const b of client.bookings.list({ limit: 100 })) ids.push(b.id);
    expect(ids).toHaveLength(250);
    expect(new Set(ids).size).toBe(250);
    expect(proxy.seen.map((s) => new URL(s.path, proxy.url).searchParams.has('cursor'))).toEqual([
      false,
      true,
      true,
    ]);
    const first = await client.bookings.list({ limit: 100 }).page();
    expect(first.bookings).toHaveLength(100);
    expect(first.pagination.has_more).toBe(true);
    const second = await client.bookings.list({ limit: 100 }).page(first.pagination.next_cursor!);
    expect(second.bookings[0]!.id).toBe(ids[100]);
  });
});

describe('verifyWebhook', () => {
  it('accepts a real delivery and refuses a tampered body, a stale timestamp and a wrong secret', async () => {
    const owner = await t.account();
    const client = new Kairos({ apiKey: owner.key, baseUrl: t.url });
    const hook = await client.webhooks.create({ url: receiver.url, events: ['booking.created'] });
    const { booking } = await client.bookings.create({ ...customer, start_time: slots.next().value! });
    const [got] = await receiver.waitFor(1, 20_000);
    const event = await verifyWebhook(got!.body, got!.headers, hook.secret);
    expect(event.type).toBe('booking.created');
    if (event.type === 'booking.created') expect(event.data.booking.id).toBe(booking.id);
    await expect(
      verifyWebhook(got!.body.replace('Ada', 'Eve'), got!.headers, hook.secret),
    ).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(
      verifyWebhook(got!.body, got!.headers, hook.secret, { now: Date.now() + 6 * 60_000 }),
    ).rejects.toThrow(/tolerance/);
    const { secret: wrong } = await client.webhooks.create({
      url: receiver.url,
      events: ['booking.cancelled'],
    });
    await expect(verifyWebhook(got!.body, got!.headers, wrong)).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );
    // X-Webhook-Signature alone (a receiver that reads only it).
    const legacy = { 'x-webhook-signature': String(got!.headers['x-webhook-signature']) };
    expect((await verifyWebhook(got!.body, legacy, hook.secret)).id).toBe(event.id);
    await expect(verifyWebhook(`${got!.body} `, legacy, hook.secret)).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );
    // Bytes as received work as well as text.
    expect((await verifyWebhook(new TextEncoder().encode(got!.body), got!.headers, hook.secret)).id).toBe(
      event.id,
    );
  });

  it('during a rotation a delivery verifies with either secret', async () => {
    const owner = await t.account();
    const client = new Kairos({ apiKey: owner.key, baseUrl: t.url });
    const hook = await client.webhooks.create({ url: receiver.url, events: ['booking.created'] });
    const { webhook: rotated } = await client.webhooks.rotateSecret(hook.id);
    const before = receiver.received.length;
    await client.bookings.create({ ...customer, start_time: slots.next().value! });
    const got = (await receiver.waitFor(before + 1, 20_000)).at(-1)!;
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const wrong = 'whsec_MfKQ9r8GKYqVpmLs1e8xq5dUJ3ZtR0d0n6yq2m1tN2c=';
    for (const secrets of [[rotated.secret!], [hook.secret], [wrong, rotated.secret!]]) {
      expect((await verifyWebhook(got.body, got.headers, secrets)).type).toBe('booking.created');
    }
    await expect(verifyWebhook(got.body, got.headers, [wrong])).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );
    // Something that is not a secret at all signs nothing, and does not stop the others from verifying.
    for (const junk of ['', 'whsec_', 'not base64 at all!']) {
      await expect(verifyWebhook(got.body, got.headers, junk)).rejects.toBeInstanceOf(
        WebhookVerificationError,
      );
      expect((await verifyWebhook(got.body, got.headers, [junk, hook.secret])).type).toBe('booking.created');
    }
  });
});
