/** Every statement on `out_of_office` (migration 0027), the one table of the outOfOffice module. */
import { type Selectable, sql } from 'kysely';
import type { Db, Tx } from '../../db/store.js';
import type { CursorPosition } from '../../platform/pagination.js';
import type { OutOfOfficeTable } from './tables.js';
import './tables.js';

type Queryable = Db | Tx;
export type OutOfOfficeRow = Selectable<OutOfOfficeTable>;

export async function insertRange(db: Queryable, row: OutOfOfficeRow): Promise<void> {
  await db.insertInto('out_of_office').values(row).execute();
}

export interface ListFilter {
  principalId: string;
  livemode: boolean;
  /** Ranges ending after this instant. */
  from?: Date;
  /** Ranges starting before this instant. */
  to?: Date;
  after: CursorPosition | null;
  limit: number;
}

/** One mode's ranges of a principal by start (then id), after the cursor, limit + 1 rows. */
export async function listRanges(db: Queryable, f: ListFilter): Promise<OutOfOfficeRow[]> {
  let q = db
    .selectFrom('out_of_office')
    .selectAll()
    .where('principal_id', '=', f.principalId)
    .where('livemode', '=', f.livemode);
  if (f.from) q = q.where('end_time', '>', f.from);
  if (f.to) q = q.where('start_time', '<', f.to);
  if (f.after) q = q.where(sql<boolean>`(start_time, id) > (${f.after.at}, ${f.after.id})`);
  return q
    .orderBy('start_time', 'asc')
    .orderBy('id', 'asc')
    .limit(f.limit + 1)
    .execute();
}

/** Deletes one mode's range of a principal; the deleted row, or undefined when there was none. */
export async function deleteRange(
  db: Queryable,
  principalId: string,
  livemode: boolean,
  id: string,
): Promise<OutOfOfficeRow | undefined> {
  return db
    .deleteFrom('out_of_office')
    .where('id', '=', id)
    .where('principal_id', '=', principalId)
    .where('livemode', '=', livemode)
    .returningAll()
    .executeTakeFirst();
}

/**
 * A principal's ranges ending after `from` (the busy source's read): live ones only, or (test mode)
 * live and test ones.
 */
export async function rangesAfter(
  db: Queryable,
  principalId: string,
  from: Date,
  liveOnly: boolean,
): Promise<{ start_time: Date; end_time: Date }[]> {
  let q = db
    .selectFrom('out_of_office')
    .select(['start_time', 'end_time'])
    .where('principal_id', '=', principalId)
    .where('end_time', '>', from);
  if (liveOnly) q = q.where('livemode', '=', true);
  return q.execute();
}
