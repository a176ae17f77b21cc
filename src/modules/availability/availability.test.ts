import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { clip, type Interval, normalize } from '../../lib/intervals.js';
import { FakeClock } from '../../platform/clock.js';
import { ServiceUnavailable } from '../../platform/errors.js';
import { contributing } from '../../../test/helpers/modules.js';
import type { AccessRule } from '../principals/api.js';
import type { BusyAnswer, BusyOptions, BusySource } from './busy-source.js';
import { newHost } from '../../../test/helpers/fixtures.js';

/**
 * In-memory busy source FOR TESTS ONLY: busy time per principal, plus stale and failing switches. With
 * `whole` (the default) it answers as the real sources do, with its whole list (the same array while
 * the principal's list is unchanged), so slots come from remembered days (days.ts); without, with a
 * new cut list each time, so every answer is computed.
 */
class MemorySource implements BusySource {
  readonly busyBy = new Map<string, Interval[]>();
  readonly stale = new Set<string>();
  readonly failing = new Set<string>();
  whole = true;
  private readonly normalized = new WeakMap<Interval[], Interval[]>();
  constructor(readonly name: 'calendar' | 'booking') {}
  async busy(principalId: string, window: Interval, opts: BusyOptions = {}): Promise<BusyAnswer | null> {
    if (this.failing.has(principalId)) throw new ServiceUnavailable('The calendar provider is unreachable');
    const list = this.busyBy.get(principalId);
    if (!list) return null;
    const stale = this.stale.has(principalId);
    if (!this.whole) return { intervals: clip(normalize(list), window), stale, asOf: 0 };
    let all = this.normalized.get(list);
    if (all === undefined) {
      all = normalize(list);
      this.normalized.set(list, all);
    }
    const whole = { intervals: all, start: -Infinity, end: Infinity };
    return { intervals: opts.unclipped ? all : clip(all, window), whole, stale, asOf: 0 };
  }
}

const at = (iso: string) => Date.parse(iso);
const span = (a: string, b: string): Interval => ({ start: at(a), end: at(b) });

let t: TestApp;
const calendar = new MemorySource('calendar');
const bookings = new MemorySource('booking');
// Sunday 2026-03-01 00:00 UTC: the week of the US spring-forward change (Sunday 2026-03-08).
const clock = new FakeClock('2026-03-01T00:00:00.000Z');

/** An access grant as the network or consents modules will contribute, when a test sets one. */
let grant: AccessRule | null = null;

beforeAll(async () => {
  t = await startTestApp({
    clock,
    modules: [
      contributing('test-sources', {
        busySources: [calendar, bookings],
        accessGrants: [(caller, input) => (grant ? grant(caller, input) : Promise.resolve(new Map()))],
      }),
    ],
  });
});
afterAll(() => t.close());

async function host(token: string, body: Record<string, unknown> = {}, busy: Interval[] | null = []) {
  const id = await newHost(t, { token }, body);
  if (busy) calendar.busyBy.set(id, busy);
  return id;
}

