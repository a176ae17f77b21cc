import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { clockedApp } from '../../../test/helpers/clocked-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('API keys', () => {
  it('creates a secret key shown once, with 32+ random bytes after the prefix, stored only as a keyed hash', async () => {
    const acc = await t.account();
    const res = await t.call('POST', '/v1/api-keys', {
      token: acc.key,
      body: { name: 'CI', description: 'for the pipeline', rate_limit_per_hour: 500 },
    });
    expect(res.status).toBe(201);
    const { api_key } = await res.json();
    expect(api_key).toMatchObject({ name: 'CI', description: 'for the pipeline', scopes: ['read', 'write'] });
    expect(api_key.rate_limit_per_hour).toBe(500);
    expect(api_key.key).toMatch(/^svc_sk_live_[A-Za-z0-9_-]{43,}$/);
    expect(Buffer.from(api_key.key.slice('svc_sk_live_'.length), 'base64url').length).toBeGreaterThanOrEqual(
      32,
    );
    expect(api_key.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(api_key.created_at).toISOString()).toBe(api_key.created_at);
    expect(res.headers.get('location')).toBe(`/v1/api-keys/${api_key.id}`);

    const row = await t.ctx.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', api_key.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(api_key.key);
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.prefix).toBe(api_key.key.slice(0, 16));
    expect(row.last4).toBe(api_key.key.slice(-4));

    const read = await (await t.call('GET', `/v1/api-keys/${api_key.id}`, { token: acc.key })).json();
    expect(read.api_key).not.toHaveProperty('key');
    expect(read.api_key).toMatchObject({ prefix: row.prefix, last4: row.last4, status: 'active' });
    // the new key works
    expect((await t.call('GET', '/v1/me', { token: api_key.key })).status).toBe(200);
  });

  it('creates publishable keys with their fixed scopes and allowed domains', async () => {
    const acc = await t.account();
    const res = await t.call('POST', '/v1/api-keys', {
      token: acc.key,
      body: { name: 'Widget', key_type: 'publishable', allowed_domains: ['Example.com'] },
    });
    expect(res.status).toBe(201);
    const { api_key } = await res.json();
    expect(api_key.key).toMatch(/^svc_pk_live_/);
    expect(api_key.scopes).toEqual(['read:availability', 'create:booking']);
    expect(api_key.allowed_domains).toEqual(['example.com']);
  });

  it('rejects bad input with field messages and writes nothing', async () => {
    const acc = await t.account({ plan: 'free' });
    const before = await t.ctx.db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', acc.id)
      .execute();
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x', scopes: ['admin'] }, 'scopes.0'],
      [{ name: 'x', scopes: ['create:booking'] }, 'scopes'],
      [{ name: 'x', key_type: 'publishable', allowed_domains: [' example.com'] }, 'allowed_domains.0'],
      [{ name: 'x', rate_limit_per_hour: 0 }, 'rate_limit_per_hour'],
      [{ name: 'x', rate_limit_per_hour: 5000 }, 'rate_limit_per_hour'],
      [
        { name: 'x', key_type: 'publishable', allowed_domains: ['https://example.com/'] },
        'allowed_domains.0',
      ],
      [{ name: 'x', allowed_domains: ['example.com'] }, 'allowed_domains'],
      [{ name: 'x', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ name: 'x', colour: 'red' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const res = await t.call('POST', '/v1/api-keys', { token: acc.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const p = await res.json();
      expect(p.errors, JSON.stringify(body)).toHaveProperty([field]);
    }
    const after = await t.ctx.db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', acc.id)
      .execute();
    expect(after.length).toBe(before.length);
  });

  it('lists keys newest first with cursor pagination, never showing secrets', async () => {
    const acc = await t.account();
    for (let i = 0; i < 4; i++) {
      await t.call('POST', '/v1/api-keys', { token: acc.key, body: { name: `k${i}` } });
    }
    const first = await (await t.call('GET', '/v1/api-keys?limit=2', { token: acc.key })).json();
    expect(first.api_keys.map((k: { name: string }) => k.name)).toEqual(['k3', 'k2']);
    expect(first.pagination.has_more).toBe(true);
    const second = await (
      await t.call('GET', `/v1/api-keys?limit=2&cursor=${first.pagination.next_cursor}`, { token: acc.key })
    ).json();
    expect(second.api_keys.map((k: { name: string }) => k.name)).toEqual(['k1', 'k0']);
    const third = await (
      await t.call('GET', `/v1/api-keys?limit=2&cursor=${second.pagination.next_cursor}`, { token: acc.key })
    ).json();
    expect(third.api_keys.map((k: { name: string }) => k.name)).toEqual(['Default secret key']);
    expect(third.pagination).toEqual({ next_cursor: null, has_more: false });
    expect(JSON.stringify([first, second, third])).not.toMatch(/svc_sk_live_[A-Za-z0-9_-]{20,}/);
    expect((await t.call('GET', '/v1/api-keys?cursor=garbage', { token: acc.key })).status).toBe(400);
  });

  it('revokes a key: 401 at once, and the final state is returned', async () => {
    const acc = await t.account();
    const created = await (
      await t.call('POST', '/v1/api-keys', { token: acc.key, body: { name: 'tmp' } })
    ).json();
    const key = created.api_key.key;
    expect((await t.call('GET', '/v1/me', { token: key })).status).toBe(200);
    const del = await t.call('DELETE', `/v1/api-keys/${created.api_key.id}`, { token: acc.key });
    expect(del.status).toBe(200);
    const body = await del.json();
    expect(body.api_key.status).toBe('revoked');
    expect(body.api_key.revoked_at).not.toBeNull();
    const after = await t.call('GET', '/v1/me', { token: key });
    expect(after.status).toBe(401);
    expect((await after.json()).detail).toBe('This API key was revoked');
  });

  it("does not reveal or touch another account's keys", async () => {
    const a = await t.account();
    const b = await t.account();
    const bKeys = await (await t.call('GET', '/v1/api-keys', { token: b.key })).json();
    const id = bKeys.api_keys[0].id;
    expect((await t.call('GET', `/v1/api-keys/${id}`, { token: a.key })).status).toBe(404);
    expect((await t.call('DELETE', `/v1/api-keys/${id}`, { token: a.key })).status).toBe(404);
    expect((await t.call('GET', `/v1/me`, { token: b.key })).status).toBe(200);
    expect((await t.call('GET', '/v1/api-keys/not-a-uuid', { token: a.key })).status).toBe(400);
  });

  it('reports usage stats per key', async () => {
    const acc = await t.account();
    const created = await (
      await t.call('POST', '/v1/api-keys', {
        token: acc.key,
        body: { name: 'stats', rate_limit_per_hour: 1000 },
      })
    ).json();
    const key = created.api_key.key;
    for (let i = 0; i < 3; i++) await t.call('GET', '/v1/me', { token: key });
    await t.call('GET', '/v1/api-keys/00000000-0000-0000-0000-000000000000', { token: key });
    const res = await t.call('GET', `/v1/api-keys/${created.api_key.id}/stats?window=hour`, {
      token: acc.key,
    });
    expect(res.status).toBe(200);
    const { stats } = await res.json();
    expect(stats).toMatchObject({
      key_id: created.api_key.id,
      window: 'hour',
      requests: 4,
      rate_limited: 0,
      by_status: { '2xx': 3, '4xx': 1, '5xx': 0 },
      rate_limit_per_hour: 1000,
      remaining: 996,
    });
    expect(stats.last_used_at).not.toBeNull();
    expect(stats.series).toEqual([{ start: stats.window_start, requests: 4, rate_limited: 0 }]);
    const year = await t.call('GET', `/v1/api-keys/${created.api_key.id}/stats?window=year`, {
      token: acc.key,
    });
    expect(year.status).toBe(400);
    // The message names the values the field takes.
    expect((await year.json()).errors).toEqual({ window: 'must be one of: hour, day, week' });
  });

  it('answers the day window as 24 hourly entries, oldest first, with zeros for quiet hours', async () => {
    const acc = await t.account();
    const hour = 3_600_000;
    const threeHoursAgo = new Date((Math.floor(Date.now() / hour) - 3) * hour);
    await t.ctx.db
      .insertInto('api_key_usage')
      .values({
        key_id: acc.keyId,
        bucket: threeHoursAgo,
        requests: 7,
        rate_limited: 2,
        s2xx: 5,
        s4xx: 2,
        s5xx: 0,
        last_used_at: threeHoursAgo,
      })
      .execute();
    const res = await t.call('GET', `/v1/api-keys/${acc.keyId}/stats?window=day`, { token: acc.key });
    expect(res.status).toBe(200);
    const { stats } = await res.json();
    expect(stats.series).toHaveLength(24);
    expect(stats.series[0].start).toBe(stats.window_start);
    const starts = stats.series.map((e: { start: string }) => Date.parse(e.start));
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBe(hour);
    expect(stats.series[20]).toEqual({ start: threeHoursAgo.toISOString(), requests: 7, rate_limited: 2 });
    // The request that asked counts in the current hour once the recorder flushes; earlier hours are zeros.
    expect(stats.series.filter((e: { requests: number }) => e.requests > 0).length).toBeLessThanOrEqual(2);
    expect(stats.requests).toBe(
      stats.series.reduce((n: number, e: { requests: number }) => n + e.requests, 0),
    );
  });

  it('lets only secret keys with the write scope create keys', async () => {
    const acc = await t.account();
    const ro = await (
      await t.call('POST', '/v1/api-keys', { token: acc.key, body: { name: 'ro', scopes: ['read'] } })
    ).json();
    expect((await t.call('GET', '/v1/api-keys', { token: ro.api_key.key })).status).toBe(200);
    const denied = await t.call('POST', '/v1/api-keys', { token: ro.api_key.key, body: { name: 'x' } });
    expect(denied.status).toBe(403);
    expect((await denied.json()).type).toMatch(/\/errors\/forbidden$/);
  });
});

// Its own app on a FakeClock, so the key expires when the clock moves past it rather than after a real
// wait; the tests above keep real time (listings order keys by their distinct creation instants).
describe('API key expiry', () => {
  const { clock, t: clocked } = clockedApp();

  it('rejects expired keys', async () => {
    const acc = await clocked.account();
    const soon = new Date(clock.nowMs() + 1500).toISOString();
    const res = await clocked.call('POST', '/v1/api-keys', {
      token: acc.key,
      body: { name: 'short', expires_at: soon },
    });
    const { api_key } = await res.json();
    expect((await clocked.call('GET', '/v1/me', { token: api_key.key })).status).toBe(200);
    clock.advance(1499);
    expect((await clocked.call('GET', '/v1/me', { token: api_key.key })).status).toBe(200);
    clock.advance(1);
    const expired = await clocked.call('GET', '/v1/me', { token: api_key.key });
    expect(expired.status).toBe(401);
    expect((await expired.json()).detail).toBe('This API key has expired');
  });
});
