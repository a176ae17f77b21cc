import { hostname } from 'node:os';
import { sql } from 'kysely';
import type { Notifier } from '../db/notify.js';
import type { Db, Tx } from '../db/store.js';
import type { Clock } from '../platform/clock.js';
import { randomToken } from '../platform/crypto.js';

export const JOBS_CHANNEL = 'kairos_jobs';

export interface Job<P = unknown> {
  id: string;
  queue: string;
  payload: P;
  /** How many times this job was claimed before, counting this claim. */
  attempts: number;
}

/** A handler finishes the job (return nothing) or asks to run it again later (`{ retryAt }`). */
export type JobHandler<P = unknown> = (job: Job<P>) => Promise<void | { retryAt: Date }>;

interface Queue {
  handler: JobHandler;
  concurrency: number;
  running: number;
  leaseMs: number;
}

interface Periodic {
  name: string;
  everyMs: number;
  fn: () => Promise<unknown>;
}

/**
 * Enqueues a job inside the caller's transaction: it exists (and wakes the workers) only if that
 * transaction commits.
 */
export async function enqueue(trx: Tx | Db, queue: string, payload: unknown, runAt: Date): Promise<string> {
  const row = await trx
    .insertInto('jobs')
    .values({ queue, payload: JSON.stringify(payload), run_at: runAt, attempts: 0, created_at: runAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  await sql`SELECT pg_notify(${JOBS_CHANNEL}, ${queue})`.execute(trx);
  return row.id;
}

/**
 * The one background-work mechanism: a `jobs` table claimed with FOR UPDATE SKIP LOCKED, so any number
 * of processes can run workers and each job run is claimed by exactly one of them. Claims are leases:
 * a job whose worker died (crash, kill -9) becomes claimable again when its lease ends. Workers wake on
 * NOTIFY at commit, and otherwise sleep until the next due job (at most `idleMs`).
 * Periodic tasks (cleanup, reapers) use `job_schedules`: one atomic UPDATE decides which process runs
 * each tick.
 */
export class JobRunner {
  private readonly queues = new Map<string, Queue>();
  private readonly periodics: Periodic[] = [];
  private readonly workerId = `${hostname()}:${process.pid}:${randomToken(4)}`;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private pumping: Promise<void> | null = null;
  private again = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: { error(obj: object, msg: string): void },
    private readonly opts: { idleMs?: number } = {},
  ) {}

  register<P>(
    queue: string,
    handler: JobHandler<P>,
    opts: { concurrency?: number; leaseMs?: number } = {},
  ): void {
    this.queues.set(queue, {
      handler: handler as JobHandler,
      concurrency: opts.concurrency ?? 8,
      running: 0,
      leaseMs: opts.leaseMs ?? 120_000,
    });
  }

  every(name: string, everyMs: number, fn: () => Promise<unknown>): void {
    this.periodics.push({ name, everyMs, fn });
  }

  async start(notifier: Notifier | null): Promise<void> {
    this.running = true;
    if (notifier) {
      await notifier.listen(JOBS_CHANNEL, () => this.wake());
      notifier.onReconnect(() => this.wake());
    }
    this.wake();
  }

  /** Run what is due now; resolves when the claimed jobs have finished. */
  wake(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump()
      .catch((err) => this.log.error({ err }, 'job runner'))
      .finally(() => {
        this.pumping = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** For tests driving a fake clock: run everything due now, and wait for it. */
  async drain(): Promise<void> {
    const was = this.running;
    this.running = true;
    for (let i = 0; i < 100; i++) {
      await this.pump();
      await Promise.all(this.inFlight);
      if (!(await this.hasDue())) break;
    }
    this.running = was;
  }

  private async hasDue(): Promise<boolean> {
    const now = this.clock.now();
    const row = await this.db
      .selectFrom('jobs')
      .select('id')
      .where('run_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .where('queue', 'in', [...this.queues.keys(), '__none__'])
      .limit(1)
      .executeTakeFirst();
    return !!row;
  }

  private async pump(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    await this.runPeriodics();
    for (const [name, q] of this.queues) {
      const free = q.concurrency - q.running;
      if (free <= 0) continue;
      const jobs = await this.claim(name, free, q.leaseMs);
      for (const job of jobs) {
        q.running++;
        const p = this.execute(q, job).finally(() => {
          q.running--;
          this.inFlight.delete(p);
          this.wake();
        });
        this.inFlight.add(p);
      }
    }
    this.scheduleNext();
  }

  private async claim(queue: string, n: number, leaseMs: number): Promise<Job[]> {
    const now = this.clock.now();
    const { rows } = await sql<{ id: string; queue: string; payload: unknown; attempts: number }>`
      UPDATE jobs SET locked_by = ${this.workerId}, locked_until = ${new Date(now.getTime() + leaseMs)},
        attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM jobs
        WHERE queue = ${queue} AND run_at <= ${now} AND (locked_until IS NULL OR locked_until < ${now})
        ORDER BY run_at, id
        LIMIT ${n}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING id, queue, payload, attempts
    `.execute(this.db);
    return rows.map((r) => ({ id: String(r.id), queue: r.queue, payload: r.payload, attempts: r.attempts }));
  }

  private async execute(q: Queue, job: Job): Promise<void> {
    try {
      const result = await q.handler(job);
      if (result && 'retryAt' in result) {
        await this.db
          .updateTable('jobs')
          .set({ run_at: result.retryAt, locked_by: null, locked_until: null })
          .where('id', '=', job.id)
          .where('locked_by', '=', this.workerId)
          .execute();
      } else {
        await this.db
          .deleteFrom('jobs')
          .where('id', '=', job.id)
          .where('locked_by', '=', this.workerId)
          .execute();
      }
    } catch (err) {
      // An unexpected failure: keep the job, back off exponentially (capped at an hour).
      const delay = Math.min(3_600_000, 1000 * 2 ** Math.min(job.attempts, 12));
      this.log.error({ err, job: job.id, queue: job.queue }, 'job failed');
      await this.db
        .updateTable('jobs')
        .set({
          run_at: new Date(this.clock.nowMs() + delay),
          locked_by: null,
          locked_until: null,
          last_error: String(err instanceof Error ? err.message : err).slice(0, 1000),
        })
        .where('id', '=', job.id)
        .execute()
        .catch(() => {});
    }
  }

  private async runPeriodics(): Promise<void> {
    const now = this.clock.now();
    for (const p of this.periodics) {
      const { rows } = await sql<{ name: string }>`
        INSERT INTO job_schedules AS s (name, next_run_at) VALUES (${p.name}, ${new Date(now.getTime() + p.everyMs)})
        ON CONFLICT (name) DO UPDATE SET next_run_at = excluded.next_run_at WHERE s.next_run_at <= ${now}
        RETURNING name
      `.execute(this.db);
      if (rows.length === 0) continue;
      try {
        await p.fn();
      } catch (err) {
        this.log.error({ err, task: p.name }, 'periodic task failed');
      }
    }
  }

  /** Sleeps until the next job is due (at most idleMs; at least 50 ms, since completions wake us too). */
  private scheduleNext(): void {
    if (!this.running) return;
    void this.nextDue().then((ms) => this.sleep(Math.max(ms, 50)));
  }

  private sleep(ms: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), ms);
    this.timer.unref();
  }

  private async nextDue(): Promise<number> {
    const idle = this.opts.idleMs ?? 5_000;
    if (this.queues.size === 0) return idle;
    const row = await this.db
      .selectFrom('jobs')
      .select(sql<Date>`min(greatest(run_at, coalesce(locked_until, run_at)))`.as('at'))
      .where('queue', 'in', [...this.queues.keys()])
      .executeTakeFirst()
      .catch(() => undefined);
    if (!row?.at) return idle;
    return Math.min(idle, Math.max(0, new Date(row.at).getTime() - this.clock.nowMs()));
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.pumping;
    await Promise.all(this.inFlight);
  }
}
