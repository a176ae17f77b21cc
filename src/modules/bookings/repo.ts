/** SQL of the bookings module: bookings, their occupancy, waitlist entries (migration 0008_bookings). */
import { type Insertable, type Selectable, sql } from 'kysely';
import { part, rowsInsert, type SqlPart, statement } from '../../db/parts.js';
import type { Db, Tx } from '../../db/store.js';
import type { WriteBatch } from '../../jobs/runner.js';
import { BOOKING_LIMITS } from './schemas.js';
import type { BookingsTable, BookingStatus, WaitlistEntriesTable } from './tables.js';
import './tables.js';

type Queryable = Db | Tx;
export type BookingRow = Selectable<BookingsTable>;
export type WaitlistRow = Selectable<WaitlistEntriesTable>;

/** Statuses that hold time (docs/api.md#bookings). */
export const LIVE_STATUSES: readonly BookingStatus[] = ['pending_payment', 'confirmed'];

/** SQLSTATE of an exclusion-constraint violation: the time is taken. */
export const EXCLUSION_VIOLATION = '23P01';
/**
 * SQLSTATE of a detected deadlock. Two transactions inserting overlapping occupancy at the same moment
 * each insert their index entry, then each wait for the other to decide: PostgreSQL breaks the cycle by
 * failing one of them. On the occupancy statements that means the time was contended and the other
 * transaction holds it — the same answer as 23P01.
 */
export const DEADLOCK_DETECTED = '40P01';

/** Did an occupancy statement fail because the time is taken (or contended, see above)? */
export function isExclusionViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === EXCLUSION_VIOLATION || code === DEADLOCK_DETECTED;
}

export interface OccupancyRow {
  ownerId: string;
  principalId: string;
  start: Date;
  end: Date;
  /** The mode of its owner (docs/api.md#test-mode): the exclusion constraint is per mode. */
  livemode: boolean;
}

/** The INSERT of occupancy rows (to run alone, inside insertBooking's statement, or in a batch). */
export function occupancyInsert(rows: readonly OccupancyRow[]): SqlPart {
  return rowsInsert(
    'booking_occupancy',
    rows.map((r) => ({
      owner_id: r.ownerId,
      principal_id: r.principalId,
      during: part`tstzrange(${r.start}, ${r.end}, '[)')`,
      livemode: r.livemode,
    })),
  );
}

/**
 * The principals among `rows` (test-mode occupancy about to be taken) whose time overlaps LIVE
 * occupancy: the exclusion constraint is per mode, so a test booking checks live time with this one
 * statement (docs/api.md#test-mode: test mode never takes time from live mode, and sees it as busy).
 */
export async function liveOverlaps(db: Queryable, rows: readonly OccupancyRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const values = sql.join(
    rows.map((r) => sql`(${r.principalId}::uuid, tstzrange(${r.start}, ${r.end}, '[)'))`),
  );
  const { rows: found } = await sql<{ principal_id: string }>`
    SELECT DISTINCT o.principal_id FROM (VALUES ${values}) AS v (principal_id, during)
    JOIN booking_occupancy AS o
      ON o.principal_id = v.principal_id AND o.livemode = true AND o.during && v.during
  `.execute(db);
  return new Set(found.map((r) => r.principal_id));
}

/** Takes time for principals, all or nothing: 23P01 when any of it is taken. */
export async function insertOccupancy(trx: Tx, rows: readonly OccupancyRow[]): Promise<void> {
  if (rows.length === 0) return;
  await trx.executeQuery(statement([occupancyInsert(rows)]));
}

/**
 * Takes time inside a savepoint, all or nothing, so that a taken slot can be tried with another host
 * (round robin) or given up (a late payment) in the same transaction. True when taken, false when the
 * time was not free.
 */
export async function tryOccupy(trx: Tx, rows: readonly OccupancyRow[], savepoint: string): Promise<boolean> {
  await sql`SAVEPOINT ${sql.id(savepoint)}`.execute(trx);
  try {
    await insertOccupancy(trx, rows);
    await sql`RELEASE SAVEPOINT ${sql.id(savepoint)}`.execute(trx);
    return true;
  } catch (err) {
    if (!isExclusionViolation(err)) throw err;
    await sql`ROLLBACK TO SAVEPOINT ${sql.id(savepoint)}`.execute(trx);
    return false;
  }
}

/**
 * Moves an owner's time for each principal (a reschedule) in one statement; 23P01 when the new time
 * is taken.
 */
