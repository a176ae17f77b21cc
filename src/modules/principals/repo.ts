/** SQL of the principals module: hosts (principals of kind 'host') and schedules. */
import { sql, type Updateable } from 'kysely';
import type { Db, Tx } from '../../db/store.js';
import type { PrincipalsTable } from './tables.js';
import type { Schedule, ScheduleOverride, WeeklyRule } from '../../lib/schedule.js';
import { type CursorPosition, newestFirstAfter } from '../../platform/pagination.js';
import type { NewPrincipal, PrincipalKind } from './api.js';
import './tables.js';

type Queryable = Db | Tx;

/** NOTIFY channel announcing principal changes (payload: principal id); see announceChange. */
export const PRINCIPALS_CHANNEL = 'kairos_principals';

export interface HostRow {
  id: string;
  account_id: string;
  /** False for a host made in test mode. */
  livemode: boolean;
  display_name: string;
  email: string | null;
  timezone: string;
  status: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** A principal with its stored schedule (null when it has none and so uses the default). */
export interface PrincipalScheduleRow {
  id: string;
  kind: PrincipalKind;
  account_id: string;
  livemode: boolean;
  timezone: string;
  deleted_at: Date | null;
  schedule: Schedule | null;
}

const HOST_COLUMNS = [
  'id',
  'account_id',
  'livemode',
  'display_name',
  'email',
  'timezone',
  'status',
  'created_at',
  'updated_at',
  'deleted_at',
] as const;

export async function insertHost(
  db: Queryable,
  row: Omit<HostRow, 'deleted_at' | 'status'> & { status?: string },
): Promise<HostRow> {
  return db
    .insertInto('principals')
    .values({ ...row, kind: 'host', status: row.status ?? 'active', deleted_at: null })
    .returning(HOST_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** One live host of the account, of mode `livemode` (null: of either mode), or undefined. */
export async function findHost(
  db: Queryable,
  accountId: string,
  id: string,
  livemode: boolean | null,
): Promise<HostRow | undefined> {
  let q = db
    .selectFrom('principals')
    .select(HOST_COLUMNS)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('kind', '=', 'host')
    .where('deleted_at', 'is', null);
  if (livemode !== null) q = q.where('livemode', '=', livemode);
  return q.executeTakeFirst();
}

/** Live hosts of the account in one mode, newest first, `limit + 1` rows from after `pos`. */
export async function listHosts(
  db: Queryable,
  accountId: string,
  livemode: boolean,
  pos: CursorPosition | null,
  limit: number,
): Promise<HostRow[]> {
  const q = db
    .selectFrom('principals')
    .select(HOST_COLUMNS)
    .where('account_id', '=', accountId)
    .where('kind', '=', 'host')
    .where('livemode', '=', livemode)
    .where('deleted_at', 'is', null);
  return newestFirstAfter(q, pos, limit).execute();
}

/** The account's live host `id` of one mode: whose row a change may touch. */
export interface HostKey {
  accountId: string;
  id: string;
  livemode: boolean;
}

export async function updateHost(
  db: Queryable,
  key: HostKey,
  patch: { display_name?: string; email?: string | null; timezone?: string },
  now: Date,
): Promise<HostRow | undefined> {
  return changeLiveHost(db, key, { ...patch, updated_at: now });
}

export async function softDeleteHost(db: Queryable, key: HostKey, now: Date): Promise<HostRow | undefined> {
  return changeLiveHost(db, key, { status: 'deleted', deleted_at: now, updated_at: now });
}

/** Sets `values` on the account's live host `id` of the mode; its row after the change, or undefined if none. */
async function changeLiveHost(
  db: Queryable,
  key: HostKey,
  values: Updateable<PrincipalsTable>,
): Promise<HostRow | undefined> {
  return db
    .updateTable('principals')
    .set(values)
    .where('id', '=', key.id)
    .where('account_id', '=', key.accountId)
    .where('kind', '=', 'host')
    .where('livemode', '=', key.livemode)
    .where('deleted_at', 'is', null)
    .returning(HOST_COLUMNS)
    .executeTakeFirst();
}

/** Sets a user principal's display name. */
export async function renameUser(db: Queryable, id: string, displayName: string): Promise<void> {
  await db
    .updateTable('principals')
    .set({ display_name: displayName })
    .where('id', '=', id)
    .where('kind', '=', 'user')
    .execute();
}

/**
 * Names and mail addresses of principals, deleted ones included. A user's principal row carries its
 * sign-in e-mail: the accounts module writes both rows with the same address in one transaction
 * (createUser) and no path changes either, so this module never reads the accounts module's `users`.
 */
export async function findContacts(
  db: Queryable,
  ids: readonly string[],
): Promise<{ id: string; display_name: string; email: string | null; timezone: string }[]> {
  if (ids.length === 0) return [];
  // The zone a principal reads its mails in: its schedule's, else its own.
  return db
    .selectFrom('principals as p')
    .leftJoin('schedules as s', 's.principal_id', 'p.id')
    .select(['p.id', 'p.display_name', 'p.email'])
    .select(sql<string>`coalesce(s.timezone, p.timezone)`.as('timezone'))
    .where('p.id', 'in', [...ids])
    .execute();
}

/**
 * Locks principal rows FOR NO KEY UPDATE until the transaction ends and answers them (live or not)
 * with their stored schedules and contacts: changes lock them first (lockForChange; a schedule write
 * updates the row), so they wait for the holder, and the holder waits for a change in progress; two
 * bookings of one principal wait for each other too (below). One statement, in id order. Under READ
 * COMMITTED a statement that waited for a lock (or locked a row changed after its snapshot) answers
 * the row's newest version but joined rows as of its start: a schedule written meanwhile shows as the
 * row's `schedule_seq` differing from the schedule's `seq` (upsertSchedule writes both), and only
 * those schedules are read again, in a statement of their own (a new snapshot).
 *
 * Why not FOR SHARE, which lets bookings of one principal run side by side: their occupancy rows
 * then meet in the exclusion constraint while both are in progress, each inserted before it is
 * checked, and two that see each other wait for each other until the deadlock check (1 s) ends one.
 * Under load a burst of requests for one slot resolved one per second that way (100 racers: 26 s,
 * most answered 503 while waiting for a connection). Bookings of one principal now queue at this
 * lock instead, and each one after the first finds the time taken at once. Foreign-key checks take
 * FOR KEY SHARE, which this lock does not block.
 */
export async function lockWithSchedules(
  trx: Queryable,
  ids: readonly string[],
): Promise<(PrincipalScheduleRow & { display_name: string; email: string | null })[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<LockedRow>`
    SELECT p.id, p.kind, p.account_id, p.livemode, p.display_name, p.email, p.timezone, p.deleted_at,
      s.timezone AS s_timezone, s.weekly, s.overrides, s.buffer_before_minutes, s.buffer_after_minutes,
      s.minimum_notice_minutes, s.max_days_ahead, p.schedule_seq <> coalesce(s.seq, 0) AS stale
    FROM principals p LEFT JOIN schedules s ON s.principal_id = p.id
    WHERE ${
      // One id as a scalar: PostgreSQL plans `= ANY($1)` afresh on every execution (its generic plan
      // guesses ten elements and looks dearer than a custom one), `= $1` once per connection.
      ids.length === 1 ? sql`p.id = ${ids[0]}::uuid` : sql`p.id = ANY(${[...ids]}::uuid[])`
    }
    ORDER BY p.id
    FOR NO KEY UPDATE OF p`.execute(trx);
  const stale = rows.filter((r) => r.stale).map((r) => r.id);
  // Read in a statement of its own, so with a snapshot taken after the lock.
  const fresh =
    stale.length === 0
      ? null
      : new Map((await findPrincipalsWithSchedules(trx, stale)).map((p) => [p.id, p.schedule]));
  return rows.map((r) => {
    const row = withSchedule(r);
    if (fresh?.has(r.id)) row.schedule = fresh.get(r.id)!;
    return { ...row, display_name: r.display_name, email: r.email };
  });
}

/** What lockWithSchedules' statement answers per principal. */
interface LockedRow extends ScheduleJoinRow {
  display_name: string;
  email: string | null;
  stale: boolean;
}

/** A principal row joined with its schedule row's columns (null when it has none). */
interface ScheduleJoinRow {
  id: string;
  kind: PrincipalKind;
  account_id: string;
  livemode: boolean;
  timezone: string;
  deleted_at: Date | null;
  s_timezone: string | null;
  weekly: unknown;
  overrides: unknown;
  buffer_before_minutes: number | null;
  buffer_after_minutes: number | null;
  minimum_notice_minutes: number | null;
  max_days_ahead: number | null;
}

function withSchedule(r: ScheduleJoinRow): PrincipalScheduleRow {
  return {
    id: r.id,
    kind: r.kind,
    account_id: r.account_id,
    livemode: r.livemode,
    timezone: r.timezone,
    deleted_at: r.deleted_at,
    schedule:
      r.s_timezone === null
        ? null
        : {
            timezone: r.s_timezone,
            weekly: (r.weekly ?? []) as WeeklyRule[],
            overrides: (r.overrides ?? []) as ScheduleOverride[],
            buffer_before_minutes: r.buffer_before_minutes ?? 0,
            buffer_after_minutes: r.buffer_after_minutes ?? 0,
            minimum_notice_minutes: r.minimum_notice_minutes ?? 0,
            max_days_ahead: r.max_days_ahead ?? 1,
          },
  };
}

/** Principals (live or not) with their stored schedules, in one query; unknown ids are absent. */
export async function findPrincipalsWithSchedules(
  db: Queryable,
  ids: readonly string[],
): Promise<PrincipalScheduleRow[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('principals as p')
    .leftJoin('schedules as s', 's.principal_id', 'p.id')
    .select([
      'p.id',
      'p.kind',
      'p.account_id',
      'p.livemode',
      'p.timezone',
      'p.deleted_at',
      's.timezone as s_timezone',
      's.weekly',
      's.overrides',
      's.buffer_before_minutes',
      's.buffer_after_minutes',
      's.minimum_notice_minutes',
      's.max_days_ahead',
    ])
    .where('p.id', 'in', [...ids])
    .execute();
  return rows.map(withSchedule);
}

export async function upsertSchedule(
  db: Queryable,
  principalId: string,
  s: Schedule,
  now: Date,
): Promise<void> {
  // The principal's row and its schedule's `seq` change together (lockWithSchedules reads both).
  await sql`
    WITH p AS (
      UPDATE principals SET schedule_seq = schedule_seq + 1 WHERE id = ${principalId} RETURNING schedule_seq)
    INSERT INTO schedules AS s (principal_id, timezone, weekly, overrides, buffer_before_minutes,
      buffer_after_minutes, minimum_notice_minutes, max_days_ahead, created_at, updated_at, seq)
    SELECT ${principalId}, ${s.timezone}, ${JSON.stringify(s.weekly)}::jsonb,
      ${JSON.stringify(s.overrides)}::jsonb, ${s.buffer_before_minutes}::int, ${s.buffer_after_minutes}::int,
      ${s.minimum_notice_minutes}::int, ${s.max_days_ahead}::int, ${now}::timestamptz, ${now}::timestamptz,
      p.schedule_seq
    FROM p
    ON CONFLICT (principal_id) DO UPDATE SET timezone = excluded.timezone, weekly = excluded.weekly,
      overrides = excluded.overrides, buffer_before_minutes = excluded.buffer_before_minutes,
      buffer_after_minutes = excluded.buffer_after_minutes,
      minimum_notice_minutes = excluded.minimum_notice_minutes, max_days_ahead = excluded.max_days_ahead,
      updated_at = excluded.updated_at, seq = excluded.seq`.execute(db);
}

/** Locks a principal's row until the transaction ends: readers of `lock`ed profiles wait for the change. */
export async function lockForChange(trx: Queryable, principalId: string): Promise<void> {
  await sql`SELECT 1 FROM principals WHERE id = ${principalId} FOR UPDATE`.execute(trx);
}

/** Tells every process (at commit) that the principal changed, so cached profiles are dropped. */
export async function announceChange(db: Queryable, principalId: string): Promise<void> {
  await sql`SELECT kairos_notify(${PRINCIPALS_CHANNEL}, ${principalId})`.execute(db);
}

/** A principal's time zone as stored (also of a deleted principal), or undefined when there is none. */
export async function zoneOf(db: Queryable, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('principals').select('timezone').where('id', '=', id).executeTakeFirst();
  return row?.timezone;
}

/** Inserts an account's or a user's principal row (hosts go through insertHost). */
export async function insertPrincipal(db: Queryable, p: NewPrincipal): Promise<void> {
  await db
    .insertInto('principals')
    .values({ ...p, status: 'active', updated_at: p.created_at, deleted_at: null })
    .execute();
}
