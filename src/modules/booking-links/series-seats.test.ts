/**
 * Booking links that allow recurring series or are seated (docs/api.md#booking-links, migration 0026):
 * `recurrence` and `seats` accepted, stored and shown; their shapes and the rules between them and the
 * rest of a link refused with 400 naming the field, on create and on the combination a PATCH leaves.
 */
import { describe, expect, it } from 'vitest';
import { linksApp, linksOf, slug } from '../../../test/helpers/booking-links.js';

const { t, create, created, host, rowsOf } = linksApp();

const WEEKLY = { frequencies: ['weekly', 'monthly'], max_count: 12 };

async function rowOf(id: string) {
  return t.ctx.db
    .selectFrom('booking_links')
    .select(['recurrence', 'seat_capacity', 'seats_show_remaining'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

describe('booking links: recurrence and seats', () => {
  it('creates links without either by default: recurrence and seats null, stored as NULL', async () => {
    const acc = await t.account();
    const link = await created(acc.key);
    expect(link).toMatchObject({ recurrence: null, seats: null });
    expect(await rowOf(link.id)).toEqual({
      recurrence: null,
      seat_capacity: null,
      seats_show_remaining: false,
    });
    const explicit = await created(acc.key, { recurrence: null, seats: null });
    expect(explicit).toMatchObject({ recurrence: null, seats: null });
    expect((await linksOf(t).get(acc.id, link.id))?.recurrence).toBeNull();
  });

  it('stores and shows a link that allows recurrence, in the answer, GET, the list and to other modules', async () => {
    const acc = await t.account();
    const link = await created(acc.key, { recurrence: { frequencies: ['monthly', 'daily'], max_count: 52 } });
    expect(link.recurrence).toEqual({ frequencies: ['monthly', 'daily'], max_count: 52 });
    expect(link.seats).toBeNull();
    const read = await t.call('GET', `/v1/booking-links/${link.id}`, { token: acc.key });
    expect((await read.json()).booking_link).toEqual(link);
    const list = await (await t.call('GET', '/v1/booking-links', { token: acc.key })).json();
    expect(list.booking_links).toEqual([link]);
    expect(await rowOf(link.id)).toEqual({
      recurrence: { frequencies: ['monthly', 'daily'], max_count: 52 },
      seat_capacity: null,
      seats_show_remaining: false,
    });
    const bySlug = await linksOf(t).bySlug(link.slug);
    expect(bySlug).toMatchObject({
      recurrence: { frequencies: ['monthly', 'daily'], max_count: 52 },
      seats: null,
    });
    // the cached link is shared: frozen to its recurrence
    expect(Object.isFrozen(bySlug?.recurrence?.frequencies)).toBe(true);
  });

  it('stores and shows a seated link, show_remaining false unless given, single or collective', async () => {
    const acc = await t.account();
    const h1 = await host(acc.key);
    const h2 = await host(acc.key);
    const plain = await created(acc.key, { seats: { capacity: 2 } });
    expect(plain.seats).toEqual({ capacity: 2, show_remaining: false });
    expect(await rowOf(plain.id)).toEqual({
      recurrence: null,
      seat_capacity: 2,
      seats_show_remaining: false,
    });
    const group = await created(acc.key, {
      host_ids: [h1, h2],
      assignment: 'collective',
      durations: [90],
      seats: { capacity: 500, show_remaining: true },
    });
    expect(group).toMatchObject({
      assignment: 'collective',
      durations: [90],
      recurrence: null,
      seats: { capacity: 500, show_remaining: true },
    });
    expect(await linksOf(t).get(acc.id, group.id)).toMatchObject({
      seats: { capacity: 500, showRemaining: true },
    });
    // a seated link may be priced (only a series may not)
    const paid = await created(acc.key, {
      seats: { capacity: 8 },
      price_amount: 2000,
      price_currency: 'eur',
    });
    expect(paid).toMatchObject({ price_amount: 2000, seats: { capacity: 8, show_remaining: false } });
  });

  it('refuses malformed recurrence and seats with 400 naming the field, and writes nothing', async () => {
    const acc = await t.account();
    const cases: [Record<string, unknown>, string][] = [
      [{ recurrence: {} }, 'recurrence'],
      [{ recurrence: { frequencies: [], max_count: 4 } }, 'recurrence.frequencies'],
      [{ recurrence: { frequencies: ['yearly'], max_count: 4 } }, 'recurrence.frequencies.0'],
      [{ recurrence: { frequencies: ['weekly', 'weekly'], max_count: 4 } }, 'recurrence.frequencies'],
      [
        { recurrence: { frequencies: ['daily', 'weekly', 'monthly', 'daily'], max_count: 4 } },
        'recurrence.frequencies',
      ],
      [{ recurrence: { frequencies: ['weekly'] } }, 'recurrence'],
      [{ recurrence: { frequencies: ['weekly'], max_count: 1 } }, 'recurrence.max_count'],
      [{ recurrence: { frequencies: ['weekly'], max_count: 53 } }, 'recurrence.max_count'],
      [{ recurrence: { frequencies: ['weekly'], max_count: 2.5 } }, 'recurrence.max_count'],
      [{ recurrence: { frequencies: ['weekly'], max_count: 4, interval: 2 } }, 'recurrence.interval'],
      [{ recurrence: 'weekly' }, 'recurrence'],
      [{ seats: {} }, 'seats'],
      [{ seats: 10 }, 'seats'],
      [{ seats: { capacity: 1 } }, 'seats.capacity'],
      [{ seats: { capacity: 501 } }, 'seats.capacity'],
      [{ seats: { capacity: 10.5 } }, 'seats.capacity'],
      [{ seats: { capacity: 10, show_remaining: 'yes' } }, 'seats.show_remaining'],
      [{ seats: { capacity: 10, waitlist: true } }, 'seats.waitlist'],
    ];
    for (const [extra, field] of cases) {
      const res = await create(acc.key, { slug: slug(), ...extra });
      const what = JSON.stringify(extra);
      expect(res.status, what).toBe(400);
      const problem = await res.json();
      expect(problem.type, what).toMatch(/\/errors\/validation-error$/);
      expect(Object.keys(problem.errors), what).toContain(field);
    }
    expect(await rowsOf(acc.id)).toBe(0);
  });

  it('refuses recurrence on a priced link and seats with recurrence, round_robin or several durations', async () => {
    const acc = await t.account();
    const h1 = await host(acc.key);
    const h2 = await host(acc.key);
    const price = { price_amount: 5000, price_currency: 'usd' };
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ recurrence: WEEKLY, ...price }, 'recurrence', /a priced link cannot allow recurrence/],
      [{ recurrence: WEEKLY, seats: { capacity: 5 } }, 'seats', /cannot allow recurrence/],
      [{ seats: { capacity: 5 }, host_ids: [h1, h2], assignment: 'round_robin' }, 'seats', /round_robin/],
      [{ seats: { capacity: 5 }, durations: [30, 60] }, 'seats', /a seated link offers one duration/],
      [
        { seats: { capacity: 5 }, durations: [30, 60], duration_minutes: 60 },
        'seats',
        /a seated link offers one duration/,
      ],
    ];
    for (const [extra, field, message] of cases) {
      const res = await create(acc.key, { slug: slug(), ...extra });
      const what = JSON.stringify(extra);
      expect(res.status, what).toBe(400);
      const problem = await res.json();
      expect(problem.type, what).toMatch(/\/errors\/validation-error$/);
      expect(problem.errors[field], what).toMatch(message);
    }
    expect(await rowsOf(acc.id)).toBe(0);
  });

  it('patches recurrence and seats: set, replace, clear, each clear stored as NULL', async () => {
    const acc = await t.account();
    const link = await created(acc.key);
    const path = `/v1/booking-links/${link.id}`;
    const patch = async (body: Record<string, unknown>) => {
      const res = await t.call('PATCH', path, { token: acc.key, body });
      expect(res.status, JSON.stringify(body)).toBe(200);
      return (await res.json()).booking_link;
    };
    expect(await patch({ recurrence: WEEKLY })).toMatchObject({ recurrence: WEEKLY, seats: null });
    // other fields leave it as it is
    expect(await patch({ title: 'Renamed' })).toMatchObject({ title: 'Renamed', recurrence: WEEKLY });
    expect(await patch({ recurrence: { frequencies: ['daily'], max_count: 5 } })).toMatchObject({
      recurrence: { frequencies: ['daily'], max_count: 5 },
    });
    // a price and no recurrence, in one patch
    expect(await patch({ recurrence: null, price_amount: 3000, price_currency: 'usd' })).toMatchObject({
      recurrence: null,
      price_amount: 3000,
    });
    expect((await rowOf(link.id)).recurrence).toBeNull();
    expect(await patch({ seats: { capacity: 20, show_remaining: true } })).toMatchObject({
      seats: { capacity: 20, show_remaining: true },
    });
    // a PATCH replaces the whole object: show_remaining falls back to false
    expect(await patch({ seats: { capacity: 4 } })).toMatchObject({
      seats: { capacity: 4, show_remaining: false },
    });
    expect(await patch({ seats: null })).toMatchObject({ seats: null });
    expect(await rowOf(link.id)).toEqual({
      recurrence: null,
      seat_capacity: null,
      seats_show_remaining: false,
    });
    // once it is free and unseated, a series is allowed again
    const last = await patch({ price_amount: null, recurrence: WEEKLY });
    expect(last).toMatchObject({ price_amount: null, price_currency: null, recurrence: WEEKLY });
    expect((await (await t.call('GET', path, { token: acc.key })).json()).booking_link).toEqual(last);
  });

  it('refuses a PATCH whose resulting link breaks a rule, naming the field, and changes nothing', async () => {
    const acc = await t.account();
    const h1 = await host(acc.key);
    const h2 = await host(acc.key);
    const recurring = await created(acc.key, { recurrence: WEEKLY });
    const seated = await created(acc.key, {
      host_ids: [h1, h2],
      assignment: 'collective',
      seats: { capacity: 6 },
    });
    const priced = await created(acc.key, { price_amount: 900, price_currency: 'gbp' });
    const robin = await created(acc.key, { host_ids: [h1, h2], assignment: 'round_robin' });
    const several = await created(acc.key, { durations: [15, 30] });
    const cases: [Record<string, unknown>, Record<string, unknown>, string, RegExp][] = [
      [recurring, { price_amount: 1000, price_currency: 'usd' }, 'recurrence', /priced link/],
      [recurring, { seats: { capacity: 3 } }, 'seats', /cannot allow recurrence/],
      [
        recurring,
        { recurrence: { frequencies: ['daily', 'daily'], max_count: 3 } },
        'recurrence.frequencies',
        /twice/,
      ],
      [priced, { recurrence: WEEKLY }, 'recurrence', /priced link/],
      [seated, { recurrence: WEEKLY }, 'seats', /cannot allow recurrence/],
      [seated, { assignment: 'round_robin' }, 'seats', /round_robin/],
      [seated, { durations: [30, 45] }, 'seats', /one duration/],
      [robin, { seats: { capacity: 3 } }, 'seats', /round_robin/],
      [several, { seats: { capacity: 3 } }, 'seats', /one duration/],
      [several, { seats: { capacity: 3 }, duration_minutes: 30 }, 'seats', /one duration/],
    ];
    for (const [link, body, field, message] of cases) {
      const res = await t.call('PATCH', `/v1/booking-links/${link.id}`, { token: acc.key, body });
      const what = `${link.slug}: ${JSON.stringify(body)}`;
      expect(res.status, what).toBe(400);
      const problem = await res.json();
      expect(problem.type, what).toMatch(/\/errors\/validation-error$/);
      expect(problem.errors[field], what).toMatch(message);
    }
    for (const link of [recurring, seated, priced, robin, several]) {
      const read = await t.call('GET', `/v1/booking-links/${link.id}`, { token: acc.key });
      expect((await read.json()).booking_link).toEqual(link);
    }
    // the fix in one patch passes: seats and a single duration together; round robin without seats
    const fixed = await t.call('PATCH', `/v1/booking-links/${several.id}`, {
      token: acc.key,
      body: { durations: [30], seats: { capacity: 3 } },
    });
    expect(fixed.status).toBe(200);
    expect((await fixed.json()).booking_link).toMatchObject({ durations: [30], seats: { capacity: 3 } });
    const unseated = await t.call('PATCH', `/v1/booking-links/${seated.id}`, {
      token: acc.key,
      body: { seats: null, assignment: 'round_robin' },
    });
    expect(unseated.status).toBe(200);
    expect((await unseated.json()).booking_link).toMatchObject({ seats: null, assignment: 'round_robin' });
  });
});
