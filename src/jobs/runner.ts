import { hostname } from 'node:os';
import type { Notifier } from '../db/notify.js';
import type { Db } from '../db/store.js';
import { storeUnavailability } from '../db/unavailable.js';
import type { Clock } from '../platform/clock.js';
import { randomToken } from '../platform/crypto.js';
import {
  type BatchedWrite,
  type ClaimRead,
  claimJobs,
  claimPartitionedJobs,
  claimScheduleTick,
  finishJob,
  hasDueJob,
  JOBS_CHANNEL,
  type Job,
  jobsEnd,
  nextDueAt,
  releaseClaims,
  renewLeases,
  rescheduleJob,
  retryFailedJob,
} from './queries.js';

// The SQL lives in queries.ts; what other files import from here stays importable from here.
export {
  type BatchedWrite,
  type ClaimRead,
  enqueue,
  enqueueMany,
  JOBS_CHANNEL,
  type Job,
  type JobSpec,
  jobsForRows,
  WriteBatch,
} from './queries.js';

/** A handler finishes the job (return nothing) or asks to run it again later (`{ retryAt }`). */
// biome-ignore lint/suspicious/noConfusingVoidType: handlers that return nothing are `async () => {}` (Promise<void>)
export type JobHandler<P = unknown> = (job: Job<P>) => Promise<void | { retryAt: Date }>;

export interface RegisterOptions {
  /** Jobs of this queue running at once in this process (default 8). */
  concurrency?: number;
  /**
   * How long a claim lasts (default 120 s). A job whose worker died becomes claimable again when
   * its lease ends.
   */
  leaseMs?: number;
  /**
   * Renew the lease of running jobs every `leaseMs / 4` while the handler runs. A short lease then
   * bounds how long a crashed process's jobs wait (about `leaseMs`) without limiting how long a
   * live handler may take. Only for handlers that always end (their own time limits).
   */
  extendLease?: boolean;
  /**
   * At most `concurrency` running jobs per value of `payload[key]` in this process, so one slow
   * partition (e.g. one webhook endpoint) cannot take every slot of the queue. Jobs of a full
   * partition stay in the table for the next claim (or another process).
   */
  partition?: { key: string; concurrency: number };
  /**
   * Read beside each job in the statement that claims it: a SQL expression of the job's payload, whose
   * value reaches the handler as `job.read` (a round trip fewer for a handler that would read it
   * first). Every job of such a queue reaches its handler through a claim, so with its `read`.
   */
  claimWith?: ClaimRead;
}

interface Queue {
  name: string;
  handler: JobHandler;
  concurrency: number;
  running: number;
  leaseMs: number;
  extendLease: boolean;
  /** Ids of this queue's jobs running in this process. */
  ids: Set<string>;
  partition: { key: string; concurrency: number } | null;
  claimWith: ClaimRead | null;
  /** Running jobs per partition value (only with `partition`). */
  partitionRunning: Map<string, number>;
  lastRenewMs: number;
  /**
   * Jobs of this queue may be due that this process has not claimed: a NOTIFY or the timer said so,
   * or the last claim filled every free slot. A pump claims only from such queues.
   */
  dirty: boolean;
  /**
   * A claim of this queue ran since the wake-up timer was last computed. It may have left jobs it
   * found not yet due (enqueued while it waited for a connection), which only the timer or another
   * claim will find: until the timer is computed again, a finishing job claims again.
   */
  claimedSinceTimer: boolean;
}

interface Periodic {
  name: string;
  everyMs: number;
  fn: () => Promise<unknown>;
  /** Not due before this (as last seen in job_schedules): pumps skip the database until then. */
  checkAtMs: number;
  /** A run of it is still going (in `inFlight`). */
  busy: boolean;
}

/** How soon the runner looks again after the store was unreachable. */
const STORE_RETRY_MS = 500;

/** Interval of the lease-renewal ticker. */
const RENEW_TICK_MS = 500;

/**
 * The one background-work mechanism: a `jobs` table claimed with FOR UPDATE SKIP LOCKED, so any number
 * of processes can run workers and each job run is claimed by exactly one of them. Claims are leases:
 * a job whose worker died (crash, kill -9) becomes claimable again when its lease ends. Workers wake on
 * NOTIFY at commit (the payload names the queue), and otherwise sleep until the next due job (at most
 * `idleMs`).
 * Periodic tasks (cleanup, reapers) use `job_schedules`: one atomic UPDATE decides which process runs
 * each tick.
 */
