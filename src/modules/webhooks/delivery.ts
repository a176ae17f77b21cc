/**
 * The delivery engine, on the one background-work mechanism (jobs/runner.ts):
 *
 * - `webhook-dispatch` (one job per event, enqueued by emitEvent in the emitting transaction) turns
 *   the committed event into one delivery per matching active subscription, and enqueues the first
 *   attempt of each, in one statement (re-running it creates nothing twice). The first attempts this
 *   process has room for are enqueued claimed by it and started at once (JobRunner.holdSlot).
 * - `webhook-attempt` (one job per attempt) POSTs the stored envelope bytes with fresh signature
 *   headers, records the attempt, and in the same transaction either ends the delivery (2xx →
 *   succeeded; last scheduled attempt or a manual one → failed) or enqueues the next attempt at
 *   retry-schedule[n] after the failed one (docs/api.md#signatures-and-retries: +1 min, +5 min, +30 min).
 *
 * Claims are SKIP LOCKED leases renewed while the attempt runs, so each attempt is made by exactly
 * one worker of any number of processes, and an attempt cut short by a crash is made again once the
 * dead process's lease lapses (about ATTEMPT_LEASE_MS). A delivery names the one job it expects
 * (`pending_job`); a job that is stale (its delivery paused, retried or already recorded) does nothing.
 *
 * The runner claims due jobs in batches (one statement each), and several attempts to one endpoint
 * run at once (ENDPOINT_CONCURRENCY), so deliveries need not arrive in the order of their events.
 * What the jobs running at once in this process ask of the store is batched (batcher.ts): their
 * dispatches in one statement (the claim that took them read their targets: claimTargets), their
 * attempts' contexts in one SELECT (a first attempt started by its dispatch needs none), and their
 * outcomes in one transaction (one UPDATE of the deliveries, one INSERT of the attempts, one DELETE
 * of the jobs). An outcome the batch could not apply (its delivery changed meanwhile, or the batch
 * failed) is recorded on its own as before.
 */
import type { Db } from '../../db/store.js';
import { withTransaction } from '../../db/store.js';
import { enqueueMany, type Job } from '../../jobs/runner.js';
import type { JobContribution, Platform } from '../module.js';
import type { Clock } from '../../platform/clock.js';
import { decryptSecret, randomToken } from '../../platform/crypto.js';
import { prefixedId } from '../../platform/ids.js';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { type AttemptResult, attemptDelivery } from './attempt.js';
import { Batcher } from './batcher.js';
import { ATTEMPT_QUEUE, DISPATCH_QUEUE } from './events.js';
import {
  type AttemptContext,
  attemptContexts,
  type DeliveryRow,
  type NewDelivery,
  type DeliveryState,
  claimTargets,
  dispatchTargets,
  insertDeliveriesWithAttempts,
  lockDelivery,
  type OutcomeInput,
  recordOutcome,
  recordOutcomes,
  targetsRead,
} from './repo.js';
import { buildDeliveryHeaders } from './signing.js';

/** Attempt jobs running at once in one process, all endpoints together. */
export const ATTEMPT_CONCURRENCY = 512;
/**
 * Attempt jobs of one subscription running at once in one process: most of an attempt's time under
 * load is spent waiting for the store (the claim, the context, the record), so one endpoint needs
 * many of them to keep up with a busy account's events. A slow receiver holds at most these (half).
 */
export const ENDPOINT_JOBS = 256;
/** Requests in flight to one subscription's URL at once from one process: what a receiver sees. */
export const ENDPOINT_CONCURRENCY = 32;
/** Dispatch jobs running at once in one process (their fan-outs are batched). */
const DISPATCH_CONCURRENCY = 256;
/** Most items one batched statement or transaction takes. */
const BATCH_MAX = 128;
/** Claim lease of dispatch and attempt jobs; renewed while they run, so it only bounds crash recovery. */
export const ATTEMPT_LEASE_MS = 10_000;

export interface DeliverySettings {
  /** Delays before the 2nd, 3rd… attempt, each counted from the end of the failed one. */
  retryScheduleMs: number[];
  timeoutMs: number;
  policy: OutboundPolicy;
}

interface DispatchPayload {
  event_id: string;
}

export interface AttemptPayload {
  delivery_id: string;
  /** Partition key: per-subscription concurrency. */
  webhook_id: string;
  /** Must equal the delivery's `pending_job`, or the job is stale. */
  token: string;
  manual: boolean;
}

/** A new attempt job's token and payload. */
export function attemptJob(delivery: { id: string; webhook_id: string }, manual: boolean) {
  const token = randomToken(12);
  const payload: AttemptPayload = {
    delivery_id: delivery.id,
    webhook_id: delivery.webhook_id,
    token,
    manual,
  };
  return { token, payload };
}

