/**
 * The SQL of the background-work mechanism (src/jobs/runner.ts runs the pump): enqueueing, claiming
 * (FOR UPDATE SKIP LOCKED, with a lease), finishing, retrying, rescheduling, lease renewal and the
 * periodic-task ticks of `job_schedules`. Plain functions taking the database or transaction first.
 */
import {
  type Compilable,
  type Kysely,
  type OperationNodeSource,
  type QueryCreator,
  type RawBuilder,
  sql,
} from 'kysely';
import { compiledPart, part, SqlPart, statement } from '../db/parts.js';
import type { Db, Tx } from '../db/store.js';
import type { DB } from '../db/types.js';

export const JOBS_CHANNEL = 'kairos_jobs';

export interface Job<P = unknown> {
  id: string;
  queue: string;
  payload: P;
  /** How many times this job was claimed before, counting this claim. */
  attempts: number;
  /**
   * What the queue's `claimWith` read beside this job in the statement that claimed it (RegisterOptions):
   * absent for a job that did not come from such a claim.
   */
  read?: unknown;
}

/** A SQL expression of a claimed job's payload (`payload`: its jsonb), read in the claim's statement. */
export type ClaimRead = (payload: RawBuilder<unknown>) => RawBuilder<unknown>;

/**
 * Enqueues a job inside the caller's transaction: it exists (and wakes the workers) only if that
 * transaction commits.
 */
export async function enqueue(trx: Tx | Db, queue: string, payload: unknown, runAt: Date): Promise<string> {
  const [id] = await enqueueMany(trx, queue, [{ payload, runAt }]);
  return id!;
}

/**
 * Enqueues jobs of one queue inside the caller's transaction, in one statement with the wake-up
 * (a notification sent once after the commit: db/dialect.ts).
 */
export async function enqueueMany(
  trx: Tx | Db,
  queue: string,
  items: { payload: unknown; runAt: Date }[],
): Promise<string[]> {
  if (items.length === 0) return [];
  const rows = await sql<{ id: string | number }>`
    WITH added AS (${jobsInsert(
      trx,
      items.map((i) => ({ queue, ...i })),
    ).returning('id')})
    SELECT added.id, kairos_notify(${JOBS_CHANNEL}, ${queue}) AS woken FROM added`.execute(trx);
  return rows.rows.map((r) => String(r.id));
}

/**
 * A part of one statement (a data-modifying CTE named `name`) that enqueues jobs of `queue` only for
 * the rows another CTE of that statement answered: `payloads` maps a key to its job's payload, and
 * `from` names the CTE whose `id` column holds the keys and whose `run_at` column says when each job
 * is due (an INSERT … ON CONFLICT DO NOTHING RETURNING answers only the rows it made, an UPDATE …
 * RETURNING only those it changed). `wakeUp` selects the queue's NOTIFY when a job was added. One
 * round trip for rows and their jobs, as WriteBatch does for rows nobody reads back.
 */
export function jobsForRows(
  name: string,
  from: string,
  queue: string,
  payloads: ReadonlyMap<string, unknown>,
): { part: RawBuilder<unknown>; wakeUp: RawBuilder<unknown> } {
  const keys = [...payloads.keys()];
  const values = keys.map((k) => JSON.stringify(payloads.get(k)));
  return {
    part: sql`${sql.id(name)} AS (
      INSERT INTO jobs (queue, payload, run_at, attempts, created_at)
      SELECT ${queue}::text, p.payload, f.run_at, 0, f.run_at
      FROM ${sql.id(from)} AS f
      JOIN unnest(${keys}::text[], ${values}::jsonb[]) AS p(key, payload) ON p.key = f.id
      RETURNING id)`,
    wakeUp: sql`SELECT kairos_notify(${JOBS_CHANNEL}, ${queue}) AS woken
      FROM (SELECT 1 FROM ${sql.id(name)} LIMIT 1) AS added`,
  };
}

/** A job to add: its queue, its payload (JSON) and when it is due. */
export interface JobSpec {
  queue: string;
  payload: unknown;
  runAt: Date;
  /**
   * A condition evaluated in the batch's statement: the job is added only when it holds (an event's
   * dispatch only when a subscription could want it).
   */
  onlyIf?: SqlPart;
}

