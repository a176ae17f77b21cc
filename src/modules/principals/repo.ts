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
  timezone: string;
  deleted_at: Date | null;
  schedule: Schedule | null;
}

const HOST_COLUMNS = [
  'id',
  'account_id',
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

/** One live host of the account, or undefined. */
export async function findHost(db: Queryable, accountId: string, id: string): Promise<HostRow | undefined> {
  return db
    .selectFrom('principals')
    .select(HOST_COLUMNS)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('kind', '=', 'host')
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Live hosts of the account, newest first, `limit + 1` rows from after `pos`. */
export async function listHosts(
  db: Queryable,
  accountId: string,
  pos: CursorPosition | null,
  limit: number,
): Promise<HostRow[]> {
  const q = db
    .selectFrom('principals')
    .select(HOST_COLUMNS)
    .where('account_id', '=', accountId)
    .where('kind', '=', 'host')
    .where('deleted_at', 'is', null);
  return newestFirstAfter(q, pos, limit).execute();
}

export async function updateHost(
  db: Queryable,
  accountId: string,
  id: string,
  patch: { display_name?: string; email?: string | null; timezone?: string },
  now: Date,
): Promise<HostRow | undefined> {
  return changeLiveHost(db, accountId, id, { ...patch, updated_at: now });
}

export async function softDeleteHost(
  db: Queryable,
  accountId: string,
  id: string,
  now: Date,
): Promise<HostRow | undefined> {
  return changeLiveHost(db, accountId, id, { status: 'deleted', deleted_at: now, updated_at: now });
}

/** Sets `values` on the account's live host `id`; its row after the change, or undefined if none. */
async function changeLiveHost(
  db: Queryable,
  accountId: string,
  id: string,
  values: Updateable<PrincipalsTable>,
): Promise<HostRow | undefined> {
  return db
    .updateTable('principals')
    .set(values)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('kind', '=', 'host')
    .where('deleted_at', 'is', null)
    .returning(HOST_COLUMNS)
    .executeTakeFirst();
}

/**
 * Names and mail addresses of principals, deleted ones included. A user's principal row carries its
 * sign-in e-mail: the accounts module writes both rows with the same address in one transaction
 * (createUser) and no path changes either, so this module never reads the accounts module's `users`.
 */
export async function findContacts(
  db: Queryable,
  ids: readonly string[],
): Promise<{ id: string; display_name: string; email: string | null }[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('principals')
    .select(['id', 'display_name', 'email'])
    .where('id', 'in', [...ids])
    .execute();
}

/**
 * Locks principal rows FOR SHARE until the transaction ends and answers them (live or not) with their
 * stored schedules and contacts, in one round trip: changes lock them FOR UPDATE first
 * (lockForChange), so they wait for the holder, and the holder waits for a change in progress. The
 * function (migration 0017) reads after locking, in a statement of its own: under READ COMMITTED a
 * statement that waited for a lock still reads joined tables as they were when it started (a
 * schedule may not be that old).
 */
export async function lockWithSchedules(
  trx: Queryable,
  ids: readonly string[],
): Promise<(PrincipalScheduleRow & { display_name: string; email: string | null })[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<ScheduleJoinRow & { display_name: string; email: string | null }>`
    SELECT * FROM principals_locked_profiles(${[...ids]}::uuid[])`.execute(trx);
  return rows.map((r) => ({ ...withSchedule(r), display_name: r.display_name, email: r.email }));
}

/** A principal row joined with its schedule row's columns (null when it has none). */
interface ScheduleJoinRow {
  id: string;
  kind: PrincipalKind;
  account_id: string;
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
  const values = {
    timezone: s.timezone,
    weekly: JSON.stringify(s.weekly),
    overrides: JSON.stringify(s.overrides),
    buffer_before_minutes: s.buffer_before_minutes,
    buffer_after_minutes: s.buffer_after_minutes,
    minimum_notice_minutes: s.minimum_notice_minutes,
    max_days_ahead: s.max_days_ahead,
    updated_at: now,
  };
  await db
    .insertInto('schedules')
    .values({ principal_id: principalId, created_at: now, ...values })
    .onConflict((oc) => oc.column('principal_id').doUpdateSet(values))
    .execute();
}

/** Locks a principal's row until the transaction ends: readers of `lock`ed profiles wait for the change. */
export async function lockForChange(trx: Queryable, principalId: string): Promise<void> {
  await sql`SELECT 1 FROM principals WHERE id = ${principalId} FOR UPDATE`.execute(trx);
}

/** Tells every process (at commit) that the principal changed, so cached profiles are dropped. */
export async function announceChange(db: Queryable, principalId: string): Promise<void> {
  await sql`SELECT pg_notify(${PRINCIPALS_CHANNEL}, ${principalId})`.execute(db);
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