export class JobRunner {
  private readonly queues = new Map<string, Queue>();
  private readonly periodics: Periodic[] = [];
  private readonly workerId = `${hostname()}:${process.pid}:${randomToken(4)}`;
  private timer: NodeJS.Timeout | null = null;
  /** A pump claimed since the wake-up timer was last computed. */
  private timerStale = true;
  private renewTimer: NodeJS.Timeout | null = null;
  private running = false;
  private pumping: Promise<void> | null = null;
  private again = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Jobs their handler already deleted in the statement of its last write (finishingMany). */
  private readonly finished = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void },
    private readonly opts: { idleMs?: number } = {},
  ) {}

  register<P>(queue: string, handler: JobHandler<P>, opts: RegisterOptions = {}): void {
    this.queues.set(queue, {
      name: queue,
      handler: handler as JobHandler,
      concurrency: opts.concurrency ?? 8,
      running: 0,
      leaseMs: opts.leaseMs ?? 120_000,
      extendLease: opts.extendLease ?? false,
      ids: new Set(),
      partition: opts.partition ?? null,
      claimWith: opts.claimWith ?? null,
      partitionRunning: new Map(),
      lastRenewMs: 0,
      dirty: true,
      claimedSinceTimer: false,
    });
  }

  every(name: string, everyMs: number, fn: () => Promise<unknown>): void {
    this.periodics.push({ name, everyMs, fn, checkAtMs: 0, busy: false });
  }

  async start(notifier: Notifier | null): Promise<void> {
    this.running = true;
    if (notifier) {
      await notifier.listen(JOBS_CHANNEL, (queue) => {
        if (queue === '') this.wake();
        else if (this.queues.has(queue)) this.wake([queue]);
      });
      notifier.onReconnect(() => this.wake());
    }
    if ([...this.queues.values()].some((q) => q.extendLease) && !this.renewTimer) {
      this.renewTimer = setInterval(() => void this.renewLeases(), RENEW_TICK_MS);
      this.renewTimer.unref();
    }
    this.wake();
  }

  /**
   * The DELETE that ends running jobs, for their handlers to send inside the statement of their last
   * write (a data-modifying CTE, one round trip, no transaction needed): the jobs end exactly when
   * that write is made, and the runner skips its own delete. The one way a handler ends its own jobs;
   * a handler that does not call it has its job ended by the runner once it returns. A handler whose
   * statement fails must throw, as for any failure (the job is then kept and retried).
   */
  finishingMany(jobs: readonly Job[]): BatchedWrite {
    const ids = jobs.map((j) => j.id);
    for (const id of ids) this.finished.add(id);
    return (db) => jobsEnd(db, ids, this.workerId);
  }

  /** Renews the leases of running jobs of `extendLease` queues, each queue every leaseMs / 4. */
  private async renewLeases(): Promise<void> {
    const nowMs = this.clock.nowMs();
    for (const q of this.queues.values()) {
      if (!q.extendLease || q.ids.size === 0 || nowMs - q.lastRenewMs < q.leaseMs / 4) continue;
      q.lastRenewMs = nowMs;
      await renewLeases(this.db, [...q.ids], this.workerId, new Date(nowMs + q.leaseMs)).catch((err) =>
        this.log.error({ err }, 'job lease renewal failed'),
      );
    }
  }

  /** Runs what is due now. `queues`: where new work may be (default: anywhere). */
  wake(queues?: readonly string[]): void {
    if (!this.running) return;
    for (const q of this.queues.values()) if (!queues || queues.includes(q.name)) q.dirty = true;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump()
      .catch((err) => {
        // Most often the store is unreachable (a restart): look again shortly, whatever woke us.
        if (storeUnavailability(err)) this.log.warn({ err }, 'job runner: store unreachable; retrying');
        else this.log.error({ err }, 'job runner');
        this.timerStale = false;
        this.sleep(STORE_RETRY_MS);
      })
      .finally(() => {
        this.pumping = null;
        if (this.again) {
          this.again = false;
          this.wake([]);
        }
      });
  }

  /** For tests driving a fake clock: run everything due now, and wait for it. */
  async drain(): Promise<void> {
    const was = this.running;
    this.running = true;
    try {
      for (let i = 0; i < 100; i++) {
        await this.settle();
        for (const q of this.queues.values()) q.dirty = true;
        await this.pump();
        await this.settle();
        if (!(await this.hasDue())) break;
      }
    } finally {
      this.running = was;
    }
  }

  /**
   * Waits until no pump runs and no job is in flight (a finishing job wakes another pump): for tests,
   * the signal that whatever the runner was going to do by itself has been done.
   */
  async settle(): Promise<void> {
    while (this.pumping || this.inFlight.size > 0) {
      if (this.pumping) await this.pumping;
      if (this.inFlight.size > 0) await Promise.all(this.inFlight);
    }
  }

  private async hasDue(): Promise<boolean> {
    const now = this.clock.now();
    return hasDueJob(this.db, [...this.queues.keys()], now);
  }

  private async pump(): Promise<void> {
    await this.runPeriodics();
    for (const q of this.queues.values()) {
      const free = q.concurrency - q.running;
      // A full queue stays dirty: a finishing job pumps again.
      if (!q.dirty || free <= 0) continue;
      q.dirty = false;
      q.claimedSinceTimer = true;
      this.timerStale = true;
      if (q.partition) await this.claimPartitioned(q, free);
      else {
        const jobs = await this.claim(q, free);
        for (const job of jobs) this.start1(q, job);
        if (jobs.length === free) q.dirty = true;
      }
    }
    // When another pump follows at once, that one computes the sleep.
    if (this.timerStale && !this.again) {
      this.timerStale = false;
      this.scheduleNext();
    }
  }

  /** Runs a claimed job in a slot of its queue (and of its partition). */
  private start1(q: Queue, job: Job, partition?: string): void {
    this.takeSlot(q, partition);
    q.ids.add(job.id);
    const p = this.execute(q, job).finally(() => {
      q.ids.delete(job.id);
      this.freeSlot(q, partition);
      this.inFlight.delete(p);
      // Its queue has a free slot now. Claim there again when jobs may be waiting for it: the queue
      // is dirty (a claim found it full, a NOTIFY came, the job was rescheduled), or a claim ran
      // since the timer was last computed. One that got fewer jobs than it asked for (those enqueued
      // while it waited for a connection were not yet due to it) must not leave a backlog waiting
      // for the timer, which a pump that never rests (another busy queue) does not re-arm. Otherwise
      // (no NOTIFY and no claim since the timer was computed) there is nothing to claim: the timer
      // or a NOTIFY wakes the queue when there is.
      if (q.dirty || q.claimedSinceTimer) this.wake([q.name]);
    });
    this.inFlight.add(p);
  }

  private takeSlot(q: Queue, partition: string | undefined): void {
    q.running++;
    if (partition !== undefined) {
      q.partitionRunning.set(partition, (q.partitionRunning.get(partition) ?? 0) + 1);
    }
  }

  private freeSlot(q: Queue, partition: string | undefined): void {
    q.running--;
    if (partition !== undefined) {
      const left = (q.partitionRunning.get(partition) ?? 1) - 1;
      if (left > 0) q.partitionRunning.set(partition, left);
      else q.partitionRunning.delete(partition);
    }
  }

  /** Whether `partition` of a partitioned queue runs as many jobs here as it may. */
  private partitionFull(q: Queue, partition: string): boolean {
    return (q.partitionRunning.get(partition) ?? 0) >= q.partition!.concurrency;
  }

  /** The value of a job's partition key (partitioned queues only). */
  private partitionOf(q: Queue, payload: unknown): string | undefined {
    if (!q.partition) return undefined;
    const v = (payload as Record<string, unknown> | null)?.[q.partition.key];
    return typeof v === 'string' ? v : String(v ?? '');
  }

  /**
   * Claims for a partitioned queue. The claim itself takes at most each partition's room (its limit
   * minus what runs here), and leaves full partitions out. The candidates are the oldest due jobs
   * (a bounded scan); when one partition filled up and so may have hidden others, it claims again
   * without it, so free slots go to other partitions rather than waiting behind a busy one.
   */
  private async claimPartitioned(q: Queue, initialFree: number): Promise<void> {
    const part = q.partition!;
    const keyOf = (job: Job): string => this.partitionOf(q, job.payload)!;
    const fullNow = () => [...q.partitionRunning].filter(([, n]) => n >= part.concurrency).map(([k]) => k);
    let free = initialFree;
    for (let round = 0; round < 20 && free > 0; round++) {
      const full = fullNow();
      const running = JSON.stringify(Object.fromEntries(q.partitionRunning));
      const scan = Math.max(64, free * 4);
      const now = this.clock.now();
      const { jobs, scanned } = await claimPartitionedJobs(this.db, {
        queue: q.name,
        partitionKey: part.key,
        partitionConcurrency: part.concurrency,
        full,
        running,
        scan,
        free,
        now,
        leaseMs: q.leaseMs,
        workerId: this.workerId,
        read: q.claimWith ?? undefined,
      });
      const handBack: string[] = [];
      for (const job of jobs) {
        const k = keyOf(job);
        // Only a concurrent pump (drain) can have filled the partition since the claim was computed.
        if (this.partitionFull(q, k)) handBack.push(job.id);
        else this.start1(q, job, k);
      }
      if (handBack.length > 0) {
        await releaseClaims(this.db, handBack, this.workerId);
      }
      free -= jobs.length - handBack.length;
      const nowFull = fullNow();
      // Every slot taken, or a partition is full and may have jobs waiting for room: look again later.
      if (free <= 0 || nowFull.length > 0) q.dirty = true;
      // Claim again only if a partition filled up while the scan window was full (it may have hidden
      // other partitions' jobs behind that one's).
      if (nowFull.length === full.length || scanned < scan) return;
    }
  }

  private async claim(q: Queue, n: number): Promise<Job[]> {
    const now = this.clock.now();
    return claimJobs(this.db, q.name, n, q.leaseMs, now, this.workerId, q.claimWith ?? undefined);
  }

  private async execute(q: Queue, job: Job): Promise<void> {
    try {
      const result = await q.handler(job);
      if (result && 'retryAt' in result) {
        await this.record(q, () => rescheduleJob(this.db, job.id, this.workerId, result.retryAt));
        q.dirty = true; // recompute the wake-up time
      } else if (!this.finished.has(job.id)) {
        await this.record(q, () => finishJob(this.db, job.id, this.workerId));
      }
    } catch (err) {
      // An unexpected failure: keep the job, back off exponentially (capped at an hour).
      const delay = Math.min(3_600_000, 1000 * 2 ** Math.min(job.attempts, 12));
      this.log.error({ err, job: job.id, queue: job.queue }, 'job failed');
      q.dirty = true;
      await this.record(q, () =>
        retryFailedJob(
          this.db,
          job.id,
          new Date(this.clock.nowMs() + delay),
          String(err instanceof Error ? err.message : err).slice(0, 1000),
        ),
      ).catch(() => {});
    } finally {
      this.finished.delete(job.id);
    }
  }

  /**
   * Records a job's outcome. A store that is unreachable for a moment (a restart) must not leave the job
   * claimed until its lease ends, nor run a finished job again: the write is tried again every
   * STORE_RETRY_MS for up to half the lease; past that the lease decides (the job runs again).
   */
  private async record(q: Queue, write: () => Promise<unknown>): Promise<void> {
    const until = Date.now() + q.leaseMs / 2;
    for (;;) {
      try {
        await write();
        return;
      } catch (err) {
        if (!storeUnavailability(err) || Date.now() + STORE_RETRY_MS > until) throw err;
        await new Promise((resolve) => setTimeout(resolve, STORE_RETRY_MS));
      }
    }
  }

  private async runPeriodics(): Promise<void> {
    const now = this.clock.now();
    for (const p of this.periodics) {
      if (now.getTime() < p.checkAtMs) continue;
      const next = new Date(now.getTime() + p.everyMs);
      const row = await claimScheduleTick(this.db, p.name, next, now);
      if (!row?.won) {
        // Not due (or another process just ran it): look again when job_schedules says it is due.
        const at = row?.next_run_at ? new Date(row.next_run_at).getTime() : 0;
        p.checkAtMs = Math.max(at, now.getTime() + 1000);
        continue;
      }
      p.checkAtMs = next.getTime();
      // The task runs beside the pump, not in it: a long purge must not hold up the queues' claims.
      // A tick that comes while the previous run still goes is skipped.
      if (p.busy) continue;
      p.busy = true;
      const run: Promise<void> = p
        .fn()
        .then(
          () => {},
          (err) => this.log.error({ err, task: p.name }, 'periodic task failed'),
        )
        .finally(() => {
          p.busy = false;
          this.inFlight.delete(run);
        });
      this.inFlight.add(run);
    }
  }

  /** Sleeps until the next job is due (at most idleMs; at least 50 ms, since completions wake us too). */
  private scheduleNext(): void {
    if (!this.running) return;
    // The timer now covers what the claims before it left not yet due.
    for (const q of this.queues.values()) q.claimedSinceTimer = false;
    void this.nextDue().then((ms) => this.sleep(Math.max(ms, 50)));
  }

  private sleep(ms: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), ms);
    this.timer.unref();
  }

  /**
   * Milliseconds until the next job is due: the earliest unclaimed job of each queue, or the end of
   * the earliest lease (a dead worker's job). Both are index lookups, whatever the backlog.
   */
  private async nextDue(): Promise<number> {
    const idle = this.opts.idleMs ?? 5_000;
    if (this.queues.size === 0) return idle;
    const queues = [...this.queues.keys()];
    const row = await nextDueAt(this.db, queues).catch(() => undefined);
    if (!row?.at) return idle;
    return Math.min(idle, Math.max(0, new Date(row.at).getTime() - this.clock.nowMs()));
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.pumping;
    await Promise.all(this.inFlight);
    // Leases are renewed until the last running job has finished.
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
  }
}