/**
 * A write for a WriteBatch: an INSERT or UPDATE builder whose answer nobody reads, such as an event
 * or an outbox mail (given with `addThen`, its RETURNING tells the statement whether it wrote).
 */
export type BatchedWrite = (db: Kysely<DB>) => OperationNodeSource & Compilable;

/** A job of a batch, with the write whose row it waits for (addThen). */
type BatchedJob = JobSpec & { afterWrite?: number };

/**
 * Writes gathered during a transaction and sent as one statement (data-modifying CTEs; docs/
 * docs/design.md#store): rows nobody reads back, such as a booking's event and its
 * mails, and the jobs about them, with the wake-up of each of their queues. One round trip instead of
 * one per part; the parts of one statement all happen or none does. Whoever makes a batch runs it,
 * in the same transaction, before that commits. Writes given as parts (src/db/parts.ts) make the
 * statement's text once per shape; a builder is compiled each time.
 */
export class WriteBatch {
  private writes: (BatchedWrite | SqlPart)[] = [];
  private jobs: BatchedJob[] = [];

  add(write: BatchedWrite | SqlPart | null, jobs: readonly JobSpec[] = []): void {
    if (write) this.writes.push(write);
    this.jobs.push(...jobs);
  }

  /**
   * A write that may write nothing (an INSERT … SELECT … WHERE, an upsert with a condition) and must
   * say what it wrote with RETURNING: its jobs are added only when it answered a row, decided in the
   * batch's statement.
   */
  addThen(write: BatchedWrite | SqlPart, jobs: readonly Omit<JobSpec, 'onlyIf'>[]): void {
    const afterWrite = this.writes.length;
    this.writes.push(write);
    for (const j of jobs) this.jobs.push({ ...j, afterWrite });
  }

  /** Sends what was added (nothing when nothing was) and empties the batch. */
  async run(trx: Tx | Db): Promise<void> {
    const writes = this.writes;
    const jobs = this.jobs;
    this.writes = [];
    this.jobs = [];
    if (writes.length === 0 && jobs.length === 0) return;
    const partOf = (w: BatchedWrite | SqlPart) => (w instanceof SqlPart ? w : compiledPart(w(trx).compile()));
    if (writes.length === 1 && jobs.length === 0) {
      await trx.executeQuery(statement([partOf(writes[0]!)]));
      return;
    }
    const pieces: (string | SqlPart)[] = [];
    const cte = (name: string, ...body: (string | SqlPart)[]) => {
      pieces.push(pieces.length === 0 ? `WITH ${name} AS (` : `, ${name} AS (`, ...body, ')');
    };
    for (const [i, w] of writes.entries()) cte(`w${i}`, partOf(w));
    // Every job in one insert (one ModifyTable over `jobs` and its indexes, not one per job), each a
    // SELECT of its own: conditional ones carry their WHERE. Each queue that got a job is woken, once
    // (kairos_notify notes a repeated notification once; it is sent after the commit: db/dialect.ts).
    const selects: (string | SqlPart)[] = [];
    for (const j of jobs) {
      const payload = JSON.stringify(j.payload);
      selects.push(
        selects.length === 0 ? '' : ' UNION ALL ',
        part`SELECT ${j.queue}::text, ${payload}::jsonb, ${j.runAt}::timestamptz, 0, ${j.runAt}::timestamptz`,
      );
      if (j.onlyIf) selects.push(' WHERE ', j.onlyIf);
      else if (j.afterWrite !== undefined) selects.push(` WHERE EXISTS (SELECT 1 FROM w${j.afterWrite})`);
    }
    if (selects.length === 0) {
      pieces.push(' SELECT NULL WHERE false');
    } else {
      cte(
        'added',
        'INSERT INTO jobs (queue, payload, run_at, attempts, created_at) ',
        ...selects,
        ' RETURNING queue',
      );
      pieces.push(` SELECT kairos_notify('${JOBS_CHANNEL}', added.queue) FROM added`);
    }
    await trx.executeQuery(statement(pieces));
  }
}

/** A job's row as inserted. */
function jobRow(j: JobSpec) {
  return {
    queue: j.queue,
    payload: JSON.stringify(j.payload),
    run_at: j.runAt,
    attempts: 0,
    created_at: j.runAt,
  };
}

function jobsInsert(db: QueryCreator<DB>, jobs: readonly JobSpec[]) {
  return db.insertInto('jobs').values(jobs.map(jobRow));
}

