/**
 * Hosts and schedules in test mode (docs/api.md#test-mode): a host belongs to the mode of the key that
 * made it, and a caller of the other mode sees it as it sees another account's host (404, absent from
 * lists, a stranger to the schedule routes and to every access check); the account's own principal is
 * shared, readable from test mode, and changed only from live mode (403 `live_mode_only`).
 */
import { describe, expect, it } from 'vitest';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import { newHost } from '../../../test/helpers/fixtures.js';
import { advanceTestClock, testKeyFor } from '../../../test/helpers/test-mode.js';
import { DEFAULT_SCHEDULE } from '../../lib/schedule.js';
import type { Caller } from '../../platform/auth.js';

const { t } = clockedApp({ at: '2026-06-01T12:00:00.000Z' });

/** A live key, a test key of the same account, and a host made with each. */
async function world() {
  const acc = await t.account();
  const test = (await testKeyFor(t, acc.key)).key;
  const liveHost = await newHost(t, { token: acc.key }, { display_name: 'Live host' });
  const testHost = await newHost(t, { token: test }, { display_name: 'Test host' });
  return { acc, test, liveHost, testHost };
}

const HOURS = { weekly: [{ day: 'mon', start: '10:00', end: '12:00' }] };

describe('hosts in test mode', () => {
  it('makes a host in the key’s mode and shows `livemode` on it', async () => {
    const { acc, test, liveHost, testHost } = await world();
    const live = await (await t.call('GET', `/v1/hosts/${liveHost}`, { token: acc.key })).json();
    expect(live.host).toMatchObject({ id: liveHost, livemode: true, display_name: 'Live host' });
    const mine = await (await t.call('GET', `/v1/hosts/${testHost}`, { token: test })).json();
    expect(mine.host).toMatchObject({ id: testHost, livemode: false, display_name: 'Test host' });
    const rows = await t.ctx.db
      .selectFrom('principals')
      .select(['id', 'livemode'])
      .where('account_id', '=', acc.id)
      .where('kind', '=', 'host')
      .execute();
    expect(new Map(rows.map((r) => [r.id, r.livemode]))).toEqual(
      new Map([
        [liveHost, true],
        [testHost, false],
      ]),
    );
  });

  it('keeps each mode’s hosts from the other mode’s key both ways: 404 on read, patch and delete, absent from lists', async () => {
    const { acc, test, liveHost, testHost } = await world();
    for (const [token, theirs, own] of [
      [acc.key, testHost, liveHost],
      [test, liveHost, testHost],
    ] as const) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { display_name: 'Taken over' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await t.call(method, `/v1/hosts/${theirs}`, { token, body });
        expect(res.status, `${method} from the other mode`).toBe(404);
        expect((await res.json()).type).toMatch(/\/errors\/not-found$/);
      }
      const list = await (await t.call('GET', '/v1/hosts', { token })).json();
      expect(list.hosts.map((h: { id: string }) => h.id)).toEqual([own]);
    }
    // nothing changed: each is still itself, in its own mode
    const live = await (await t.call('GET', `/v1/hosts/${liveHost}`, { token: acc.key })).json();
    expect(live.host).toMatchObject({ display_name: 'Live host', status: 'active' });
    const mine = await (await t.call('GET', `/v1/hosts/${testHost}`, { token: test })).json();
    expect(mine.host).toMatchObject({ display_name: 'Test host', status: 'active' });
  });

  it('lets a test key update and delete its test host', async () => {
    const { test, testHost } = await world();
    const patched = await t.call('PATCH', `/v1/hosts/${testHost}`, {
      token: test,
      body: { timezone: 'Europe/Paris' },
    });
    expect(patched.status).toBe(200);
    expect((await patched.json()).host).toMatchObject({ timezone: 'Europe/Paris', livemode: false });
    const deleted = await t.call('DELETE', `/v1/hosts/${testHost}`, { token: test });
    expect(deleted.status).toBe(200);
    expect((await deleted.json()).host).toMatchObject({ status: 'deleted', livemode: false });
    expect((await (await t.call('GET', '/v1/hosts', { token: test })).json()).hosts).toEqual([]);
  });

  it('stamps a test host with the test clock’s time', async () => {
    const acc = await t.account();
    const test = (await testKeyFor(t, acc.key)).key;
    const clock = await advanceTestClock(t, test, 3 * 86_400);
    const res = await t.call('POST', '/v1/hosts', { token: test, body: { display_name: 'Later' } });
    const { host } = await res.json();
    const skew = Date.parse(host.created_at) - Date.parse(clock.now);
    expect(skew).toBeGreaterThanOrEqual(0);
    expect(skew).toBeLessThan(60_000);
    expect(host.updated_at).toBe(host.created_at);
  });
});