interface Log {
  error(obj: object, msg: string): void;
}

/** A finished attempt (`result` null: none was made), waiting to be recorded. */
interface Finished {
  job: Job<AttemptPayload>;
  seen: DeliveryState;
  startedMs: number;
  result: AttemptResult | null;
}

type NextState = Pick<
  DeliveryRow,
  'status' | 'attempt_count' | 'next_attempt_at' | 'pending_job' | 'updated_at'
>;

export class WebhookDeliverer {
  private readonly dispatches = new Batcher<Job<DispatchPayload>, null>((jobs) => this.dispatchMany(jobs), {
    max: BATCH_MAX,
    parallel: 2,
  });
  private readonly contexts = new Batcher<string, AttemptContext | null>(
    async (ids) => {
      const byId = new Map((await attemptContexts(this.db, ids)).map((c) => [c.id, c]));
      return ids.map((id) => byId.get(id) ?? null);
    },
    { max: BATCH_MAX, parallel: 2 },
  );
  /** What the first attempts a dispatch starts itself send, by delivery id, until they start. */
  private readonly firstContexts = new Map<string, AttemptContext>();
  /** Per subscription: requests in flight, and the attempts waiting for one of them to end. */
  private readonly sending = new Map<string, { running: number; waiting: (() => void)[] }>();
  private readonly outcomes = new Batcher<Finished, boolean>((items) => this.recordMany(items), {
    max: BATCH_MAX,
    parallel: 2,
  });

  constructor(
    private readonly jobs: Platform['jobs'],
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly encryptionKey: Buffer,
    private readonly settings: DeliverySettings,
    private readonly log: Log,
  ) {}

  /** The dispatch and attempt queues, for the job runner. */
  queues(): JobContribution[] {
    return [
      {
        queue: DISPATCH_QUEUE,
        handler: (job: Job<DispatchPayload>) => this.dispatch(job),
        options: {
          concurrency: DISPATCH_CONCURRENCY,
          leaseMs: ATTEMPT_LEASE_MS,
          extendLease: true,
          // The claim reads the targets too: one round trip fewer between an event and its request.
          claimWith: claimTargets,
        },
      },
      {
        queue: ATTEMPT_QUEUE,
        handler: (job: Job<AttemptPayload>) => this.attempt(job),
        options: {
          concurrency: ATTEMPT_CONCURRENCY,
          leaseMs: ATTEMPT_LEASE_MS,
          extendLease: true,
          partition: { key: 'webhook_id', concurrency: ENDPOINT_JOBS },
        },
      },
    ];
  }

  /** Fans a committed event out into deliveries and their first attempts, with the others running. */
  private async dispatch(job: Job<DispatchPayload>): Promise<void> {
    // A failed batch may have failed for another job's sake: this one alone, once more.
    await this.dispatches.submit(job).catch((err: unknown) => {
      this.log.error({ err, job: job.id }, 'webhook dispatch batch failed; dispatching alone');
      return this.dispatchMany([job]);
    });
  }

  /**
   * Fans committed events out into deliveries and their first attempts: the targets the claim read
   * (or one read of them), one statement that makes the deliveries and their attempt jobs and ends the
   * dispatch jobs. The first attempts this process has room for are enqueued claimed by it and started
   * here at once, with what they send as read here (JobRunner.holdSlot): no wake-up, no claim and no
   * read of their context between an event and its first attempt.
   */
  private async dispatchMany(batch: Job<DispatchPayload>[]): Promise<null[]> {
    // Read by the claim (claimTargets); a job that came otherwise has them read here.
    const read = batch.map((job) => targetsRead(job.read));
    const targets = read.every((t) => t !== null)
      ? read.flat()
      : await dispatchTargets(
          this.db,
          batch.map((job) => job.payload.event_id),
        );
    const now = this.clock.now();
    const jobs = new Map<string, AttemptPayload>();
    // First attempts with a slot held, by delivery id (the slot is given back unless the job is made).
    const held = new Map<string, { payload: AttemptPayload; ctx: AttemptContext }>();
    let claimAs = null as { workerId: string; lockedUntil: Date } | null;
    const rows: NewDelivery[] = targets.map((target) => {
      const id = prefixedId('whd', now.getTime());
      const first = attemptJob({ id, webhook_id: target.webhook_id }, false);
      jobs.set(id, first.payload);
      const slot = this.jobs.holdSlot(ATTEMPT_QUEUE, first.payload);
      if (slot) {
        claimAs = slot;
        const ctx: AttemptContext = {
          ...target,
          id,
          status: 'pending',
          pending_job: first.token,
          attempt_count: 0,
          active: true,
        };
        held.set(id, { payload: first.payload, ctx });
      }
      return {
        id,
        webhook_id: target.webhook_id,
        event_id: target.event_id,
        event_type: target.event_type,
        pending_job: first.token,
      };
    });
    let started: Job[] = [];
    try {
      // A delivery that exists already (this job ran before and its end was lost) is not made again,
      // nor its first attempt.
      started = await insertDeliveriesWithAttempts(
        this.db,
        rows,
        ATTEMPT_QUEUE,
        jobs,
        now,
        this.jobs.finishingMany(batch),
        claimAs && { ...claimAs, keys: [...held.keys()] },
      );
    } finally {
      const made = new Set(started.map((job) => (job.payload as AttemptPayload).delivery_id));
      for (const [id, h] of held) {
        if (made.has(id)) this.firstContexts.set(id, h.ctx);
        else this.jobs.releaseSlot(ATTEMPT_QUEUE, h.payload);
      }
    }
    try {
      await this.jobs.startClaimed(ATTEMPT_QUEUE, started);
    } finally {
      // A started attempt took its context at once; a runner that stopped started none.
      for (const id of held.keys()) this.firstContexts.delete(id);
    }
    return batch.map(() => null);
  }

