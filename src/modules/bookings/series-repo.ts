/**
 * SQL of recurring series and seated sessions (migration 0026; docs/design.md#series-and-seats):
 * the series rows and their occurrences, the conflicts of many occupancy rows in one statement, and a
 * seat taken or given back by one statement each (never check-then-insert).
 */
import { type Insertable, type Selectable, sql } from 'kysely';
import type { Db, Tx } from '../../db/store.js';
import type { OccupancyRow } from './repo.js';
import { LIVE_STATUSES } from './repo.js';
import type { BookingSeriesTable, SeatSessionsTable } from './tables.js';
import './tables.js';

type Queryable = Db | Tx;
export type SeriesRow = Selectable<BookingSeriesTable>;
export type SessionRow = Selectable<SeatSessionsTable>;
export type NewSeries = Insertable<BookingSeriesTable> & { created_at: Date; updated_at: Date };

/**
 * The indexes of `rows` whose time overlaps occupancy already stored, in one statement: of their own
 * mode, and live occupancy too for test-mode rows (test mode sees live time as busy).
 */
export async function overlapping(db: Queryable, rows: readonly OccupancyRow[]): Promise<Set<number>> {
  if (rows.length === 0) return new Set();
  const values = sql.join(
    rows.map(
      (r, i) =>
        sql`(${i}::int, ${r.principalId}::uuid, tstzrange(${r.start}, ${r.end}, '[)'), ${r.livemode}::boolean)`,
    ),
  );
  // One probe of the exclusion constraint's index per row (LATERAL … LIMIT 1): a join of the VALUES
  // with the table is planned as a scan of every occupancy row, a cost growing with the host's history.
  const { rows: found } = await sql<{ i: number }>`
    SELECT v.i FROM (VALUES ${values}) AS v (i, principal_id, during, livemode)
    CROSS JOIN LATERAL (
      SELECT 1 FROM booking_occupancy AS o
      WHERE o.principal_id = v.principal_id AND (o.livemode = v.livemode OR o.livemode)
        AND o.during && v.during
      LIMIT 1
    ) AS hit
  `.execute(db);
  return new Set(found.map((r) => Number(r.i)));
}

export async function findSeries(
  db: Queryable,
  accountId: string,
  id: string,
  livemode: boolean,
): Promise<SeriesRow | undefined> {
  return db
    .selectFrom('booking_series')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
}

