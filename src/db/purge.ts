/**
 * Retention purges (docs/operations.md, Retention): deleting operational rows past their retention in
 * bounded batches, so that no statement holds locks on many rows for long and a backlog (a first run
 * over a year of events) is worked off over several runs instead of in one long transaction.
 */
import { type RawBuilder, sql } from 'kysely';
import type { Db } from './store.js';

/** Rows deleted per statement. */
export const PURGE_BATCH = 1000;

/**
 * Statements per run of one purge. A periodic task runs inside the job runner's pump, so a run is kept
 * short (about a second of work); what is left goes at the next run.
 */
export const PURGE_MAX_BATCHES = 50;

/** How often a purge runs: every minute, or a quarter of its retention when that is shorter (soak runs). */
export function purgeEveryMs(retentionMs: number): number {
  return Math.max(1000, Math.min(60_000, Math.floor(retentionMs / 4)));
}

/**
 * Runs `step` (one statement that changes at most `batch` rows and answers how many it changed) until
 * it changes fewer than `batch` or `maxBatches` statements ran. Answers how many rows changed in all.
 */
export async function inBatches(
  step: () => Promise<number>,
  batch: number,
  maxBatches = PURGE_MAX_BATCHES,
): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await step();
    total += n;
    if (n < batch) break;
  }
  return total;
}

/**
 * Deletes the rows of `table` for which `where` holds, `batch` rows per statement (each statement its
 * own transaction), until none is left or `maxBatches` statements ran. `where` may name the table's
 * columns unqualified, or qualified by the table's name. Answers how many rows went.
 *
 * Each statement picks its rows by `ctid` (a TID scan, no join) and checks `where` again, so a row
 * changed by someone else meanwhile is left alone rather than deleted on an outdated reading.
 */
export async function purgeInBatches(
  db: Db,
  table: string,
  where: RawBuilder<boolean>,
  opts: { batch?: number; maxBatches?: number } = {},
): Promise<number> {
  const batch = opts.batch ?? PURGE_BATCH;
  const maxBatches = opts.maxBatches ?? PURGE_MAX_BATCHES;
  const t = sql.table(table);
  return inBatches(
    async () => {
      const res = await sql`
        DELETE FROM ${t}
        WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${t} WHERE ${where} LIMIT ${sql.lit(batch)})) AND ${where}
      `.execute(db);
      return Number(res.numAffectedRows ?? 0n);
    },
    batch,
    maxBatches,
  );
}