  /** Makes one attempt of a delivery and records it; schedules the next one or ends the delivery. */
  private async attempt(job: Job<AttemptPayload>): Promise<void> {
    // A first attempt started by its dispatch has its context already; any other run reads it.
    const first = this.firstContexts.get(job.payload.delivery_id);
    const ctx = first ?? (await this.contexts.submit(job.payload.delivery_id));
    // Stale: the delivery was deleted, ended, paused, or expects another job.
    if (ctx?.status !== 'pending' || ctx.pending_job !== job.payload.token) return;
    const state: DeliveryState = { status: ctx.status, attempt_count: ctx.attempt_count };
    if (!ctx.active) {
      // Paused while this job waited (its pause raced the fan-out): end it like the pause does.
      await this.record(job, state, this.clock.nowMs(), null);
      return;
    }
    const { startedMs, result } = await this.endpointSlot(ctx.webhook_id, async () => {
      // Signed when sent: waiting for a slot must not age the signature's timestamp.
      const startedMs = this.clock.nowMs();
      const secrets = [decryptSecret(this.encryptionKey, ctx.secret_enc)];
      const previousUntil = ctx.previous_secret_expires_at;
      if (ctx.previous_secret_enc && previousUntil && previousUntil.getTime() > startedMs) {
        secrets.push(decryptSecret(this.encryptionKey, ctx.previous_secret_enc));
      }
      const headers = buildDeliveryHeaders({
        eventId: ctx.event_id,
        body: ctx.envelope,
        secrets,
        nowMs: startedMs,
      });
      const result = await attemptDelivery({
        url: ctx.url,
        body: ctx.envelope,
        headers,
        timeoutMs: this.settings.timeoutMs,
        policy: this.settings.policy,
      });
      return { startedMs, result };
    });
    await this.record(job, state, startedMs, result);
  }

  /** Runs `send` once fewer than ENDPOINT_CONCURRENCY requests to the subscription are in flight. */
  private async endpointSlot<T>(webhookId: string, send: () => Promise<T>): Promise<T> {
    let slot = this.sending.get(webhookId);
    if (!slot) {
      slot = { running: 0, waiting: [] };
      this.sending.set(webhookId, slot);
    }
    if (slot.running >= ENDPOINT_CONCURRENCY) {
      await new Promise<void>((resolve) => slot!.waiting.push(resolve));
    } else slot.running++;
    try {
      return await send();
    } finally {
      // The slot passes to the next waiting attempt, or is given back.
      const next = slot.waiting.shift();
      if (next) next();
      else if (--slot.running === 0) this.sending.delete(webhookId);
    }
  }

  /**
   * The delivery's state after an attempt (`result` null: none was made). 2xx ends it; a failed
   * automatic attempt of a pending delivery is followed by the next one of the schedule, counted
   * from now (the end of the failed attempt); otherwise it is failed.
   */
  private outcome(
    state: DeliveryState,
    delivery: { id: string; webhook_id: string },
    manual: boolean,
    result: AttemptResult | null,
    now: Date,
  ): { next: NextState; retry: AttemptPayload | null } {
    const count = state.attempt_count + (result ? 1 : 0);
    const ended = (status: 'succeeded' | 'failed') => ({
      next: { status, attempt_count: count, next_attempt_at: null, pending_job: null, updated_at: now },
      retry: null,
    });
    if (result?.ok) return ended('succeeded');
    const delay = this.settings.retryScheduleMs[count - 1];
    if (!result || manual || state.status !== 'pending' || delay === undefined) return ended('failed');
    const retry = attemptJob(delivery, false);
    return {
      next: {
        status: 'pending',
        attempt_count: count,
        next_attempt_at: new Date(now.getTime() + delay),
        pending_job: retry.token,
        updated_at: now,
      },
      retry: retry.payload,
    };
  }