export async function seriesById(db: Queryable, id: string): Promise<SeriesRow | undefined> {
  return db.selectFrom('booking_series').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The series row, locked until commit: changes of one series (cancels, moves) take turns on it. */
export async function lockSeries(trx: Tx, id: string): Promise<SeriesRow | undefined> {
  return trx.selectFrom('booking_series').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The series' invite SEQUENCE, one further (every change of an occurrence is a change of the series). */
export async function bumpSeries(trx: Tx, id: string, now: Date): Promise<SeriesRow> {
  return trx
    .updateTable('booking_series')
    .set((eb) => ({ sequence: eb('sequence', '+', 1), updated_at: now }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Every occurrence of a series, by start. */
export async function occurrencesOf(db: Queryable, seriesId: string) {
  return db
    .selectFrom('bookings')
    .selectAll()
    .where('series_id', '=', seriesId)
    .orderBy('start_time')
    .orderBy('id')
    .execute();
}

/** When the series' last occurrence ends (undefined: no such series). */
export async function lastEndOf(db: Queryable, seriesId: string): Promise<Date | undefined> {
  const r = await db
    .selectFrom('bookings')
    .select((eb) => eb.fn.max('end_time').as('end'))
    .where('series_id', '=', seriesId)
    .executeTakeFirst();
  return r?.end ? new Date(r.end) : undefined;
}

/**
 * The live occurrences of a series a cancel of `scope` takes, locked: one (`single`), this one and the
 * later ones (`following`, from `from`), or every one starting after `now` (`series`).
 */
export async function lockOccurrencesToCancel(
  trx: Tx,
  seriesId: string,
  scope: { one: string } | { from: Date },
) {
  let q = trx
    .selectFrom('bookings')
    .selectAll()
    .where('series_id', '=', seriesId)
    .where('status', 'in', [...LIVE_STATUSES]);
  q = 'one' in scope ? q.where('id', '=', scope.one) : q.where('start_time', '>=', scope.from);
  return q.orderBy('start_time').forUpdate().execute();
}

// ---- seats ----------------------------------------------------------------------------------------

export interface SeatTake {
  id: string;
  accountId: string;
  livemode: boolean;
  linkId: string;
  start: Date;
  end: Date;
  hostIds: readonly string[];
  capacity: number;
  now: Date;
}

/**
 * Takes a seat of the link's slot in one statement: a new session (with its first seat), or one more
 * seat of the slot's session while it has room (and is the same slot: same end). No row: full, or the
 * slot's session is another length. `created`: the session is new, and its occupancy is to be taken.
 * Concurrent takers queue on the session row; the CHECK makes an overfull session impossible.
 */
export async function takeSeat(
  trx: Tx,
  s: SeatTake,
): Promise<{ id: string; created: boolean; seats_taken: number } | undefined> {
  const { rows } = await sql<{ id: string; created: boolean; seats_taken: number }>`
    INSERT INTO seat_sessions AS s
      (id, account_id, livemode, booking_link_id, start_time, end_time, host_ids, capacity, seats_taken, created_at)
    VALUES (${s.id}, ${s.accountId}::uuid, ${s.livemode}, ${s.linkId}, ${s.start}, ${s.end},
      ${sql.val([...s.hostIds])}::uuid[], ${s.capacity}, 1, ${s.now})
    ON CONFLICT (booking_link_id, start_time) DO UPDATE SET seats_taken = s.seats_taken + 1
      WHERE s.seats_taken < s.capacity AND s.end_time = excluded.end_time
    RETURNING s.id, (s.xmax = 0) AS created, s.seats_taken
  `.execute(trx);
  return rows[0];
}

/** The link's session at `start` (why a seat could not be taken), or undefined. */
export async function sessionAt(db: Queryable, linkId: string, start: Date): Promise<SessionRow | undefined> {
  return db
    .selectFrom('seat_sessions')
    .selectAll()
    .where('booking_link_id', '=', linkId)
    .where('start_time', '=', start)
    .executeTakeFirst();
}

/**
 * Gives a seat back: one fewer taken; the last one deletes the session and the time it held, in the
 * same transaction. Answers the principals whose time was freed (none while seats remain).
 */
export async function releaseSeat(trx: Tx, sessionId: string): Promise<string[]> {
  const left = await trx
    .updateTable('seat_sessions')
    .set((eb) => ({ seats_taken: eb('seats_taken', '-', 1) }))
    .where('id', '=', sessionId)
    .where('seats_taken', '>', 0)
    .returning('seats_taken')
    .executeTakeFirst();
  if (!left || left.seats_taken > 0) return [];
  await trx.deleteFrom('seat_sessions').where('id', '=', sessionId).where('seats_taken', '=', 0).execute();
  const freed = await trx
    .deleteFrom('booking_occupancy')
    .where('owner_id', '=', sessionId)
    .returning('principal_id')
    .execute();
  return freed.map((r) => r.principal_id);
}

/** A seated link's sessions overlapping [from, to), with the occupancy each holds (one statement). */
export async function sessionsOfLink(db: Queryable, linkId: string, from: Date, to: Date) {
  return db
    .selectFrom('seat_sessions as s')
    .leftJoin('booking_occupancy as o', 'o.owner_id', 's.id')
    .select([
      's.id',
      's.start_time',
      's.end_time',
      's.capacity',
      's.seats_taken',
      'o.principal_id',
      sql<Date | null>`lower(o.during)`.as('o_start'),
      sql<Date | null>`upper(o.during)`.as('o_end'),
    ])
    .where('s.booking_link_id', '=', linkId)
    .where('s.start_time', '<', to)
    .where('s.end_time', '>', from)
    .orderBy('s.start_time')
    .execute();
}
