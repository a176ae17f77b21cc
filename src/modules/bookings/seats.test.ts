/**
 * Seated links on the real runtime and database (docs/api.md#seats): each seat a booking of its own
 * in the slot's session, `slot_full` past capacity, the session holding the host for everything else,
 * a seat given back on cancel (the session and its time gone with the last one), a seat moved alone.
 */
import { describe, expect, it } from 'vitest';
import { bookingsApp, customer } from '../../../test/helpers/bookings.js';

const { t, host, link } = bookingsApp();

async function seated(capacity: number) {
  const acc = await t.account();
  const h = await host(acc.key);
  const l = await link(acc.key, {
    host_ids: [h],
    slug: `class-${acc.id.slice(-12)}`,
    durations: [60],
    seats: { capacity, show_remaining: true },
  });
  return { acc, h, l };
}

const seat = (slug: string, n: number, start = '2026-03-03T10:00:00Z') =>
  t.call('POST', `/v1/public/links/${slug}/bookings`, {
    body: { customer_email: `seat${n}@example.com`, customer_name: `Seat ${n}`, start_time: start },
  });

describe('seated links', () => {
  it('gives each customer a seat of the slot until it is full, then 409 slot_full', async () => {
    const { acc, l } = await seated(3);
    const made = [];
    for (let n = 1; n <= 3; n++) {
      const res = await seat(l.slug, n);
      expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
      made.push((await res.json()).booking);
    }
    const full = await seat(l.slug, 4);
    expect(full.status).toBe(409);
    expect((await full.json()).code).toBe('slot_full');
    const rows = await t.ctx.db
      .selectFrom('bookings')
      .select(['id', 'seat_session_id', 'customer_email'])
      .where('account_id', '=', acc.id)
      .execute();
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((r) => r.seat_session_id)).size).toBe(1);
    const session = await t.ctx.db
      .selectFrom('seat_sessions')
      .selectAll()
      .where('booking_link_id', '=', l.id)
      .execute();
    expect(session.map((s) => [s.seats_taken, s.capacity])).toEqual([[3, 3]]);
    // Each seat's own mail, to its own customer only.
    const mails = await t.ctx.db
      .selectFrom('mail_outbox')
      .select(['to_address', 'subject_id'])
      .where(
        'subject_id',
        'in',
        made.map((b) => b.id),
      )
      .where('to_address', 'like', 'seat%')
      .execute();
    expect(mails.map((m) => m.to_address).sort()).toEqual([
      'seat1@example.com',
      'seat2@example.com',
      'seat3@example.com',
    ]);
    // The host's own booking of the slot (authenticated) shows the session.
    const got = await (await t.call('GET', `/v1/bookings/${made[0].id}`, { token: acc.key })).json();
    expect(got.booking.seat_session_id).toMatch(/^sess_/);
  });

  it('holds the host for everything else from the first seat to the last cancellation', async () => {
    const { acc, h, l } = await seated(5);
    const a = (await (await seat(l.slug, 1)).json()).booking;
    const b = (await (await seat(l.slug, 2)).json()).booking;
    const other = () =>
      t.call('POST', '/v1/bookings', {
        token: acc.key,
        body: { ...customer, principal_id: h, start_time: '2026-03-03T10:30:00Z' },
      });
    const busy = await other();
    expect(busy.status).toBe(409);
    expect((await busy.json()).code).toBe('slot_unavailable');
    expect((await t.call('DELETE', `/v1/bookings/${a.id}`, { token: acc.key })).status).toBe(200);
    expect((await other()).status).toBe(409);
    const sessions = () =>
      t.ctx.db
        .selectFrom('seat_sessions')
        .select('seats_taken')
        .where('booking_link_id', '=', l.id)
        .execute();
    expect(await sessions()).toEqual([{ seats_taken: 1 }]);
    expect((await t.call('DELETE', `/v1/bookings/${b.id}`, { token: acc.key })).status).toBe(200);
    expect(await sessions()).toEqual([]);
    expect((await other()).status).toBe(201);
  });

  it('moves a seat alone into another slot with room', async () => {
    const { acc, l } = await seated(2);
    const a = (await (await seat(l.slug, 1)).json()).booking;
    await seat(l.slug, 2);
    await seat(l.slug, 3, '2026-03-03T13:00:00Z');
    await seat(l.slug, 4, '2026-03-03T13:00:00Z');
    const full = await t.call('PATCH', `/v1/bookings/${a.id}`, {
      token: acc.key,
      body: { start_time: '2026-03-03T13:00:00Z' },
    });
    expect(full.status).toBe(409);
    expect((await full.json()).code).toBe('slot_full');
    const moved = await t.call('PATCH', `/v1/bookings/${a.id}`, {
      token: acc.key,
      body: { start_time: '2026-03-03T15:00:00Z' },
    });
    expect(moved.status).toBe(200);
    const sessions = await t.ctx.db
      .selectFrom('seat_sessions')
      .select(['start_time', 'seats_taken'])
      .where('booking_link_id', '=', l.id)
      .orderBy('start_time')
      .execute();
    expect(sessions.map((s) => [new Date(s.start_time).toISOString(), s.seats_taken])).toEqual([
      ['2026-03-03T10:00:00.000Z', 1],
      ['2026-03-03T13:00:00.000Z', 2],
      ['2026-03-03T15:00:00.000Z', 1],
    ]);
  });

  it('shows each slot’s seats_remaining, the session’s own count, and never a full slot', async () => {
    const { l } = await seated(2);
    const slots = async () => {
      const res = await t.call(
        'GET',
        `/v1/public/links/${l.slug}/availability?from=2026-03-03T09:00:00Z&to=2026-03-03T12:00:00Z`,
      );
      expect(res.status).toBe(200);
      return (await res.json()).slots.map((s: { start: string; seats_remaining?: number }) => [
        s.start.slice(11, 16),
        s.seats_remaining,
      ]);
    };
    expect(await slots()).toEqual([
      ['09:00', 2],
      ['09:15', 2],
      ['09:30', 2],
      ['09:45', 2],
      ['10:00', 2],
      ['10:15', 2],
      ['10:30', 2],
      ['10:45', 2],
      ['11:00', 2],
    ]);
    await seat(l.slug, 1);
    // The session at 10:00 is offered with its one seat left; what overlaps it is not.
    expect(await slots()).toEqual([
      ['09:00', 2],
      ['10:00', 1],
      ['11:00', 2],
    ]);
    await seat(l.slug, 2);
    expect(await slots()).toEqual([
      ['09:00', 2],
      ['11:00', 2],
    ]);
  });

  it('has no waitlist: joining one is 400, as a freed seat is not time to hold', async () => {
    const { l } = await seated(2);
    const res = await t.call('POST', `/v1/public/links/${l.slug}/waitlist`, {
      body: {
        customer_email: 'w@example.com',
        customer_name: 'W',
        preferred_from: '2026-03-03T09:00:00Z',
        preferred_to: '2026-03-03T17:00:00Z',
      },
    });
    expect(res.status).toBe(400);
    expect((await res.json()).errors).toHaveProperty('booking_link');
  });
});
