import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { contributing } from '../../../test/helpers/modules.js';
import type { CalendarStatus } from './api.js';

let t: TestApp;
/** The calendar status a test module contributes, when a test sets one (besides the calendars module's). */
let calendarStatus: CalendarStatus | null = null;
beforeAll(async () => {
  t = await startTestApp({
    modules: [
      contributing('test-calendar-status', {
        calendarStatus: [
          { connected: async (ids) => (calendarStatus ? calendarStatus.connected(ids) : new Set()) },
        ],
      }),
    ],
  });
});
afterAll(() => t.close());

describe('hosts', () => {
  it('creates a host (201, Location, the documented shape) with the account’s zone by default', async () => {
    const acc = await t.account();
    const res = await t.call('POST', '/v1/hosts', {
      token: acc.key,
      body: { display_name: ' Dr. Ada ', email: 'ada@example.com' },
    });
    expect(res.status).toBe(201);
    const { host } = await res.json();
    expect(host).toMatchObject({
      display_name: 'Dr. Ada',
      email: 'ada@example.com',
      timezone: 'UTC',
      livemode: true,
      status: 'active',
      calendar_connected: false,
      deleted_at: null,
    });
    expect(host.principal_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    expect(host.id).toBe(host.principal_id);
    expect(new Date(host.created_at).toISOString()).toBe(host.created_at);
    expect(res.headers.get('location')).toBe(`/v1/hosts/${host.principal_id}`);
    const row = await t.ctx.db
      .selectFrom('principals')
      .selectAll()
      .where('id', '=', host.principal_id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'host', account_id: acc.id });
  });

  it('replays a create with the same Idempotency-Key instead of creating a second host', async () => {
    const acc = await t.account();
    const send = () =>
      t.call('POST', '/v1/hosts', {
        token: acc.key,
        body: { display_name: 'Bob', timezone: 'Europe/Paris' },
        headers: { 'idempotency-key': 'host-bob-1' },
      });
    const first = await send();
    const second = await send();
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.text()).toBe(await first.text());
    const list = await (await t.call('GET', '/v1/hosts', { token: acc.key })).json();
    expect(list.hosts).toHaveLength(1);
  });

  it('lists live hosts newest first with a cursor', async () => {
    const acc = await t.account();
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      const res = await t.call('POST', '/v1/hosts', { token: acc.key, body: { display_name: name } });
      ids.push((await res.json()).host.principal_id);
    }
    const p1 = await (await t.call('GET', '/v1/hosts?limit=2', { token: acc.key })).json();
    expect(p1.hosts.map((h: { display_name: string }) => h.display_name)).toEqual(['c', 'b']);
    expect(p1.pagination.has_more).toBe(true);
    const p2 = await (
      await t.call('GET', `/v1/hosts?limit=2&cursor=${p1.pagination.next_cursor}`, { token: acc.key })
    ).json();
    expect(p2.hosts.map((h: { display_name: string }) => h.display_name)).toEqual(['a']);
    expect(p2.pagination).toEqual({ next_cursor: null, has_more: false });
    // another account sees none of them
    const other = await t.account();
    const theirs = await (await t.call('GET', '/v1/hosts', { token: other.key })).json();
    expect(theirs.hosts).toEqual([]);
  });

  it('reads, updates and soft-deletes a host', async () => {
    const acc = await t.account();
    const { host } = await (
      await t.call('POST', '/v1/hosts', { token: acc.key, body: { display_name: 'Cy' } })
    ).json();
    const path = `/v1/hosts/${host.principal_id}`;
    expect((await (await t.call('GET', path, { token: acc.key })).json()).host).toEqual(host);

    const patched = await t.call('PATCH', path, {
      token: acc.key,
      body: { display_name: 'Cyrus', timezone: 'Asia/Kolkata', email: 'cy@example.com' },
    });
    expect(patched.status).toBe(200);
    expect((await patched.json()).host).toMatchObject({
      display_name: 'Cyrus',
      timezone: 'Asia/Kolkata',
      email: 'cy@example.com',
    });
    const cleared = await t.call('PATCH', path, { token: acc.key, body: { email: null } });
    expect((await cleared.json()).host.email).toBeNull();

    const bad = await t.call('PATCH', path, {
      token: acc.key,
      body: { timezone: 'Mars/Olympus', display_name: ' ' },
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors).toEqual({
      timezone: 'must be a valid IANA time zone',
      display_name: 'must not be empty',
    });

    const del = await t.call('DELETE', path, { token: acc.key });
    expect(del.status).toBe(200);
    const gone = (await del.json()).host;
    expect(gone.status).toBe('deleted');
    expect(gone.deleted_at).not.toBeNull();
    expect((await t.call('GET', path, { token: acc.key })).status).toBe(404);
    expect((await t.call('DELETE', path, { token: acc.key })).status).toBe(404);
    expect((await t.call('PATCH', path, { token: acc.key, body: { display_name: 'x' } })).status).toBe(404);
    const list = await (await t.call('GET', '/v1/hosts', { token: acc.key })).json();
    expect(list.hosts).toEqual([]);
  });

  it('rejects bad bodies with field messages', async () => {
    const acc = await t.account();
    const cases: [unknown, string][] = [
      [{}, 'display_name'],
      [{ display_name: '' }, 'display_name'],
      [{ display_name: 'x', email: 'not-an-email' }, 'email'],
      [{ display_name: 'x', timezone: 'Nowhere/Land' }, 'timezone'],
      [{ display_name: 'x', colour: 'red' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const res = await t.call('POST', '/v1/hosts', { token: acc.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      const problem = await res.json();
      expect(problem.type).toMatch(/\/errors\/validation-error$/);
      expect(Object.keys(problem.errors), JSON.stringify(body)).toContain(field);
    }
    const patch = await t.call('PATCH', '/v1/hosts/not-a-uuid', {
      token: acc.key,
      body: { display_name: 'x' },
    });
    expect(patch.status).toBe(400);
  });

  it('reports calendar_connected through the statuses modules contribute', async () => {
    const acc = await t.account();
    const { host } = await (
      await t.call('POST', '/v1/hosts', { token: acc.key, body: { display_name: 'Di' } })
    ).json();
    const asked: string[][] = [];
    calendarStatus = {
      async connected(ids) {
        asked.push([...ids]);
        return new Set(ids.filter((id) => id === host.principal_id));
      },
    };
    try {
      const read = await (await t.call('GET', `/v1/hosts/${host.principal_id}`, { token: acc.key })).json();
      expect(read.host.calendar_connected).toBe(true);
      await t.call('POST', '/v1/hosts', { token: acc.key, body: { display_name: 'Ed' } });
      const list = await (await t.call('GET', '/v1/hosts', { token: acc.key })).json();
      expect(list.hosts.map((h: { calendar_connected: boolean }) => h.calendar_connected)).toEqual([
        false,
        true,
      ]);
      expect(asked.at(-1)).toHaveLength(2); // one call for the whole page
    } finally {
      calendarStatus = null;
    }
  });
});
