/**
 * A new booking's row is made in memory when it is written in its write batch (repo.newBookingRow):
 * it must be exactly the row the store answers for the same insert, or events, mails and answers would
 * differ from later reads. A column added with a default would break this test first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { FakeClock } from '../../platform/clock.js';
import { WriteBatch } from '../../jobs/runner.js';
import { addBookingWrites, insertBooking, type NewBooking, newBookingRow } from './repo.js';

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