export async function moveOccupancy(trx: Tx, rows: readonly OccupancyRow[]): Promise<void> {
  if (rows.length === 0) return;
  const values = sql.join(
    rows.map((r) => sql`(${r.ownerId}, ${r.principalId}::uuid, tstzrange(${r.start}, ${r.end}, '[)'))`),
  );
  await sql`
    UPDATE booking_occupancy AS o SET during = v.during
    FROM (VALUES ${values}) AS v (owner_id, principal_id, during)
    WHERE o.owner_id = v.owner_id AND o.principal_id = v.principal_id
  `.execute(trx);
}

/** Frees an owner's time; returns the principals it held. */
export async function releaseOccupancy(trx: Tx, ownerId: string): Promise<string[]> {
  const rows = await trx
    .deleteFrom('booking_occupancy')
    .where('owner_id', '=', ownerId)
    .returning('principal_id')
    .execute();
  return rows.map((r) => r.principal_id);
}

/**
 * Writes a booking and, when given, the time it takes, in one statement (one round trip; a
 * data-modifying CTE): 23P01 when any of that time is taken, and then neither is written.
 */
export async function insertBooking(
  trx: Tx,
  row: Insertable<BookingsTable>,
  occupancy: readonly OccupancyRow[] = [],
): Promise<BookingRow> {
  const insert = rowsInsert('bookings', [row], ['*']);
  const { rows } = await trx.executeQuery<BookingRow>(
    statement(
      occupancy.length === 0 ? [insert] : ['WITH occupied AS (', occupancyInsert(occupancy), ') ', insert],
    ),
  );
  if (!rows[0]) throw new Error('insertBooking: no row returned');
  return rows[0];
}

/** What a new booking's row is written from: its insert, with its JSON columns as given. */
export interface NewBooking {
  /** Its times as Dates (the insert type also takes strings, which the row in memory cannot be). */
  row: Insertable<BookingsTable> & {
    start_time: Date;
    end_time: Date;
    created_at: Date;
    updated_at: Date;
    payment_expires_at?: Date | null;
    cancelled_at?: Date | null;
    paid_at?: Date | null;
    occurrence_start?: Date | null;
  };
  answers: Record<string, string | boolean>;
  metadata: Record<string, string>;
}

/**
 * The row insertBooking's statement answers for `b`, made without asking: every column is given or
 * null (the table has no default or trigger that changes a new row; a test compares the two).
 */
