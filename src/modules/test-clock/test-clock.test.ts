import { describe, expect, it } from 'vitest';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import { advanceTestClock, testKeyFor } from '../../../test/helpers/test-mode.js';

const { t, clock } = clockedApp({ at: '2026-06-01T12:00:00.000Z' });

describe('test keys and the test clock', () => {
  it('makes test keys with the test prefixes, and says the mode on the key and on /v1/me', async () => {
    const acc = await t.account();
    const secret = await t.call('POST', '/v1/api-keys', {
      token: acc.key,
      body: { name: 'CI', environment: 'test' },
    });
    expect(secret.status).toBe(201);
    const { api_key } = await secret.json();
    expect(api_key.key).toMatch(/^svc_sk_test_[A-Za-z0-9_-]{43,}$/);
    expect(api_key.environment).toBe('test');
    const pk = await (
      await t.call('POST', '/v1/api-keys', {
        token: acc.key,
        body: { name: 'Widget', key_type: 'publishable', environment: 'test' },
      })
    ).json();
    expect(pk.api_key.key).toMatch(/^svc_pk_test_/);

    const me = await (await t.call('GET', '/v1/me', { token: api_key.key })).json();
    expect(me).toMatchObject({ environment: 'test', account: { id: acc.id } });
    const live = await (await t.call('GET', '/v1/me', { token: acc.key })).json();
    expect(live.environment).toBe('live');
    const listed = await (await t.call('GET', '/v1/api-keys', { token: acc.key })).json();
    expect(listed.api_keys.map((k: { environment: string }) => k.environment).sort()).toEqual([
      'live',
      'test',
      'test',
    ]);
  });

  it('lets a test key make only test keys', async () => {
    const acc = await t.account();
    const test = await testKeyFor(t, acc.key);
    const asked = await t.call('POST', '/v1/api-keys', {
      token: test.key,
      body: { name: 'escalate', environment: 'live' },
    });
    expect(asked.status).toBe(403);
    expect((await asked.json()).code).toBe('live_mode_only');
    const made = await t.call('POST', '/v1/api-keys', { token: test.key, body: { name: 'another' } });
    expect((await made.json()).api_key.environment).toBe('test');
  });

  it('refuses a revoked test key', async () => {
    const acc = await t.account();
    const test = await testKeyFor(t, acc.key);
    expect((await t.call('GET', '/v1/test-clock', { token: test.key })).status).toBe(200);
    expect((await t.call('DELETE', `/v1/api-keys/${test.id}`, { token: acc.key })).status).toBe(200);
    const res = await t.call('GET', '/v1/test-clock', { token: test.key });
    expect(res.status).toBe(401);
  });

  it('shows the clock to test keys only, and moves it forward only, at most 400 days in all', async () => {
    const acc = await t.account();
    const test = await testKeyFor(t, acc.key);
    const live = await t.call('GET', '/v1/test-clock', { token: acc.key });
    expect(live.status).toBe(403);
    expect((await live.json()).code).toBe('test_mode_only');
    const liveAdvance = await t.call('POST', '/v1/test-clock/advance', {
      token: acc.key,
      body: { seconds: 60 },
    });
    expect(liveAdvance.status).toBe(403);

    const start = await (await t.call('GET', '/v1/test-clock', { token: test.key })).json();
    expect(start.test_clock).toEqual({ now: clock.now().toISOString(), offset_seconds: 0 });

    const moved = await advanceTestClock(t, test.key, 3600);
    expect(moved).toEqual({ now: new Date(clock.nowMs() + 3_600_000).toISOString(), offset_seconds: 3600 });
    const to = new Date(clock.nowMs() + 86_400_000).toISOString();
    const toRes = await t.call('POST', '/v1/test-clock/advance', { token: test.key, body: { to } });
    expect((await toRes.json()).test_clock).toEqual({ now: to, offset_seconds: 86_400 });

    for (const body of [
      { to: clock.now().toISOString() },
      { seconds: 0 },
      { seconds: 60, to },
      {},
      { seconds: 400 * 86_400 },
    ]) {
      const res = await t.call('POST', '/v1/test-clock/advance', { token: test.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    // Real time moving moves the test clock with it; the live clock never moves.
    clock.advance(60_000);
    const after = await (await t.call('GET', '/v1/test-clock', { token: test.key })).json();
    expect(after.test_clock.now).toBe(new Date(clock.nowMs() + 86_400_000).toISOString());
    const other = await t.account();
    const otherTest = await testKeyFor(t, other.key);
    const untouched = await (await t.call('GET', '/v1/test-clock', { token: otherTest.key })).json();
    expect(untouched.test_clock.offset_seconds).toBe(0);
  });

  it('runs two advances at once one after the other: both moves count', async () => {
    const acc = await t.account();
    const test = await testKeyFor(t, acc.key);
    const [a, b] = await Promise.all([
      advanceTestClock(t, test.key, 3600),
      advanceTestClock(t, test.key, 7200),
    ]);
    expect([a.offset_seconds, b.offset_seconds].sort((x, y) => x - y)).toEqual(
      a.offset_seconds === 3600 ? [3600, 10_800] : [7200, 10_800],
    );
    const now = await (await t.call('GET', '/v1/test-clock', { token: test.key })).json();
    expect(now.test_clock.offset_seconds).toBe(10_800);
  });
});
