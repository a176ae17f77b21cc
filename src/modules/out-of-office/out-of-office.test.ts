/**
 * Out-of-office ranges (docs/api.md#out-of-office): made, listed and deleted by whoever may act for the
 * principal; busy in slots, blocks and link availability; a booking into one is refused with
 * `reason: out_of_office`; a new one names the live bookings inside it (which stay booked); in test
 * mode, live ranges are busy in both modes and test ranges in test mode only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { newHost } from '../../../test/helpers/fixtures.js';
import { vcalendar } from '../../../test/helpers/ics.js';
import { testKeyFor } from '../../../test/helpers/test-mode.js';
import { FakeClock } from '../../platform/clock.js';
import { prefixedId } from '../../platform/ids.js';

// Monday 2 March 2026, 06:00 UTC; the account works Mon–Fri 09–17 UTC and its (ICS) calendar is empty.
const clock = new FakeClock('2026-03-02T06:00:00.000Z');
const DAY = '2026-03-03';
let feed: Server;
let t: TestApp;

beforeAll(async () => {
  feed = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/calendar' }).end(vcalendar('\r\n')),
  );
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  t = await startTestApp({ env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' }, clock });
});
afterAll(async () => {
  await t?.close();
  await new Promise<void>((resolve) => feed.close(() => resolve()));
});

/** An account whose own principal has a connected (empty) calendar, with a live and a test key. */
async function account() {
  const acc = await t.account();
  const url = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/${acc.id}.ics`;
  const ics = await t.call('POST', '/v1/calendars/ics', {
    token: acc.key,
    body: { url, principal_id: acc.id },
  });
  expect(ics.status, await ics.clone().text()).toBe(201);
  return { id: acc.id, live: acc.key, test: (await testKeyFor(t, acc.key)).key };
}

const at = (time: string) => `${DAY}T${time}:00Z`;
const path = (id: string) => `/v1/principals/${id}/out-of-office`;

const post = (token: string, id: string, body: Record<string, unknown>) =>
  t.call('POST', path(id), { token, body });

async function away(token: string, id: string, from: string, to: string, note?: string): Promise<Json> {
  const res = await post(token, id, { start: at(from), end: at(to), ...(note ? { note } : {}) });
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

async function listed(token: string, id: string, query = ''): Promise<Json> {
  const res = await t.call('GET', `${path(id)}${query}`, { token });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

const bookAt = (token: string, time: string) =>
  t.call('POST', '/v1/bookings', {
    token,
    body: { start_time: at(time), customer_email: 'c@example.com', customer_name: 'C' },
  });

async function slots(token: string, id: string): Promise<string[]> {
  const res = await t.call(
    'GET',
    `/v1/availability/slots?business_id=${id}&duration_minutes=30&from=${at('00:00')}&to=${at('23:59')}`,
    { token },
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()).slots.map((s: Json) => s.start.slice(11, 16));
}

async function blocks(token: string, id: string): Promise<Json[]> {
  const res = await t.call('GET', `/v1/principals/${id}/availability?from=${at('00:00')}&to=${at('23:59')}`, {
    token,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()).blocks.map((b: Json) => ({
    start: b.start.slice(11, 16),
    end: b.end.slice(11, 16),
    source: b.source,
  }));
}

describe('out-of-office ranges: the routes', () => {
  it('are made (201 with Location), listed by start and deleted (204, then 404)', async () => {
    const a = await account();
    const res = await post(a.live, a.id, { start: at('15:00'), end: at('16:00') });
    expect(res.status).toBe(201);
    const later = await res.json();
    expect(res.headers.get('location')).toBe(`${path(a.id)}/${later.out_of_office.id}`);
    const made = await away(a.live, a.id, '09:00', '10:00', 'Dentist');
    expect(made.out_of_office).toEqual({
      id: expect.stringMatching(/^ooo_[0-9a-z]{26}$/),
      principal_id: a.id,
      start: at('09:00').replace('Z', '.000Z'),
      end: at('10:00').replace('Z', '.000Z'),
      note: 'Dentist',
      livemode: true,
      created_at: '2026-03-02T06:00:00.000Z',
    });
    expect(made.conflicts).toEqual([]);
    expect(later.out_of_office.note).toBeNull();

    const all = await listed(a.live, a.id);
    expect(all.out_of_office.map((r: Json) => r.id)).toEqual([made.out_of_office.id, later.out_of_office.id]);
    expect(all.pagination).toEqual({ next_cursor: null, has_more: false });
    const first = await listed(a.live, a.id, '?limit=1');
    expect(first.pagination.has_more).toBe(true);
    const second = await listed(a.live, a.id, `?limit=1&cursor=${first.pagination.next_cursor}`);
    expect(second.out_of_office.map((r: Json) => r.id)).toEqual([later.out_of_office.id]);
    const windowed = await listed(a.live, a.id, `?from=${at('12:00')}&to=${at('23:00')}`);
    expect(windowed.out_of_office.map((r: Json) => r.id)).toEqual([later.out_of_office.id]);

    const gone = await t.call('DELETE', `${path(a.id)}/${made.out_of_office.id}`, { token: a.live });
    expect(gone.status).toBe(204);
    const again = await t.call('DELETE', `${path(a.id)}/${made.out_of_office.id}`, { token: a.live });
    expect(again.status).toBe(404);
    expect((await listed(a.live, a.id)).out_of_office.map((r: Json) => r.id)).toEqual([
      later.out_of_office.id,
    ]);
  });

  it('answers 400 naming the field for bad input', async () => {
    const a = await account();
    const cases: [Record<string, unknown>, string][] = [
      [{ start: at('10:00'), end: at('10:00') }, 'end'],
      [{ start: at('10:00'), end: at('09:00') }, 'end'],
      [{ start: '2026-03-03T00:00:00Z', end: '2027-03-05T00:00:00Z' }, 'end'],
      [{ start: '2026-03-03T10:00:00', end: at('11:00') }, 'start'],
      [{ start: at('10:00'), end: at('11:00'), note: 'x'.repeat(501) }, 'note'],
      [{ start: at('10:00'), end: at('11:00'), color: 'red' }, 'color'],
      [{ end: at('11:00') }, 'start'],
    ];
    for (const [body, field] of cases) {
      const res = await post(a.live, a.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify((await res.json()).errors ?? {}), JSON.stringify(body)).toContain(field);
    }
    // 366 days exactly is allowed.
    const year = await post(a.live, a.id, { start: '2026-03-03T00:00:00Z', end: '2027-03-04T00:00:00Z' });
    expect(year.status, await year.clone().text()).toBe(201);

    for (const query of [`?from=${at('12:00')}&to=${at('11:00')}`, '?cursor=nonsense', '?limit=0']) {
      const res = await t.call('GET', `${path(a.id)}${query}`, { token: a.live });
      expect(res.status, query).toBe(400);
    }
    const badId = await t.call('DELETE', `${path(a.id)}/booking_x`, { token: a.live });
    expect(badId.status).toBe(400);
  });

  it('are for the caller, its hosts; another account is 403 as for a principal that does not exist', async () => {
    const a = await account();
    const b = await account();
    const host = await newHost(t, { token: a.live }, { timezone: 'UTC' });
    const forHost = await away(a.live, host, '09:00', '10:00');
    expect(forHost.out_of_office.principal_id).toBe(host);

    const nowhere = '01234567-89ab-7def-8123-456789abcdef';
    for (const id of [host, a.id, nowhere]) {
      const made = await post(b.live, id, { start: at('11:00'), end: at('12:00') });
      const list = await t.call('GET', path(id), { token: b.live });
      const del = await t.call('DELETE', `${path(id)}/${forHost.out_of_office.id}`, { token: b.live });
      for (const res of [made, list, del]) {
        expect(res.status).toBe(403);
        expect((await res.json()).detail).toBe(
          'The principal does not exist or is not accessible to this caller',
        );
      }
    }
    // A range is deleted through its own principal only.
    const wrongPrincipal = await t.call('DELETE', `${path(a.id)}/${forHost.out_of_office.id}`, {
      token: a.live,
    });
    expect(wrongPrincipal.status).toBe(404);
    expect((await listed(a.live, host)).out_of_office).toHaveLength(1);
    expect((await listed(a.live, a.id)).out_of_office).toHaveLength(0);
  });

  it('names the live bookings inside a new range as conflicts and cancels none', async () => {
    const a = await account();
    const inside = await (await bookAt(a.live, '10:00')).json();
    await bookAt(a.live, '13:00');
    const testInside = await bookAt(a.test, '11:00');
    expect(testInside.status).toBe(201);
    const cancelled = await (await bookAt(a.live, '09:00')).json();
    const cancel = await t.call('DELETE', `/v1/bookings/${cancelled.booking.id}`, { token: a.live });
    expect(cancel.status).toBe(200);

    const made = await away(a.live, a.id, '09:00', '12:00');
    expect(made.conflicts).toEqual([
      {
        booking_id: inside.booking.id,
        start_time: `${DAY}T10:00:00.000Z`,
        end_time: `${DAY}T10:30:00.000Z`,
      },
    ]);
    const still = await (await t.call('GET', `/v1/bookings/${inside.booking.id}`, { token: a.live })).json();
    expect(still.booking.status).toBe('confirmed');
    // A test range names test bookings only (a caller sees its own mode).
    const testMade = await away(a.test, a.id, '09:00', '12:00');
    expect(testMade.conflicts.map((c: Json) => c.start_time)).toEqual([`${DAY}T11:00:00.000Z`]);
  });
});

describe('out-of-office ranges: busy everywhere', () => {
  it('takes the range out of slots, shows it in blocks, and gives it back once deleted', async () => {
    const a = await account();
    expect(await slots(a.live, a.id)).toContain('12:00');
    const made = await away(a.live, a.id, '12:00', '14:00');
    const open = await slots(a.live, a.id);
    expect(open).not.toContain('12:00');
    expect(open).not.toContain('13:30');
    expect(open).toContain('11:30');
    expect(open).toContain('14:00');
    expect(await blocks(a.live, a.id)).toContainEqual({
      start: '12:00',
      end: '14:00',
      source: 'out_of_office',
    });

    const next = await t.call(
      'GET',
      `/v1/availability/next?business_id=${a.id}&duration_minutes=60&after=${at('11:30')}`,
      { token: a.live },
    );
    expect((await next.json()).slot.start).toBe(`${DAY}T14:00:00.000Z`);

    await t.call('DELETE', `${path(a.id)}/${made.out_of_office.id}`, { token: a.live });
    expect(await slots(a.live, a.id)).toContain('12:00');
    expect((await blocks(a.live, a.id)).some((b) => b.source === 'out_of_office')).toBe(false);
  });

  it('refuses a booking inside a range: 409 slot_unavailable with reason out_of_office', async () => {
    const a = await account();
    await away(a.live, a.id, '12:00', '14:00');
    const res = await bookAt(a.live, '13:00');
    expect(res.status).toBe(409);
    const problem = await res.json();
    expect(problem).toMatchObject({ code: 'slot_unavailable', reason: 'out_of_office' });
    expect(problem.detail).toContain('out-of-office');
    expect((await bookAt(a.live, '14:00')).status).toBe(201);
  });

  it('takes the range out of a booking link’s public slots', async () => {
    const a = await account();
    const res = await t.call('POST', '/v1/booking-links', {
      token: a.live,
      body: { title: 'Call', slug: `ooo-${a.id.slice(0, 8)}`, host_ids: [a.id] },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const link = (await res.json()).booking_link;
    const publicSlots = async () =>
      (
        await (
          await t.call(
            'GET',
            `/v1/public/links/${link.slug}/availability?from=${at('00:00')}&to=${at('23:59')}`,
          )
        ).json()
      ).slots.map((s: Json) => s.start.slice(11, 16));
    expect(await publicSlots()).toContain('10:00');
    await away(a.live, a.id, '09:00', '12:00');
    const after = await publicSlots();
    expect(after).not.toContain('10:00');
    expect(after).toContain('12:00');
  });

  it('hears a range written by another process (the trigger’s NOTIFY drops the cached ranges)', async () => {
    const a = await account();
    expect(await slots(a.live, a.id)).toContain('15:00');
    // As another process would: the row alone, no call into this process's module.
    await t.ctx.db
      .insertInto('out_of_office')
      .values({
        id: prefixedId('ooo'),
        account_id: a.id,
        livemode: true,
        principal_id: a.id,
        start_time: new Date(at('15:00')),
        end_time: new Date(at('16:00')),
        note: null,
        created_at: new Date(),
      })
      .execute();
    await vi.waitFor(async () => expect(await slots(a.live, a.id)).not.toContain('15:00'), { timeout: 5000 });
  });
});

describe('out-of-office ranges in test mode', () => {
  it('live ranges are busy in both modes, test ranges in test mode only; each mode lists and deletes its own', async () => {
    const a = await account();
    const live = await away(a.live, a.id, '10:00', '11:00');
    const test = await away(a.test, a.id, '14:00', '15:00');
    expect(test.out_of_office.livemode).toBe(false);

    const liveSlots = await slots(a.live, a.id);
    expect(liveSlots).not.toContain('10:00');
    expect(liveSlots).toContain('14:00');
    const testSlots = await slots(a.test, a.id);
    expect(testSlots).not.toContain('10:00');
    expect(testSlots).not.toContain('14:00');

    const testBlocks = (await blocks(a.test, a.id)).filter((b) => b.source === 'out_of_office');
    expect(testBlocks.map((b) => b.start)).toEqual(['10:00', '14:00']);
    const liveBlocks = (await blocks(a.live, a.id)).filter((b) => b.source === 'out_of_office');
    expect(liveBlocks.map((b) => b.start)).toEqual(['10:00']);

    // A test booking is refused by either range; a live booking only by the live one.
    expect((await (await bookAt(a.test, '14:00')).json()).reason).toBe('out_of_office');
    expect((await (await bookAt(a.test, '10:00')).json()).reason).toBe('out_of_office');
    expect((await bookAt(a.live, '14:00')).status).toBe(201);

    expect((await listed(a.live, a.id)).out_of_office.map((r: Json) => r.id)).toEqual([
      live.out_of_office.id,
    ]);
    expect((await listed(a.test, a.id)).out_of_office.map((r: Json) => r.id)).toEqual([
      test.out_of_office.id,
    ]);
    const cross = await t.call('DELETE', `${path(a.id)}/${live.out_of_office.id}`, { token: a.test });
    expect(cross.status).toBe(404);
    const own = await t.call('DELETE', `${path(a.id)}/${test.out_of_office.id}`, { token: a.test });
    expect(own.status).toBe(204);
    expect(await slots(a.test, a.id)).toContain('14:30');
  });
});