function get(path: string, token: string | undefined, query: Record<string, string | number | boolean>) {
  const qs = new URLSearchParams(
    Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString();
  return t.call('GET', `${path}?${qs}`, { token });
}

const starts = (slots: { start: string }[]) => slots.map((s) => s.start);

describe('GET /v1/availability/slots', () => {
  it('computes DST-correct slots in the host’s zone (America/New_York, 2026-03-08)', async () => {
    const acc = await t.account();
    const id = await host(acc.key, { timezone: 'America/New_York' });
    await t.call('PUT', `/v1/principals/${id}/schedule`, {
      token: acc.key,
      body: {
        weekly: [
          { day: 'fri', start: '09:00', end: '17:00' },
          { day: 'sun', start: '00:00', end: '05:00' },
          { day: 'mon', start: '09:00', end: '17:00' },
        ],
      },
    });
    const query = {
      business_id: id,
      duration_minutes: 60,
      from: '2026-03-06T00:00:00Z',
      to: '2026-03-10T00:00:00-00:00',
    };
    const res = await get('/v1/availability/slots', acc.key, query);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      principal_id: id,
      duration_minutes: 60,
      timezone: 'America/New_York',
      stale: false,
    });
    const s = starts(body.slots);
    // Friday 09:00 EST = 14:00Z; the last 60-minute slot starts 16:00 EST = 21:00Z.
    expect(s[0]).toBe('2026-03-06T14:00:00.000Z');
    expect(s).toContain('2026-03-06T21:00:00.000Z');
    expect(s).not.toContain('2026-03-06T21:15:00.000Z');
    // Sunday 00:00 EST = 05:00Z to 05:00 EDT = 09:00Z: four real hours despite the skipped 02:00-03:00.
    const sunday = s.filter((x: string) => x.startsWith('2026-03-08'));
    expect(sunday[0]).toBe('2026-03-08T05:00:00.000Z');
    expect(sunday.at(-1)).toBe('2026-03-08T08:00:00.000Z');
    expect(sunday).toHaveLength(13);
    // Monday 09:00 EDT = 13:00Z (an hour earlier in UTC than on Friday).
    expect(s).toContain('2026-03-09T13:00:00.000Z');
    expect(s).not.toContain('2026-03-09T12:45:00.000Z');
    expect(
      body.slots.every((x: { start: string; end: string }) => at(x.end) - at(x.start) === 3_600_000),
    ).toBe(true);
    expect(s).toHaveLength(29 + 13 + 29);

    // Another display zone changes labels and grouping, never the slots.
    const tokyo = await (
      await get('/v1/availability/slots', acc.key, { ...query, timezone: 'Asia/Tokyo' })
    ).json();
    expect(tokyo.timezone).toBe('Asia/Tokyo');
    expect(tokyo.slots).toEqual(body.slots);
    const byDay = async (timezone: string) =>
      (await get('/v1/availability/slots', acc.key, { ...query, timezone, group_by_day: true })).json();
    const ny = await byDay('America/New_York');
    expect(ny.slots).toBeUndefined();
    expect(ny.days.map((d: { date: string }) => d.date)).toEqual(['2026-03-06', '2026-03-08', '2026-03-09']);
    const jp = await byDay('Asia/Tokyo');
    expect(jp.days.map((d: { date: string }) => d.date)).toEqual([
      '2026-03-06',
      '2026-03-07',
      '2026-03-08',
      '2026-03-09',
      '2026-03-10',
    ]);
    const flat = (days: { slots: unknown[] }[]) => days.flatMap((d) => d.slots);
    expect(flat(ny.days)).toEqual(body.slots);
    expect(flat(jp.days)).toEqual(body.slots);
  });

  it('keeps slots clear of calendar and booking busy time, with buffers and slot_interval', async () => {
    const acc = await t.account();
    const id = await host(acc.key, { timezone: 'UTC' }, [
      span('2026-03-02T10:00:00Z', '2026-03-02T11:00:00Z'),
    ]);
    bookings.busyBy.set(id, [span('2026-03-02T13:00:00Z', '2026-03-02T14:00:00Z')]);
    const query = {
      principal_id: id,
      duration_minutes: 30,
      slot_interval: 30,
      from: '2026-03-02T00:00:00Z',
      to: '2026-03-03T00:00:00Z',
    };
    const plain = await (await get('/v1/availability/slots', acc.key, query)).json();
    expect(starts(plain.slots).map((x: string) => x.slice(11, 16))).toEqual([
      '09:00',
      '09:30',
      '11:00',
      '11:30',
      '12:00',
      '12:30',
      '14:00',
      '14:30',
      '15:00',
      '15:30',
      '16:00',
      '16:30',
    ]);
    const buffered = await (await get('/v1/availability/slots', acc.key, { ...query, buffer: 15 })).json();
    expect(starts(buffered.slots).map((x: string) => x.slice(11, 16))).toEqual([
      '09:00',
      '11:30',
      '12:00',
      '14:30',
      '15:00',
      '15:30',
      '16:00',
      '16:30',
    ]);
    // A busy block just before the window still pushes the first slot away through the buffer.
    calendar.busyBy.set(id, [span('2026-03-02T08:00:00Z', '2026-03-02T09:00:00Z')]);
    const edge = await (
      await get('/v1/availability/slots', acc.key, {
        ...query,
        from: '2026-03-02T09:00:00Z',
        to: '2026-03-02T10:00:00Z',
        buffer: 30,
      })
    ).json();
    expect(starts(edge.slots)).toEqual(['2026-03-02T09:30:00.000Z']);
    // The past has no slots.
    const past = await (
      await get('/v1/availability/slots', acc.key, {
        ...query,
        from: '2026-02-23T00:00:00Z',
        to: '2026-02-28T00:00:00Z',
      })
    ).json();
    expect(past.slots).toEqual([]);
  });

  it('answers new questions from remembered days exactly as computing each would (DST week, buffers, bookings)', async () => {
    const acc = await t.account();
    const id = await host(acc.key, { timezone: 'America/New_York' }, [
      span('2026-03-06T14:10:00Z', '2026-03-06T15:00:00Z'),
      span('2026-03-08T06:00:00Z', '2026-03-08T07:20:00Z'),
      span('2026-03-09T13:00:00Z', '2026-03-09T13:05:00Z'),
      span('2026-03-10T20:45:00Z', '2026-03-11T14:30:00Z'),
    ]);
    bookings.busyBy.set(id, [span('2026-03-09T15:00:00Z', '2026-03-09T16:00:00Z')]);
    await t.call('PUT', `/v1/principals/${id}/schedule`, {
      token: acc.key,
      body: {
        weekly: [
          { day: 'fri', start: '09:00', end: '17:00' },
          { day: 'sun', start: '00:00', end: '05:00' },
          { day: 'mon', start: '08:00', end: '23:30' },
          { day: 'tue', start: '12:00', end: '24:00' },
          { day: 'wed', start: '00:00', end: '10:00' },
        ],
        buffer_before_minutes: 10,
        buffer_after_minutes: 5,
      },
    });
    const questions = [0, 7, 59, 61, 24 * 60 + 13, 2 * 24 * 60 + 1, 6 * 24 * 60 + 30].flatMap((m) =>
      [
        { duration_minutes: 30 } as Record<string, number>,
        { duration_minutes: 45, slot_interval: 20, buffer: 15 },
        { duration_minutes: 240, slot_interval: 90 },
      ].map((q) => ({
        ...q,
        principal_id: id,
        from: new Date(at('2026-03-05T00:00:00Z') + m * 60_000).toISOString(),
        to: new Date(at('2026-03-12T00:00:00Z') + m * 30_000).toISOString(),
      })),
    );
    const ask = async () => {
      const bodies: string[] = [];
      for (const q of questions) {
        const res = await get('/v1/availability/slots', acc.key, q);
        expect(res.status).toBe(200);
        bodies.push(await res.text());
      }
      return bodies;
    };
    const fromDays = await ask();
    calendar.whole = false;
    bookings.whole = false;
    try {
      expect(await ask()).toEqual(fromDays);
    } finally {
      calendar.whole = true;
      bookings.whole = true;
    }
    expect(fromDays.some((b) => JSON.parse(b).slots.length > 20)).toBe(true);
  });

  it('answers 404 not-found when the principal has no connected calendar', async () => {
    const acc = await t.account();
    const id = await host(acc.key, {}, null);
    const res = await get('/v1/availability/slots', acc.key, {
      business_id: id,
      from: '2026-03-02T00:00:00Z',
      to: '2026-03-03T00:00:00Z',
    });
    expect(res.status).toBe(404);
    const problem = await res.json();
    expect(problem.type).toMatch(/\/errors\/not-found$/);
    expect(problem.code).toBe('calendar_not_connected');
    expect(problem.detail).toMatch(/no connected calendar/);
    const next = await get('/v1/availability/next', acc.key, { business_id: id });
    expect(next.status).toBe(404);
    const blocks = await get(`/v1/principals/${id}/availability`, acc.key, {
      from: '2026-03-02T00:00:00Z',
      to: '2026-03-03T00:00:00Z',
    });
    expect(blocks.status).toBe(404);
  });

  it('flags stale answers, and answers 503 when a source has nothing to offer', async () => {
    const acc = await t.account();
    const id = await host(acc.key);
    const query = { business_id: id, from: '2026-03-02T00:00:00Z', to: '2026-03-03T00:00:00Z' };
    calendar.stale.add(id);
    const stale = await (await get('/v1/availability/slots', acc.key, query)).json();
    expect(stale.stale).toBe(true);
    expect(stale.slots.length).toBeGreaterThan(0);
    calendar.stale.delete(id);
    expect((await (await get('/v1/availability/slots', acc.key, query)).json()).stale).toBe(false);

    calendar.failing.add(id);
    const res = await get('/v1/availability/slots', acc.key, query);
    expect(res.status).toBe(503);
    expect((await res.json()).type).toMatch(/\/errors\/service-unavailable$/);
    expect(res.headers.get('retry-after')).toBeTruthy();
    expect((await get('/v1/availability/next', acc.key, { business_id: id })).status).toBe(503);
    calendar.failing.delete(id);
    // a failing booking source is no more "all free" than a failing calendar
    bookings.failing.add(id);
    expect((await get('/v1/availability/slots', acc.key, query)).status).toBe(503);
    bookings.failing.delete(id);
  });
});