/**
 * Claims up to `n` due jobs of one queue for `workerId` until `now + leaseMs` (oldest first, skipping
 * rows other workers hold), counting the attempt.
 */
export async function claimJobs(
  db: Db,
  queue: string,
  n: number,
  leaseMs: number,
  now: Date,
  workerId: string,
  read?: ClaimRead,
): Promise<Job[]> {
  const claim = sql`
      UPDATE jobs SET locked_by = ${workerId}, locked_until = ${new Date(now.getTime() + leaseMs)},
        attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM jobs
        WHERE queue = ${queue} AND run_at <= ${now} AND (locked_until IS NULL OR locked_until < ${now})
        ORDER BY run_at, id
        LIMIT ${n}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING id, queue, payload, attempts`;
  type Row = { id: string; queue: string; payload: unknown; attempts: number; read?: unknown };
  const { rows } = await (read
    ? sql<Row>`WITH c AS (${claim}) SELECT c.*, ${read(sql`c.payload`)} AS read FROM c`
    : sql<Row>`${claim}`
  ).execute(db);
  return rows.map((r) => ({
    id: String(r.id),
    queue: r.queue,
    payload: r.payload,
    attempts: r.attempts,
    ...(read ? { read: r.read } : {}),
  }));
}

export interface PartitionedClaim {
  queue: string;
  /** The payload key that names a job's partition. */
  partitionKey: string;
  /** Running jobs allowed per partition. */
  partitionConcurrency: number;
  /** Partitions with no room left: their jobs are not candidates. */
  full: string[];
  /** JSON object: running jobs per partition value in this process. */
  running: string;
  /** How many of the oldest due jobs are candidates (a bounded scan). */
  scan: number;
  /** Claim at most this many. */
  free: number;
  now: Date;
  leaseMs: number;
  workerId: string;
  /** Read beside each claimed job (RegisterOptions.claimWith). */
  read?: ClaimRead;
}

/**
 * Claims for a partitioned queue: among the oldest `scan` due jobs outside full partitions, at most
 * each partition's room (its limit minus what runs here), at most `free` in all. `scanned`: how many
 * candidates the scan found (0 when nothing was claimed).
 */
export async function claimPartitionedJobs(
  db: Db,
  c: PartitionedClaim,
): Promise<{ jobs: Job[]; scanned: number }> {
  const { rows } = await sql<{
    id: string;
    queue: string;
    payload: unknown;
    attempts: number;
    read: unknown;
    scanned: number;
  }>`
        WITH due AS (
          SELECT id, run_at, coalesce(payload->>${c.partitionKey}, '') AS p FROM jobs
          WHERE queue = ${c.queue} AND run_at <= ${c.now} AND (locked_until IS NULL OR locked_until < ${c.now})
            AND coalesce(payload->>${c.partitionKey}, '') <> ALL(${c.full}::text[])
          ORDER BY run_at, id
          LIMIT ${c.scan}
        ), picked AS (
          SELECT id FROM (
            SELECT id, run_at, p, row_number() OVER (PARTITION BY p ORDER BY run_at, id) AS rn FROM due
          ) ranked
          WHERE rn <= ${c.partitionConcurrency} - coalesce((${c.running}::jsonb ->> p)::int, 0)
          ORDER BY run_at, id
          LIMIT ${c.free}
        ), locked AS (
          SELECT j.id FROM jobs j JOIN picked ON picked.id = j.id
          WHERE j.locked_until IS NULL OR j.locked_until < ${c.now}
          FOR UPDATE OF j SKIP LOCKED
        ), claimed AS (
          UPDATE jobs SET locked_by = ${c.workerId}, locked_until = ${new Date(c.now.getTime() + c.leaseMs)},
            attempts = attempts + 1
          FROM locked WHERE jobs.id = locked.id
          RETURNING jobs.id, jobs.queue, jobs.payload, jobs.attempts
        )
        SELECT claimed.*, ${c.read ? c.read(sql`claimed.payload`) : sql`NULL`} AS read,
          (SELECT count(*) FROM due) AS scanned
        FROM claimed
      `.execute(db);
  return {
    jobs: rows.map((r) => ({
      id: String(r.id),
      queue: r.queue,
      payload: r.payload,
      attempts: r.attempts,
      ...(c.read ? { read: r.read } : {}),
    })),
    scanned: Number(rows[0]?.scanned ?? 0),
  };
}

