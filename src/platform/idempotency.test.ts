import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { FakeClock } from './clock.js';

let t: TestApp;
let key: string;
let accountId: string;
const clock = new FakeClock(new Date());
beforeAll(async () => {
  t = await startTestApp({ clock });
  ({ key, id: accountId } = await t.account());
});
afterAll(() => t.close());

const post = (body: unknown, idem?: string) =>
  t.call('POST', '/v1/api-keys', {
    token: key,
    body,
    headers: idem === undefined ? {} : { 'idempotency-key': idem },
  });

const count = async (name: string) =>
  (
    await t.ctx.db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', accountId)
      .where('name', '=', name)
      .execute()
  ).length;

describe('Idempotency-Key (docs/api.md#idempotency)', () => {
  it('replays the first response byte for byte and creates nothing more', async () => {
    const first = await post({ name: 'idem-a' }, 'key-a');
    const firstText = await first.text();
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await post({ name: 'idem-a' }, 'key-a');
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(await second.text()).toBe(firstText);
    expect(await count('idem-a')).toBe(1);
    // the stored answer holds a key shown only once: it is encrypted at rest
    const stored = await t.ctx.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('key', '=', 'key-a')
      .executeTakeFirstOrThrow();
    expect(stored.response_body).not.toContain('svc_sk_live_');
    expect(stored.response_body).toMatch(/^v1\./);
  });

  it('answers 422 idempotency-key-reused for the same key with another body', async () => {
    await post({ name: 'idem-b' }, 'key-b');
    const res = await post({ name: 'idem-b2' }, 'key-b');
    expect(res.status).toBe(422);
    expect((await res.json()).type).toMatch(/\/errors\/idempotency-key-reused$/);
    expect(await count('idem-b2')).toBe(0);
  });

  it('rejects malformed keys with 400', async () => {
    for (const bad of ['', 'has space', 'x'.repeat(257), 'émoji']) {
      const res = await post({ name: 'idem-c' }, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect((await res.json()).errors).toHaveProperty(['Idempotency-Key']);
    }
    expect(await count('idem-c')).toBe(0);
  });

  it('stores 4xx outcomes of requests that reached the handler and replays them', async () => {
    // A scope of publishable keys on a secret key: the schema lets it through, the handler refuses it.
    const a = await post({ name: 'idem-d', scopes: ['create:booking'] }, 'key-d');
    expect(a.status).toBe(400);
    const b = await post({ name: 'idem-d', scopes: ['create:booking'] }, 'key-d');
    expect(b.status).toBe(400);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
  });

  it('answers 409 idempotency-key-in-use while the first request is in flight', async () => {
    const hash = (await import('./idempotency.js')).bodyHash({ name: 'idem-e' });
    await t.ctx.idempotency.claim(accountId, 'key-e', 'POST', '/v1/api-keys', hash);
    const res = await post({ name: 'idem-e' }, 'key-e');
    expect(res.status).toBe(409);
    expect(res.headers.get('retry-after')).toBe('1');
    expect((await res.json()).type).toMatch(/idempotency-key-in-use$/);
    // a claim abandoned by a crashed process is taken over once its lease ends
    clock.advance(61_000);
    const later = await post({ name: 'idem-e' }, 'key-e');
    expect(later.status).toBe(201);
    expect(await count('idem-e')).toBe(1);
  });

  it('never stores a 5xx: the claim is released so a retry can succeed', async () => {
    await t.ctx.idempotency.claim(accountId, 'key-f', 'POST', '/v1/api-keys', 'h');
    await t.ctx.idempotency.release(accountId, 'key-f');
    const row = await t.ctx.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('key', '=', 'key-f')
      .executeTakeFirst();
    expect(row).toBeUndefined();
  });

  it('expires records after 24 hours and cleans them up', async () => {
    await post({ name: 'idem-g' }, 'key-g');
    clock.advance(24 * 3_600_000 + 1000);
    const again = await post({ name: 'idem-g' }, 'key-g');
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(await count('idem-g')).toBe(2);
    clock.advance(24 * 3_600_000 + 1000);
    expect(await t.ctx.idempotency.cleanup()).toBeGreaterThan(0);
  });

  it('scopes keys per principal: another account may use the same key', async () => {
    const other = await t.account();
    await post({ name: 'idem-h' }, 'shared-key');
    const res = await t.call('POST', '/v1/api-keys', {
      token: other.key,
      body: { name: 'idem-h' },
      headers: { 'idempotency-key': 'shared-key' },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });
});