export function newBookingRow(b: NewBooking): BookingRow {
  const r = b.row;
  return {
    id: r.id,
    account_id: r.account_id,
    principal_id: r.principal_id,
    host_ids: r.host_ids,
    booking_link_id: r.booking_link_id ?? null,
    livemode: r.livemode ?? true,
    status: r.status,
    start_time: r.start_time,
    end_time: r.end_time,
    customer_email: r.customer_email,
    customer_name: r.customer_name,
    customer_timezone: r.customer_timezone ?? null,
    notes: r.notes ?? null,
    answers: b.answers,
    metadata: b.metadata,
    payment_amount: r.payment_amount ?? null,
    payment_currency: r.payment_currency ?? null,
    checkout_url: r.checkout_url ?? null,
    payment_expires_at: r.payment_expires_at ?? null,
    cancellation_reason: r.cancellation_reason ?? null,
    cancelled_at: r.cancelled_at ?? null,
    manage_token_hash: r.manage_token_hash,
    manage_nonce: r.manage_nonce,
    sequence: r.sequence ?? 0,
    waitlist_entry_id: r.waitlist_entry_id ?? null,
    title: r.title ?? null,
    proposal_id: r.proposal_id ?? null,
    stripe_session_id: r.stripe_session_id ?? null,
    stripe_account_id: r.stripe_account_id ?? null,
    stripe_payment_intent: r.stripe_payment_intent ?? null,
    paid_at: r.paid_at ?? null,
    refund_status: r.refund_status ?? null,
    refund_id: r.refund_id ?? null,
    refund_error: r.refund_error ?? null,
    series_id: r.series_id ?? null,
    occurrence_start: r.occurrence_start ?? null,
    seat_session_id: r.seat_session_id ?? null,
    guests: r.guests ?? [],
    no_show: r.no_show ?? [],
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/**
 * insertBooking's writes for a WriteBatch, its answer made by newBookingRow: the occupancy rows and
 * the booking as two parts of the batch's statement (a taken time fails the whole statement with
 * 23P01, so nothing of it is written).
 */
export function addBookingWrites(
  batch: WriteBatch,
  b: NewBooking,
  occupancy: readonly OccupancyRow[],
): BookingRow {
  if (occupancy.length > 0) batch.add(occupancyInsert(occupancy));
  batch.add(rowsInsert('bookings', [b.row]));
  return newBookingRow(b);
}

/** The account's booking of that mode (another account's or mode's: undefined). */
export async function findBooking(
  db: Queryable,
  accountId: string,
  id: string,
  livemode: boolean,
): Promise<BookingRow | undefined> {
  return db
    .selectFrom('bookings')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
}

export async function bookingById(db: Queryable, id: string): Promise<BookingRow | undefined> {
  return db.selectFrom('bookings').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function lockBooking(trx: Tx, id: string): Promise<BookingRow | undefined> {
  return trx.selectFrom('bookings').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function findByTokenHash(db: Queryable, hash: string): Promise<BookingRow | undefined> {
  return db.selectFrom('bookings').selectAll().where('manage_token_hash', '=', hash).executeTakeFirst();
}

export async function updateBooking(
  trx: Queryable,
  id: string,
  set: Partial<Insertable<BookingsTable>>,
): Promise<BookingRow> {
  return trx.updateTable('bookings').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

// ---- bookings of accepted proposals (meetings.ts) ---------------------------------------------------

/** Writes several bookings in one statement (their time is taken before, by insertOccupancy). */
export async function insertBookings(
  trx: Tx,
  rows: readonly Insertable<BookingsTable>[],
): Promise<BookingRow[]> {
  return trx.insertInto('bookings').values(rows).returningAll().execute();
}

/** The confirmed bookings of a proposal, locked until commit. */
export async function lockConfirmedOfProposal(trx: Tx, proposalId: string): Promise<BookingRow[]> {
  return trx
    .selectFrom('bookings')
    .selectAll()
    .where('proposal_id', '=', proposalId)
    .where('status', '=', 'confirmed')
    .forUpdate()
    .execute();
}

/** Frees the time of several owners at once. */
export async function releaseOccupancyOf(trx: Tx, ownerIds: readonly string[]): Promise<void> {
  await trx
    .deleteFrom('booking_occupancy')
    .where('owner_id', 'in', [...ownerIds])
    .execute();
}

/** Marks several bookings cancelled (each one sequence further). */
export async function cancelBookings(
  trx: Tx,
  ids: readonly string[],
  reason: string | null,
  now: Date,
): Promise<BookingRow[]> {
  return trx
    .updateTable('bookings')
    .set((eb) => ({
      status: 'cancelled',
      cancellation_reason: reason,
      cancelled_at: now,
      sequence: eb('sequence', '+', 1),
      updated_at: now,
    }))
    .where('id', 'in', [...ids])
    .returningAll()
    .execute();
}

/**
 * Runs `work` inside a savepoint: when it finds the time taken (23P01, or a deadlock between two takers
 * of it) only its writes are undone and the answer is false; the transaction goes on.
 */
export async function undoIfTaken(
  trx: Tx,
  savepoint: string,
  work: () => Promise<unknown>,
): Promise<boolean> {
  await sql`SAVEPOINT ${sql.id(savepoint)}`.execute(trx);
  try {
    await work();
    await sql`RELEASE SAVEPOINT ${sql.id(savepoint)}`.execute(trx);
    return true;
  } catch (err) {
    if (!isExclusionViolation(err)) throw err;
    await sql`ROLLBACK TO SAVEPOINT ${sql.id(savepoint)}`.execute(trx);
    return false;
  }
}

/** A pending refund that will be retried: why the last attempt failed. */
export async function recordRefundRetry(db: Queryable, id: string, error: string, now: Date): Promise<void> {
  await db
    .updateTable('bookings')
    .set({ refund_error: error, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Ends a pending refund (succeeded or failed), once. */
export async function finishRefund(
  db: Queryable,
  id: string,
  set: Pick<Insertable<BookingsTable>, 'refund_status' | 'refund_id' | 'refund_error' | 'updated_at'>,
): Promise<void> {
  await db
    .updateTable('bookings')
    .set(set)
    .where('id', '=', id)
    .where('refund_status', '=', 'pending')
    .execute();
}

/**
 * A principal's occupancy ending after `from` (busy.ts keeps it in memory). Asked as an overlap with
 * [from, ∞), which the exclusion constraint's index answers by itself: `upper(during) > from` would
 * read every range the principal ever had and filter them, a cost that grows with its history.
 */
export function occupancyAfterQuery(db: Queryable, principalId: string, from: Date, liveOnly = true) {
  const q = db
    .selectFrom('booking_occupancy')
    .select([sql<Date>`lower(during)`.as('s'), sql<Date>`upper(during)`.as('e')])
    .where('principal_id', '=', principalId);
  // Live mode sees live occupancy; test mode both (docs/api.md#test-mode). The index is (principal_id,
  // livemode, during); principal and time bound the scan, the mode is at worst a filter on what they find.
  return (liveOnly ? q.where('livemode', '=', sql.lit(true)) : q).where(
    sql<boolean>`during && tstzrange(${from}, NULL, '[)')`,
  );
}

export const occupancyAfter = (db: Queryable, principalId: string, from: Date, liveOnly = true) =>
  occupancyAfterQuery(db, principalId, from, liveOnly).execute();

/** One mode's confirmed or pending bookings occupying `principalId` that overlap [start, end), by start. */
export function liveBookingsIn(db: Queryable, principalId: string, live: boolean, start: Date, end: Date) {
  return db
    .selectFrom('bookings')
    .select(['id', 'start_time', 'end_time'])
    .where(sql<boolean>`${principalId}::uuid = ANY(host_ids) AND status IN ('confirmed','pending_payment')`)
    .where('livemode', '=', live)
    .where('start_time', '<', end)
    .where('end_time', '>', start)
    .orderBy('start_time')
    .execute();
}

export interface ListFilter {
  accountId: string;
  /** Only bookings of this mode (docs/api.md#test-mode). */
  livemode: boolean;
  principalId?: string;
  bookingLinkId?: string;
  status?: BookingStatus;
  from?: Date;
  to?: Date;
  after: { at: Date; id: string } | null;
  limit: number;
}

/** The account's bookings by start time (then id), after the cursor, limit + 1 rows. */
export async function listBookings(db: Queryable, f: ListFilter): Promise<BookingRow[]> {
  return listBookingsQuery(db, f).execute();
}

export function listBookingsQuery(db: Queryable, f: ListFilter) {
  let q = db
    .selectFrom('bookings')
    .selectAll()
    .where('account_id', '=', f.accountId)
    .where('livemode', '=', f.livemode);
  if (f.principalId) {
    const p = f.principalId;
    q = q.where((eb) =>
      eb.or([eb('principal_id', '=', p), eb(sql<string>`${p}::uuid`, '=', eb.fn.any('host_ids'))]),
    );
  }
  if (f.bookingLinkId) q = q.where('booking_link_id', '=', f.bookingLinkId);
  if (f.status) q = q.where('status', '=', f.status);
  // A booking lasts at most BOOKING_LIMITS.maxMinutes (migration 0020 says so too): one ending after
  // `from` started at most that long before it, so the index scan starts there, not at the first.
  if (f.from)
    q = q
      .where('end_time', '>', f.from)
      .where('start_time', '>', new Date(f.from.getTime() - BOOKING_LIMITS.maxMinutes * 60_000));
  if (f.to) q = q.where('start_time', '<', f.to);
  if (f.after) q = q.where(sql<boolean>`(start_time, id) > (${f.after.at}, ${f.after.id})`);
  return q
    .orderBy('start_time', 'asc')
    .orderBy('id', 'asc')
    .limit(f.limit + 1);
}

/**
 * Round robin (docs/api.md#booking-links): per host, live bookings of the link starting within 30
 * days of `around`, and when the host was last booked through it.
 */
export async function roundRobinLoad(
  db: Queryable,
  linkId: string,
  hostIds: readonly string[],
  around: Date,
): Promise<Map<string, { count: number; last: number }>> {
  const DAY = 86_400_000;
  const rows = await db
    .selectFrom('bookings')
    .select(['principal_id', sql<string>`count(*)`.as('n'), sql<Date>`max(created_at)`.as('last')])
    .where('booking_link_id', '=', linkId)
    .where('status', 'in', [...LIVE_STATUSES])
    .where('principal_id', 'in', [...hostIds])
    .where('start_time', '>=', new Date(around.getTime() - 30 * DAY))
    .where('start_time', '<', new Date(around.getTime() + 30 * DAY))
    .groupBy('principal_id')
    .execute();
  return new Map(rows.map((r) => [r.principal_id, { count: Number(r.n), last: new Date(r.last).getTime() }]));
}

// ---- waitlist --------------------------------------------------------------------------------------

export async function insertEntry(
  db: Queryable,
  row: Insertable<WaitlistEntriesTable>,
): Promise<WaitlistRow> {
  return db.insertInto('waitlist_entries').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function listEntries(
  db: Queryable,
  linkId: string,
  after: { at: Date; id: string } | null,
  limit: number,
): Promise<WaitlistRow[]> {
  let q = db.selectFrom('waitlist_entries').selectAll().where('booking_link_id', '=', linkId);
  // The cursor names the last entry seen; entries follow in order of arrival (seq).
  if (after)
    q = q.where('seq', '>', db.selectFrom('waitlist_entries').select('seq').where('id', '=', after.id));
  return q
    .orderBy('seq', 'asc')
    .limit(limit + 1)
    .execute();
}

/** The earliest waiting entry of the link whose window contains [start, end), locked. */
export async function earliestWaiting(
  trx: Tx,
  linkId: string,
  start: Date,
  end: Date,
): Promise<WaitlistRow | undefined> {
  return earliestWaitingQuery(trx, linkId, start, end).executeTakeFirst();
}

/**
 * Read through `waitlist_waiting_idx`: the link's waiting entries whose window ends at or after
 * `end`, sorted by arrival. The status is a literal, as the index's condition must be for a
 * prepared statement's generic plan to use it. Ordered by `seq` itself, that plan walks
 * `(booking_link_id, seq)` instead, through every entry the link ever had (booked, expired, or
 * waiting for a window long passed), so the order is by `seq + 0`, which no index provides.
 */
export function earliestWaitingQuery(trx: Tx, linkId: string, start: Date, end: Date) {
  return trx
    .selectFrom('waitlist_entries')
    .selectAll()
    .where('booking_link_id', '=', linkId)
    .where('status', '=', sql.lit('waiting'))
    .where('preferred_from', '<=', start)
    .where('preferred_to', '>=', end)
    .orderBy(sql`seq + 0`)
    .limit(1)
    .forUpdate()
    .skipLocked();
}

export async function lockEntry(trx: Tx, id: string): Promise<WaitlistRow | undefined> {
  return trx.selectFrom('waitlist_entries').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function findEntryByClaimHash(db: Queryable, hash: string): Promise<WaitlistRow | undefined> {
  return db
    .selectFrom('waitlist_entries')
    .selectAll()
    .where('claim_token_hash', '=', hash)
    .executeTakeFirst();
}

export async function updateEntry(
  trx: Queryable,
  id: string,
  set: Partial<Insertable<WaitlistEntriesTable>>,
): Promise<WaitlistRow> {
  return trx
    .updateTable('waitlist_entries')
    .set(set)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Live offers whose hold ended before `now` (the reaper passes them on; test mode's are timed work). */
export async function expiredOffers(db: Queryable, now: Date, limit: number): Promise<string[]> {
  const rows = await expiredOffersQuery(db, now, limit).execute();
  return rows.map((r) => r.id);
}

/** Read through `waitlist_offers_idx`, whose condition the literal status states (see earliestWaitingQuery). */
export function expiredOffersQuery(db: Queryable, now: Date, limit: number) {
  return db
    .selectFrom('waitlist_entries')
    .select('id')
    .where('status', '=', sql.lit('offered'))
    .where('offer_expires_at', '<=', now)
    .where('livemode', '=', true)
    .orderBy('offer_expires_at')
    .limit(limit);
}

/**
 * Waiting entries whose window ended at or before `now`: no freed time can be offered to them any more.
 * Read through `waitlist_window_end_idx`, whose condition the literal status states.
 */
export function windowEndedQuery(db: Queryable, now: Date, limit: number, testAccount?: string) {
  const q = db
    .selectFrom('waitlist_entries')
    .select('id')
    .where('status', '=', sql.lit('waiting'))
    .where('preferred_to', '<=', now);
  // Live mode's sweep: live rows only. Test mode's timed work: one account's test rows.
  return (
    testAccount === undefined
      ? q.where('livemode', '=', true)
      : q.where('livemode', '=', false).where('account_id', '=', testAccount)
  )
    .orderBy('preferred_to')
    .limit(limit);
}

/**
 * Marks up to `limit` of them expired, skipping any another transaction holds locked at this moment
 * (an owner removing it, say): the next sweep finds it if it is still waiting. No offer can be taking
 * one: freed time is offered only when it starts after now, inside the entry's window. How many it
 * marked.
 */
export async function expireEndedWindows(
  db: Queryable,
  now: Date,
  limit: number,
  testAccount?: string,
): Promise<number> {
  const r = await db
    .updateTable('waitlist_entries')
    .set({ status: 'expired', updated_at: now })
    .where('id', 'in', windowEndedQuery(db, now, limit, testAccount).forUpdate().skipLocked())
    .where('status', '=', sql.lit('waiting'))
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