/** Hands claimed jobs back unrun: unlocked, and the claim's attempt not counted. */
export async function releaseClaims(db: Db, ids: string[], workerId: string): Promise<void> {
  await sql`
          UPDATE jobs SET locked_by = NULL, locked_until = NULL, attempts = attempts - 1
          WHERE id = ANY(${ids}::bigint[]) AND locked_by = ${workerId}
        `.execute(db);
}

/** Extends the leases `workerId` holds on `ids` to `lockedUntil`. */
export async function renewLeases(db: Db, ids: string[], workerId: string, lockedUntil: Date): Promise<void> {
  await sql`
        UPDATE jobs SET locked_until = ${lockedUntil}
        WHERE id = ANY(${ids}::bigint[]) AND locked_by = ${workerId}
      `.execute(db);
}

/** Deletes a finished job, if `workerId` still holds it (in the handler's transaction or on its own). */
export async function finishJob(trx: Tx | Db, id: string, workerId: string): Promise<void> {
  await jobsEnd(trx, [id], workerId).execute();
}

/** The DELETE of jobs `workerId` holds (finishJob; a handler's CTE through JobRunner.finishingMany). */
export function jobsEnd(db: QueryCreator<DB>, ids: readonly string[], workerId: string) {
  return db.deleteFrom('jobs').where('id', 'in', ids).where('locked_by', '=', workerId);
}

/** Unlocks a job `workerId` holds and makes it due again at `runAt` (a handler's `{ retryAt }`). */
export async function rescheduleJob(db: Db, id: string, workerId: string, runAt: Date): Promise<void> {
  await db
    .updateTable('jobs')
    .set({ run_at: runAt, locked_by: null, locked_until: null })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .execute();
}

/** Unlocks a failed job, due again at `runAt`, recording its error. */
export async function retryFailedJob(db: Db, id: string, runAt: Date, lastError: string): Promise<void> {
  await db
    .updateTable('jobs')
    .set({
      run_at: runAt,
      locked_by: null,
      locked_until: null,
      last_error: lastError,
    })
    .where('id', '=', id)
    .execute();
}

/** Whether a job of one of `queues` is due at `now` and not held by a live lease. */
export async function hasDueJob(db: Db, queues: string[], now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('jobs')
    .select('id')
    .where('run_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .where('queue', 'in', [...queues, '__none__'])
    .limit(1)
    .executeTakeFirst();
  return !!row;
}

/**
 * When the next job of `queues` is due: the earliest unclaimed job of each queue, or the end of the
 * earliest lease (a dead worker's job). Both are index lookups, whatever the backlog. Null: none.
 */
export async function nextDueAt(db: Db, queues: string[]): Promise<{ at: Date | null } | undefined> {
  return sql<{ at: Date | null }>`
      SELECT least(
        (SELECT min(head.run_at) FROM unnest(${queues}::text[]) AS q(name)
          CROSS JOIN LATERAL (
            SELECT run_at FROM jobs WHERE queue = q.name AND locked_until IS NULL ORDER BY run_at LIMIT 1
          ) head),
        (SELECT min(greatest(run_at, locked_until)) FROM jobs
          WHERE locked_until IS NOT NULL AND queue = ANY(${queues}::text[]))
      ) AS at
    `
    .execute(db)
    .then((r) => r.rows[0]);
}

/**
 * One tick of a periodic task: the one atomic statement that decides which process runs it. `won`:
 * this process moved `next_run_at` on to `next` (it was due at `now`); `next_run_at`: as stored after.
 */
export async function claimScheduleTick(
  db: Db,
  name: string,
  next: Date,
  now: Date,
): Promise<{ won: boolean; next_run_at: Date | null } | undefined> {
  const { rows } = await sql<{ won: boolean; next_run_at: Date | null }>`
        WITH won AS (
          INSERT INTO job_schedules AS s (name, next_run_at) VALUES (${name}, ${next})
          ON CONFLICT (name) DO UPDATE SET next_run_at = excluded.next_run_at WHERE s.next_run_at <= ${now}
          RETURNING name
        )
        SELECT EXISTS (SELECT 1 FROM won) AS won,
          (SELECT next_run_at FROM job_schedules WHERE name = ${name}) AS next_run_at
      `.execute(db);
  return rows[0];
}