describe('schedules in test mode', () => {
  it('treats a host of the other mode as a stranger: its schedule is 403 both ways, nothing changed', async () => {
    const { acc, test, liveHost, testHost } = await world();
    for (const [token, theirs] of [
      [acc.key, testHost],
      [test, liveHost],
    ] as const) {
      const read = await t.call('GET', `/v1/principals/${theirs}/schedule`, { token });
      expect(read.status).toBe(403);
      expect((await read.json()).type).toMatch(/\/errors\/forbidden$/);
      const put = await t.call('PUT', `/v1/principals/${theirs}/schedule`, { token, body: HOURS });
      expect(put.status).toBe(403);
    }
    expect(
      await t.ctx.db
        .selectFrom('schedules')
        .select('principal_id')
        .where('principal_id', 'in', [liveHost, testHost])
        .execute(),
    ).toEqual([]);
  });

  it('lets a test key read and write its test host’s schedule', async () => {
    const { test, testHost } = await world();
    const put = await t.call('PUT', `/v1/principals/${testHost}/schedule`, { token: test, body: HOURS });
    expect(put.status).toBe(200);
    const read = await (await t.call('GET', `/v1/principals/${testHost}/schedule`, { token: test })).json();
    expect(read.schedule.weekly).toEqual(HOURS.weekly);
  });

  it('lets a test key read the account’s own schedule but not change it (403 live_mode_only, nothing changed)', async () => {
    const { acc, test } = await world();
    const read = await t.call('GET', `/v1/principals/${acc.id}/schedule`, { token: test });
    expect(read.status).toBe(200);
    expect((await read.json()).schedule).toEqual(DEFAULT_SCHEDULE('UTC'));

    const put = await t.call('PUT', `/v1/principals/${acc.id}/schedule`, { token: test, body: HOURS });
    expect(put.status).toBe(403);
    const problem = await put.json();
    expect(problem).toMatchObject({ code: 'live_mode_only' });
    expect(problem.type).toMatch(/\/errors\/forbidden$/);
    const after = await (await t.call('GET', `/v1/principals/${acc.id}/schedule`, { token: acc.key })).json();
    expect(after.schedule).toEqual(DEFAULT_SCHEDULE('UTC'));
    const rows = await t.ctx.db
      .selectFrom('schedules')
      .select('principal_id')
      .where('principal_id', '=', acc.id)
      .execute();
    expect(rows).toEqual([]);

    // the live key still changes it
    const live = await t.call('PUT', `/v1/principals/${acc.id}/schedule`, { token: acc.key, body: HOURS });
    expect(live.status).toBe(200);
  });

  it('documents live_mode_only on the schedule PUT', async () => {
    const doc = await (await t.call('GET', '/v1/openapi.json')).json();
    expect(JSON.stringify(doc.paths['/v1/principals/{id}/schedule'].put.responses['403'])).toContain(
      'live_mode_only',
    );
    expect(doc.components.schemas.Host.required).toContain('livemode');
  });
});

describe('principal look-ups by mode (the principals API)', () => {
  /** The caller a key of `mode` is, as other modules receive it. */
  const callerOf = (accountId: string, livemode: boolean): Caller => ({
    kind: 'secret',
    accountId,
    principalId: accountId,
    keyId: null,
    userId: null,
    sessionId: null,
    scopes: [],
    allowedDomains: [],
    rateLimit: 1000,
    rateSubject: 'key:x',
    account: null,
    livemode,
    clock: t.ctx.clock,
  });

  it('answers may-act-for, read decisions and managed-host checks in the caller’s mode only', async () => {
    const { acc, liveHost, testHost } = await world();
    const api = t.ctx.modules.principals;
    const live = callerOf(acc.id, true);
    const test = callerOf(acc.id, false);

    expect(await api.access.mayActFor(live, liveHost)).toBe(true);
    expect(await api.access.mayActFor(live, testHost)).toBe(false);
    expect(await api.access.mayActFor(test, testHost)).toBe(true);
    expect(await api.access.mayActFor(test, liveHost)).toBe(false);
    // the account's own principal is shared by both modes
    expect(await api.access.mayActFor(test, acc.id)).toBe(true);
    expect((await api.access.actingFor(test, acc.id))?.livemode).toBe(true);

    const decisions = await api.access.canReadMany(test, [acc.id, liveHost, testHost]);
    expect(decisions.get(acc.id)?.allowed).toBe(true);
    expect(decisions.get(testHost)).toMatchObject({ allowed: true, basis: 'managed_host' });
    expect(decisions.get(liveHost)?.allowed).toBe(false);
    const liveDecisions = await api.access.canReadMany(live, [liveHost, testHost]);
    expect(liveDecisions.get(liveHost)?.allowed).toBe(true);
    expect(liveDecisions.get(testHost)?.allowed).toBe(false);

    expect(await api.isManagedHost(acc.id, testHost, false)).toBe(true);
    expect(await api.isManagedHost(acc.id, testHost, true)).toBe(false);
    expect(await api.isManagedHost(acc.id, liveHost, false)).toBe(false);
    expect(await api.isManagedHost(acc.id, testHost)).toBe(true); // either mode (a signed link)
    expect(await api.hostMode(acc.id, testHost)).toBe(false);
    expect(await api.hostMode(acc.id, liveHost)).toBe(true);
    expect(await api.hostMode(acc.id, acc.id)).toBeNull();

    const all = await api.profiles([acc.id, liveHost, testHost]);
    expect(all.get(testHost)?.livemode).toBe(false);
    expect(
      [...(await api.profiles([acc.id, liveHost, testHost], { livemode: false })).keys()].sort(),
    ).toEqual([acc.id, testHost].sort());
    expect([...(await api.profiles([acc.id, liveHost, testHost], { livemode: true })).keys()].sort()).toEqual(
      [acc.id, liveHost].sort(),
    );
    const locked = await t.ctx.db
      .transaction()
      .execute((trx) => api.lockedProfiles(trx, [acc.id, liveHost, testHost], { livemode: false }));
    expect([...locked.profiles.keys()].sort()).toEqual([acc.id, testHost].sort());
    expect(locked.contacts.size).toBe(3);
  });
});
