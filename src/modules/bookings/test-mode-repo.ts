/**
 * SQL of test mode's timed work in bookings (docs/api.md#test-clock): one account's test payment holds
 * (paid.ts) and test waitlist offers and windows (waitlist.ts) that the test clock has passed. Live
 * mode's jobs and reaper never read test rows; these read only them.
 */
import { sql } from 'kysely';
import type { Db, Tx } from '../../db/store.js';
import './tables.js';

type Queryable = Db | Tx;

// ---- paid bookings in test mode (paid.ts) -----------------------------------------------------------

/**
 * The earliest hold end at or before `until` of the account's pending TEST bookings, or null (the test
 * clock's timed work; live holds are ended by their jobs).
 */
export async function nextTestHoldEnd(db: Queryable, accountId: string, until: Date): Promise<Date | null> {
  const row = await db
    .selectFrom('bookings')
    .select((eb) => eb.fn.min('payment_expires_at').as('due'))
    .where('account_id', '=', accountId)
    .where('livemode', '=', false)
    .where('status', '=', 'pending_payment')
    .where('payment_expires_at', '<=', until)
    .executeTakeFirst();
  return row?.due ? new Date(row.due) : null;
}

/** The account's pending TEST bookings whose hold ended at or before `at`, the earliest first. */
export async function dueTestHolds(db: Queryable, accountId: string, at: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('bookings')
    .select('id')
    .where('account_id', '=', accountId)
    .where('livemode', '=', false)
    .where('status', '=', 'pending_payment')
    .where('payment_expires_at', '<=', at)
    .orderBy('payment_expires_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

// ---- the waitlist in test mode (waitlist.ts) ------------------------------------------------------

/**
 * The earliest time at or before `until` at which one of the account's TEST entries falls due: an
 * offer's hold ends, or a waiting entry's window does. Null when none.
 */
export async function nextTestWaitlistDue(
  db: Queryable,
  accountId: string,
  until: Date,
): Promise<Date | null> {
  const row = await db
    .selectFrom('waitlist_entries')
    .select(
      sql<Date | null>`min(CASE WHEN status = 'offered' THEN offer_expires_at ELSE preferred_to END)`.as(
        'due',
      ),
    )
    .where('account_id', '=', accountId)
    .where('livemode', '=', false)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'offered'), eb('offer_expires_at', '<=', until)]),
        eb.and([eb('status', '=', 'waiting'), eb('preferred_to', '<=', until)]),
      ]),
    )
    .executeTakeFirst();
  return row?.due ? new Date(row.due) : null;
}

/** The account's TEST offers whose hold ended at or before `at`, the earliest first. */
export async function expiredTestOffers(db: Queryable, accountId: string, at: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('waitlist_entries')
    .select('id')
    .where('account_id', '=', accountId)
    .where('livemode', '=', false)
    .where('status', '=', 'offered')
    .where('offer_expires_at', '<=', at)
    .orderBy('offer_expires_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}