describe('GET /v1/availability/next', () => {
  it('finds the first bookable slot from now or from `after`, or null', async () => {
    const acc = await t.account();
    const id = await host(acc.key, { timezone: 'UTC' }, [
      span('2026-03-03T09:00:00Z', '2026-03-03T12:00:00Z'),
    ]);
    const fromNow = await (await get('/v1/availability/next', acc.key, { business_id: id })).json();
    expect(fromNow).toMatchObject({ principal_id: id, duration_minutes: 30, timezone: 'UTC', stale: false });
    expect(fromNow.slot).toEqual({ start: '2026-03-02T09:00:00.000Z', end: '2026-03-02T09:30:00.000Z' });
    const after = await (
      await get('/v1/availability/next', acc.key, { business_id: id, after: '2026-03-02T09:10:00Z' })
    ).json();
    expect(after.slot.start).toBe('2026-03-02T09:15:00.000Z');
    const busy = await (
      await get('/v1/availability/next', acc.key, {
        principal_id: id,
        after: '2026-03-03T08:00:00+00:00',
        duration_minutes: 60,
      })
    ).json();
    expect(busy.slot.start).toBe('2026-03-03T12:00:00.000Z');
    const none = await (
      await get('/v1/availability/next', acc.key, {
        business_id: id,
        after: '2026-03-07T00:00:00Z',
        days_ahead: 2,
      })
    ).json();
    expect(none.slot).toBeNull();
    // far away (past the first day and the first week it looks at), and the same as the first of `slots`
    calendar.busyBy.set(id, [span('2026-03-02T00:00:00Z', '2026-03-11T09:30:00Z')]);
    const far = await (
      await get('/v1/availability/next', acc.key, { business_id: id, after: '2026-03-02T00:00:00Z' })
    ).json();
    expect(far.slot.start).toBe('2026-03-11T09:30:00.000Z');
    const all = await (
      await get('/v1/availability/slots', acc.key, {
        business_id: id,
        from: '2026-03-02T00:00:00Z',
        to: '2026-03-16T00:00:00Z',
      })
    ).json();
    expect(all.slots[0]).toEqual(far.slot);
  });
});

