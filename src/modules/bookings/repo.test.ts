/**
 * A new booking's row is made in memory when it is written in its write batch (repo.newBookingRow):
 * it must be exactly the row the store answers for the same insert, or events, mails and answers would
 * differ from later reads. A column added with a default would break this test first.
 *
 * The reads of a principal's occupancy and of an account's bookings from a moment on, and the search
 * for a waiting entry to offer freed time to, must not grow with the past (docs/design.md#bookings):
 * their plans ask the index for the time as well.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { newHost } from '../../../test/helpers/fixtures.js';
import { genericPlan, indexPlan } from '../../../test/helpers/plans.js';
import { caught } from '../../../test/helpers/promises.js';
import { FakeClock } from '../../platform/clock.js';
import { WriteBatch } from '../../jobs/runner.js';
import {
  addBookingWrites,
  earliestWaiting,
  earliestWaitingQuery,
  expiredOffersQuery,
  windowEndedQuery,
  insertBooking,
  listBookings,
  listBookingsQuery,
  type NewBooking,
  newBookingRow,
  occupancyAfter,
  occupancyAfterQuery,
} from './repo.js';

const clock = new FakeClock('2026-03-02T06:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => {
  await t?.close();
});

function newBooking(accountId: string, n: number, paid: boolean): NewBooking {
  const now = new Date('2026-03-02T06:00:00.123Z');
  return {
    row: {
      id: `booking_rowtest${n}`,
      account_id: accountId,
      principal_id: accountId,
      host_ids: [accountId],
      booking_link_id: null,
      title: 'Meeting with Host',
      status: paid ? 'pending_payment' : 'confirmed',
      start_time: new Date(`2026-03-0${3 + n}T10:00:00Z`),
      end_time: new Date(`2026-03-0${3 + n}T10:30:00Z`),
      customer_email: 'ada@example.com',
      customer_name: 'Ada Lovelace',
      customer_timezone: n === 0 ? null : 'Europe/London',
      notes: n === 0 ? null : 'Hi',
      answers: JSON.stringify({ topic: 'engines', agree: true }),
      metadata: JSON.stringify({ crm: '42' }),
      manage_token_hash: `hash${n}`,
      manage_nonce: `nonce${n}`,
      sequence: 0,
      waitlist_entry_id: null,
      ...(paid
        ? {
            payment_amount: 2500,
            payment_currency: 'eur',
            payment_expires_at: new Date('2026-03-02T06:30:00Z'),
            stripe_account_id: null,
          }
        : {}),
      created_at: now,
      updated_at: now,
    },
    answers: { topic: 'engines', agree: true },
    metadata: { crm: '42' },
  };
}

describe('a new booking’s row made in memory', () => {
  it('is exactly the row the store answers for the same insert, free or paid', async () => {
    const acc = await t.account();
    for (const [n, paid] of [
      [0, false],
      [1, false],
      [2, true],
    ] as const) {
      const b = newBooking(acc.id, n, paid);
      const stored = await t.ctx.db.transaction().execute((trx) => insertBooking(trx, b.row));
      expect(newBookingRow(b)).toStrictEqual(stored);
    }
  });

  it('is written by the batch as the same row, with its occupancy', async () => {
    const acc = await t.account();
    const b = newBooking(acc.id, 3, false);
    const slot = { start: b.row.start_time, end: b.row.end_time };
    const made = await t.ctx.db.transaction().execute(async (trx) => {
      const batch = new WriteBatch();
      const row = addBookingWrites(batch, b, [
        { ownerId: b.row.id, principalId: acc.id, ...slot, livemode: true },
      ]);
      await batch.run(trx);
      return row;
    });
    const stored = await t.ctx.db.selectFrom('bookings').selectAll().where('id', '=', b.row.id).execute();
    expect(stored).toStrictEqual([made]);
    const occupancy = await t.ctx.db
      .selectFrom('booking_occupancy')
      .select('principal_id')
      .where('owner_id', '=', b.row.id)
      .execute();
    expect(occupancy).toEqual([{ principal_id: acc.id }]);
  });
});

describe('a principal’s occupancy from a moment on', () => {
  const H = 3_600_000;

  it('is every range ending after the moment, across it or not, and none that ended at it', async () => {
    const acc = await t.account();
    const at = Date.parse('2026-03-02T12:00:00Z');
    const ranges = [
      ...Array.from({ length: 50 }, (_, i) => [at - (i + 2) * H, at - (i + 2) * H + H / 2]),
      [at - H, at], // ends at the moment
      [at + H / 4, at + (3 * H) / 4], // across `at + H / 2`
      [at + 2 * H, at + 3 * H],
    ] as const;
    await t.ctx.db
      .insertInto('booking_occupancy')
      .values(
        ranges.map(([s, e], i) => ({
          owner_id: `booking_occ${i}`,
          principal_id: acc.id,
          during: sql`tstzrange(${new Date(s)}, ${new Date(e)}, '[)')`,
        })),
      )
      .execute();
    for (const from of [at - 1, at, at + H / 2, at + 3 * H]) {
      const read = await occupancyAfter(t.ctx.db, acc.id, new Date(from));
      const got = read.map((r) => [r.s.getTime(), r.e.getTime()]).sort((a, b) => a[0]! - b[0]!);
      expect(got, new Date(from).toISOString()).toEqual(
        ranges.filter(([, e]) => e > from).map((r) => [...r]),
      );
    }
  });

  it('is asked of the exclusion constraint’s index by time too, so a long history is not read', async () => {
    const acc = await t.account();
    const plan = await indexPlan(t.ctx.db, (trx) => occupancyAfterQuery(trx, acc.id, new Date()));
    expect(plan).toMatch(/"Index Cond":"[^"]*during &&/);
    // The mode may be left to a filter (PostgreSQL 15 folds `livemode = true` to `livemode`, which a
    // GiST index does not take as a condition): it narrows rows the index already bounded by time.
    expect(plan.replace(/"Filter":"livemode"/g, '')).not.toMatch(/"Filter"/);
  });
});

describe('the bookings ending after a moment', () => {
  const MIN = 60_000;
  const at = Date.parse('2026-04-01T12:00:00Z');
  const booking = (accountId: string, id: string, start: number, minutes: number): NewBooking => {
    const b = newBooking(accountId, 0, false);
    return {
      ...b,
      row: {
        ...b.row,
        id,
        start_time: new Date(start),
        end_time: new Date(start + minutes * MIN),
        manage_token_hash: `hash-${id}`,
      },
    };
  };

  it('are listed whatever their length up to a day, and the store refuses a longer one', async () => {
    const acc = await t.account();
    const rows = [
      booking(acc.id, 'booking_lenday', at - 1439 * MIN, 1440), // a whole day, ending a minute after
      booking(acc.id, 'booking_lenend', at - 90 * MIN, 30), // ended before
      booking(acc.id, 'booking_lenat', at - 30 * MIN, 30), // ends at the moment
      booking(acc.id, 'booking_lenlater', at + 60 * MIN, 30),
    ];
    for (const b of rows) await t.ctx.db.transaction().execute((trx) => insertBooking(trx, b.row));
    const listed = await listBookings(t.ctx.db, {
      accountId: acc.id,
      livemode: true,
      from: new Date(at),
      after: null,
      limit: 10,
    });
    expect(listed.map((r) => r.id)).toEqual(['booking_lenday', 'booking_lenlater']);
    const longer = booking(acc.id, 'booking_lenlonger', at, 1441);
    const err = await caught(t.ctx.db.transaction().execute((trx) => insertBooking(trx, longer.row)));
    expect(err).toMatchObject({ code: '23514', constraint: 'bookings_at_most_a_day' });
  });

  it('are asked of the index by start time too, so the account’s past is not read', async () => {
    const acc = await t.account();
    const plan = await indexPlan(t.ctx.db, (trx) =>
      listBookingsQuery(trx, {
        accountId: acc.id,
        livemode: true,
        from: new Date(at),
        after: null,
        limit: 10,
      }),
    );
    expect(plan).toMatch(/"Index Cond":"[^"]*start_time >/);
  });
});

describe('the earliest waiting entry for freed time', () => {
  const H = 3_600_000;
  const at = Date.parse('2026-03-10T10:00:00Z');
  let links = 0;

  async function link(): Promise<{ accountId: string; linkId: string }> {
    const acc = await t.account();
    const host = await newHost(t, { token: acc.key }, { timezone: 'UTC' });
    const res = await t.call('POST', '/v1/booking-links', {
      token: acc.key,
      body: { title: 'Consultation', slug: `waiting-${++links}-${Date.now()}`, host_ids: [host] },
    });
    expect(res.status).toBe(201);
    return { accountId: acc.id, linkId: (await res.json()).booking_link.id };
  }

  it('is the first to arrive of the waiting ones whose window holds the time, skipping one being offered elsewhere', async () => {
    const { accountId, linkId } = await link();
    const entry = (id: string, status: 'waiting' | 'booked' | 'expired', from: number, to: number) => ({
      id,
      account_id: accountId,
      booking_link_id: linkId,
      customer_email: `${id}@example.com`,
      customer_name: id,
      preferred_from: new Date(from),
      preferred_to: new Date(to),
      status,
      created_at: new Date(at - 48 * H),
      updated_at: new Date(at - 48 * H),
    });
    // In order of arrival.
    await t.ctx.db
      .insertInto('waitlist_entries')
      .values([
        entry('wl_booked', 'booked', at - H, at + 2 * H),
        entry('wl_expired', 'expired', at - H, at + 2 * H),
        entry('wl_passed', 'waiting', at - 30 * H, at - 20 * H),
        entry('wl_endstoosoon', 'waiting', at - H, at + H / 2),
        entry('wl_startstoolate', 'waiting', at + H / 2, at + 3 * H),
        entry('wl_first', 'waiting', at, at + H), // the time exactly
        entry('wl_second', 'waiting', at - H, at + 5 * H),
      ])
      .execute();
    const find = () =>
      t.ctx.db
        .transaction()
        .execute(async (trx) => (await earliestWaiting(trx, linkId, new Date(at), new Date(at + H)))?.id);
    expect(await find()).toBe('wl_first');
    // While another transaction holds the first (offering it other freed time), the next one is found.
    await t.ctx.db.transaction().execute(async (other) => {
      await other
        .selectFrom('waitlist_entries')
        .select('id')
        .where('id', '=', 'wl_first')
        .forUpdate()
        .execute();
      expect(await find()).toBe('wl_second');
    });
  });

  it('is asked of the waiting entries by the end of their window, so the link’s past is not read', async () => {
    const { linkId } = await link();
    const plan = await genericPlan(t.ctx.db, (trx) =>
      earliestWaitingQuery(trx, linkId, new Date(at), new Date(at + H)),
    );
    expect(plan).toMatch(/"Index Name":"waitlist_waiting_idx"/);
    expect(plan).toMatch(/"Index Cond":"[^"]*preferred_to >=/);
  });
});

describe('waitlist offers whose hold ended', () => {
  it('are found through the index of offers by the hold’s end, not by reading every entry', async () => {
    const plan = await genericPlan(t.ctx.db, (trx) => expiredOffersQuery(trx, new Date(), 100));
    expect(plan).toMatch(/"Index Name":"waitlist_offers_idx"/);
  });
});

describe('waiting entries whose window ended', () => {
  it('are found through the index of waiting entries by the window’s end, across links', async () => {
    const plan = await genericPlan(t.ctx.db, (trx) => windowEndedQuery(trx, new Date(), 500));
    expect(plan).toMatch(/"Index Name":"waitlist_window_end_idx"/);
  });
});