  /**
   * Records the attempt and the delivery's next state, and ends this job: in a batch with the
   * attempts finishing meanwhile, or (the batch could not apply it) on its own.
   */
  private async record(
    job: Job<AttemptPayload>,
    seen: DeliveryState,
    startedMs: number,
    result: AttemptResult | null,
  ): Promise<void> {
    const applied = await this.outcomes.submit({ job, seen, startedMs, result }).catch((err: unknown) => {
      // A deadlock with a pause, or one bad row: each outcome of the batch is recorded alone.
      this.log.error(
        { err, delivery: job.payload.delivery_id },
        'webhook outcome batch failed; recording alone',
      );
      return false;
    });
    if (!applied) await this.recordOne(job, seen, startedMs, result);
  }

  /**
   * Records finished attempts in one transaction, each only if its delivery is as it was read before
   * the attempt (recordOutcomes); answers which were. Their retries are enqueued and their jobs ended.
   */
  private async recordMany(items: Finished[]): Promise<boolean[]> {
    return withTransaction(this.db, async (trx) => {
      const now = this.clock.now();
      const planned = items.map((item) => {
        const { delivery_id: deliveryId, webhook_id, token, manual } = item.job.payload;
        const { next, retry } = this.outcome(
          item.seen,
          { id: deliveryId, webhook_id },
          manual,
          item.result,
          now,
        );
        const input: OutcomeInput = {
          deliveryId,
          token,
          expected: item.seen,
          next,
          attempt:
            item.result &&
            this.attemptRow(deliveryId, next.attempt_count, manual, item.startedMs, item.result),
        };
        return { item, input, retry };
      });
      const applied = await recordOutcomes(
        trx,
        planned.map((p) => p.input),
      );
      const done = planned.filter((p) => applied.has(p.input.deliveryId));
      await enqueueMany(
        trx,
        ATTEMPT_QUEUE,
        done.flatMap((p) => (p.retry ? [{ payload: p.retry, runAt: p.input.next.next_attempt_at! }] : [])),
      );
      await this.jobs.finishManyIn(
        trx,
        done.map((p) => p.item.job),
      );
      return items.map((item) => applied.has(item.job.payload.delivery_id));
    });
  }

  private attemptRow(
    deliveryId: string,
    number: number,
    manual: boolean,
    startedMs: number,
    result: AttemptResult,
  ) {
    return {
      delivery_id: deliveryId,
      number,
      manual,
      at: new Date(startedMs),
      response_status: result.response_status,
      duration_ms: result.duration_ms,
      error: result.error,
      response_body: result.response_body,
    };
  }

  /** Records the attempt and the delivery's next state, and ends this job, in one transaction. */
  private async recordOne(
    job: Job<AttemptPayload>,
    seen: DeliveryState,
    startedMs: number,
    result: AttemptResult | null,
  ): Promise<void> {
    const { delivery_id: deliveryId, webhook_id, token, manual } = job.payload;
    await withTransaction(this.db, async (trx) => {
      let expected = seen;
      // First optimistically against what was read before the attempt; if the delivery changed
      // meanwhile (paused, or another run of this job), once more under a lock.
      for (let pass = 0; pass < 2; pass++) {
        const now = this.clock.now();
        const { next, retry } = this.outcome(expected, { id: deliveryId, webhook_id }, manual, result, now);
        const applied = await recordOutcome(trx, {
          deliveryId,
          token,
          expected,
          next,
          attempt: result && this.attemptRow(deliveryId, next.attempt_count, manual, startedMs, result),
        });
        if (applied) {
          if (retry)
            await enqueueMany(trx, ATTEMPT_QUEUE, [{ payload: retry, runAt: next.next_attempt_at! }]);
          break;
        }
        const fresh = await lockDelivery(trx, deliveryId);
        if (fresh?.pending_job !== token) {
          // Deleted, or another run of this job (its lease had lapsed) recorded first.
          if (fresh) this.log.error({ delivery: deliveryId }, 'webhook attempt result dropped: superseded');
          break;
        }
        expected = { status: fresh.status, attempt_count: fresh.attempt_count };
      }
      await this.jobs.finishIn(trx, job);
    });
  }
}