describe('GET /v1/availability/mutual', () => {
  it('finds slots free for every principal and says on what basis each was readable', async () => {
    const acc = await t.account();
    calendar.busyBy.set(acc.id, [span('2026-03-02T09:00:00Z', '2026-03-02T10:00:00Z')]);
    const b = await host(acc.key, { timezone: 'UTC' }, [
      span('2026-03-02T10:00:00Z', '2026-03-02T11:00:00Z'),
    ]);
    const query = {
      principal_ids: `${acc.id},${b}`,
      duration_minutes: 60,
      slot_interval: 60,
      from: '2026-03-02T09:00:00Z',
      to: '2026-03-02T13:00:00Z',
    };
    const res = await get('/v1/availability/mutual', acc.key, query);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(starts(body.slots)).toEqual(['2026-03-02T11:00:00.000Z', '2026-03-02T12:00:00.000Z']);
    expect(body.principal_ids).toEqual([acc.id, b]);
    expect(body.consents).toEqual([
      { principal_id: acc.id, consent_id: null, basis: 'self' },
      { principal_id: b, consent_id: null, basis: 'managed_host' },
    ]);
    const limited = await (await get('/v1/availability/mutual', acc.key, { ...query, limit: 1 })).json();
    expect(limited.slots).toHaveLength(1);

    const other = await t.account();
    const foreign = await host(other.key);
    const denied = await get('/v1/availability/mutual', acc.key, {
      ...query,
      principal_ids: `${b},${foreign}`,
    });
    expect(denied.status).toBe(403);
    const noCalendar = await host(acc.key, {}, null);
    const missing = await get('/v1/availability/mutual', acc.key, {
      ...query,
      principal_ids: `${b},${noCalendar}`,
    });
    expect(missing.status).toBe(404);
    expect((await missing.json()).detail).toContain(noCalendar);

    for (const ids of [b, `${b},${b}`, `${b},nope`, Array(6).fill(b).join(',')]) {
      const r = await get('/v1/availability/mutual', acc.key, { ...query, principal_ids: ids });
      expect(r.status, ids).toBe(400);
      expect(Object.keys((await r.json()).errors)).toEqual(['principal_ids']);
    }
  });
});

