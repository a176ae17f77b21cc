/**
 * A new booking's row is made in memory when it is written in its write batch (repo.newBookingRow):
 * it must be exactly the row the store answers for the same insert, or events, mails and answers would
 * differ from later reads. A column added with a default would break this test first.
 *
 * The reads of a principal's occupancy and of an account's bookings from a moment on must not grow
 * with the past (docs/design.md#bookings): their plans ask the index for the time as well.
 */
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { caught } from '../../../test/helpers/promises.js';
import type { Tx } from '../../db/store.js';
import { FakeClock } from '../../platform/clock.js';
import { WriteBatch } from '../../jobs/runner.js';
import {
  addBookingWrites,
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
      const row = addBookingWrites(batch, b, [{ ownerId: b.row.id, principalId: acc.id, ...slot }]);
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

/**
 * The store's plan for a query, as JSON text, with sequential scans off: whatever the table's size,
 * it shows what the indexes can be asked.
 */
async function indexPlan(build: (trx: Tx) => { compile(): CompiledQuery }): Promise<string> {
  return t.ctx.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL enable_seqscan = off`.execute(trx);
    const q = build(trx).compile();
    const explained = await trx.executeQuery(
      CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${q.sql}`, [...q.parameters]),
    );
    return JSON.stringify(explained.rows);
  });
}

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
    const plan = await indexPlan((trx) => occupancyAfterQuery(trx, acc.id, new Date()));
    expect(plan).toMatch(/"Index Cond":"[^"]*during &&/);
    expect(plan).not.toMatch(/"Filter"/);
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
    const plan = await indexPlan((trx) =>
      listBookingsQuery(trx, { accountId: acc.id, from: new Date(at), after: null, limit: 10 }),
    );
    expect(plan).toMatch(/"Index Cond":"[^"]*start_time >/);
  });
});