describe('GET /v1/principals/{id}/availability', () => {
  it('answers normalized busy, free and outside-hours blocks', async () => {
    const acc = await t.account();
    const id = await host(acc.key, { timezone: 'UTC' }, [
      span('2026-03-02T08:30:00Z', '2026-03-02T09:30:00Z'),
      span('2026-03-02T12:00:00Z', '2026-03-02T13:00:00Z'),
    ]);
    bookings.busyBy.set(id, [span('2026-03-02T12:30:00Z', '2026-03-02T13:30:00Z')]);
    const res = await get(`/v1/principals/${id}/availability`, acc.key, {
      from: '2026-03-02T08:00:00Z',
      to: '2026-03-02T18:00:00Z',
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    const hm = (s: string) => s.slice(11, 16);
    expect(
      body.blocks.map((b: Record<string, string>) => `${hm(b.start)}-${hm(b.end)} ${b.status} ${b.source}`),
    ).toEqual([
      '08:00-08:30 outside_hours schedule',
      '08:30-09:30 busy calendar',
      '09:30-12:00 free schedule',
      '12:00-12:30 busy calendar',
      '12:30-13:30 busy booking',
      '13:30-17:00 free schedule',
      '17:00-18:00 outside_hours schedule',
    ]);
    expect(body).toMatchObject({ principal_id: id, stale: false, timezone: 'UTC' });
  });
});

describe('access', () => {
  it('allows self and managed hosts; 403 for other accounts’ principals and unknown ids', async () => {
    const acc = await t.account();
    calendar.busyBy.set(acc.id, []);
    const mine = await host(acc.key);
    const other = await t.account();
    calendar.busyBy.set(other.id, []);
    const theirs = await host(other.key);
    const unknown = '01900000-0000-7000-8000-000000000000';
    const window = { from: '2026-03-02T00:00:00Z', to: '2026-03-03T00:00:00Z' };
    const slots = (token: string | undefined, id: string) =>
      get('/v1/availability/slots', token, { business_id: id, ...window });
    const pk = (
      await (
        await t.call('POST', '/v1/api-keys', { token: acc.key, body: { name: 'w', key_type: 'publishable' } })
      ).json()
    ).api_key.key;

    expect((await slots(acc.key, acc.id)).status).toBe(200);
    expect((await slots(acc.key, mine)).status).toBe(200);
    expect((await slots(pk, acc.id)).status).toBe(200);
    expect((await slots(pk, mine)).status).toBe(200);
    expect((await get('/v1/availability/next', pk, { business_id: mine })).status).toBe(200);
    for (const token of [acc.key, pk]) {
      for (const id of [theirs, other.id, unknown]) {
        const res = await slots(token, id);
        expect(res.status, `${token.slice(0, 8)} ${id}`).toBe(403);
        expect((await res.json()).type).toMatch(/\/errors\/forbidden$/);
      }
    }
    expect((await get('/v1/availability/next', pk, { business_id: theirs })).status).toBe(403);
    expect((await get(`/v1/principals/${mine}/availability`, acc.key, window)).status).toBe(200);
    expect((await get(`/v1/principals/${theirs}/availability`, acc.key, window)).status).toBe(403);
    expect((await slots(undefined, mine)).status).toBe(401);
    // a deleted host is gone for availability too, with the same 403 as an unknown id
    await t.call('DELETE', `/v1/hosts/${mine}`, { token: acc.key });
    expect((await slots(acc.key, mine)).status).toBe(403);
  });

  it('consults the rules other modules add, for secret keys and sessions, not publishable keys', async () => {
    const acc = await t.account();
    const pk = (
      await (
        await t.call('POST', '/v1/api-keys', { token: acc.key, body: { name: 'w', key_type: 'publishable' } })
      ).json()
    ).api_key.key;
    const other = await t.account();
    const friend = await host(other.key);
    grant = async (caller, input) => {
      const grants = new Map();
      if (caller.accountId === acc.id) {
        for (const p of input.principals) {
          if (p.id === friend) grants.set(p.id, { basis: 'consent', consentId: input.consentId ?? 'cons_x' });
        }
      }
      return grants;
    };
    const window = { from: '2026-03-02T00:00:00Z', to: '2026-03-03T00:00:00Z' };
    const res = await get('/v1/availability/slots', acc.key, {
      business_id: friend,
      consent_id: 'cons_01jxkb7c8d9e0f1g2h3j4k5m6n',
      ...window,
    });
    expect(res.status).toBe(200);
    expect((await get('/v1/availability/slots', pk, { business_id: friend, ...window })).status).toBe(403);
    calendar.busyBy.set(acc.id, []);
    const mutual = await (
      await get('/v1/availability/mutual', acc.key, { principal_ids: `${acc.id},${friend}`, ...window })
    ).json();
    expect(mutual.consents[1]).toEqual({ principal_id: friend, consent_id: 'cons_x', basis: 'consent' });
    // the rule grants nothing to other callers
    const stranger = await t.account();
    expect(
      (await get('/v1/availability/slots', stranger.key, { business_id: friend, ...window })).status,
    ).toBe(403);
  });
});

describe('validation', () => {
  it('answers 400 with a message per field', async () => {
    const acc = await t.account();
    const id = await host(acc.key);
    const ok = { business_id: id, from: '2026-03-02T00:00:00Z', to: '2026-03-03T00:00:00Z' };
    const cases: [string, Record<string, string | number>, string][] = [
      ['/v1/availability/slots', { ...ok, from: '2026-03-03T00:00:00Z' }, 'to'],
      ['/v1/availability/slots', { ...ok, to: '2026-03-02T00:00:00Z' }, 'to'],
      ['/v1/availability/slots', { ...ok, to: '2026-05-04T00:00:00Z' }, 'to'],
      ['/v1/availability/slots', { ...ok, from: 'yesterday' }, 'from'],
      ['/v1/availability/slots', { ...ok, from: '2026-03-02T00:00:00' }, 'from'],
      ['/v1/availability/slots', { ...ok, timezone: 'Mars/Base' }, 'timezone'],
      ['/v1/availability/slots', { ...ok, duration_minutes: 4 }, 'duration_minutes'],
      ['/v1/availability/slots', { ...ok, duration_minutes: 721 }, 'duration_minutes'],
      ['/v1/availability/slots', { ...ok, duration_minutes: 'long' }, 'duration_minutes'],
      ['/v1/availability/slots', { ...ok, business_id: 'acct-1' }, 'business_id'],
      ['/v1/availability/slots', { ...ok, slot_interval: 0 }, 'slot_interval'],
      ['/v1/availability/slots', { ...ok, slot_interval: 'x' }, 'slot_interval'],
      ['/v1/availability/slots', { from: ok.from, to: ok.to }, 'business_id'],
      ['/v1/availability/slots', { ...ok, principal_id: acc.id }, 'principal_id'],
      ['/v1/availability/slots', { ...ok, buffer: -5 }, 'buffer'],
      ['/v1/availability/slots', { ...ok, colour: 'red' }, 'colour'],
      ['/v1/availability/next', { business_id: id, days_ahead: 91 }, 'days_ahead'],
      ['/v1/availability/next', { business_id: id, after: 'soon' }, 'after'],
      ['/v1/availability/mutual', { principal_ids: `${id},${acc.id}`, from: ok.to, to: ok.from }, 'to'],
      [`/v1/principals/${id}/availability`, { from: ok.from, to: '2026-06-01T00:00:00Z' }, 'to'],
      ['/v1/principals/not-a-uuid/availability', { from: ok.from, to: ok.to }, 'id'],
    ];
    for (const [path, query, field] of cases) {
      const res = await get(path, acc.key, query);
      expect(res.status, `${path} ${JSON.stringify(query)}`).toBe(400);
      const problem = await res.json();
      expect(problem.type).toMatch(/\/errors\/validation-error$/);
      expect(Object.keys(problem.errors), `${path} ${JSON.stringify(query)}`).toContain(field);
    }
    // exactly 62 days is allowed
    const longest = await get('/v1/availability/slots', acc.key, { ...ok, to: '2026-05-03T00:00:00Z' });
    expect(longest.status).toBe(200);
  });
});

describe('OpenAPI', () => {
  it('documents the availability, host and schedule routes with their answers', async () => {
    const doc = await (await t.call('GET', '/v1/openapi.json')).json();
    for (const path of [
      '/v1/availability/slots',
      '/v1/availability/next',
      '/v1/availability/mutual',
      '/v1/principals/{id}/availability',
      '/v1/principals/{id}/schedule',
      '/v1/hosts',
      '/v1/hosts/{id}',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
      expect(doc.paths[path].get.responses['200'].content['application/json'].schema, path).toBeDefined();
    }
    const slots = doc.paths['/v1/availability/slots'].get;
    expect(slots.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining([
        'business_id',
        'principal_id',
        'duration_minutes',
        'from',
        'to',
        'group_by_day',
      ]),
    );
    expect(doc.paths['/v1/principals/{id}/schedule'].put.requestBody).toBeDefined();
  });
});
