/**
 * The delivery engine, on the one background-work mechanism (jobs/runner.ts):
 *
 * - `webhook-dispatch` (one job per event, enqueued by emitEvent in the emitting transaction) turns
 *   the committed event into one delivery per matching active subscription, and enqueues the first
 *   attempt of each, in one transaction (re-running it creates nothing twice).
 * - `webhook-attempt` (one job per attempt) POSTs the stored envelope bytes with fresh signature
 *   headers, records the attempt, and in the same transaction either ends the delivery (2xx →
 *   succeeded; last scheduled attempt or a manual one → failed) or enqueues the next attempt at
 *   retry-schedule[n] after the failed one (docs/api.md#signatures-and-retries: +1 min, +5 min, +30 min).
 *
 * Claims are SKIP LOCKED leases renewed while the attempt runs, so each attempt is made by exactly
 * one worker of any number of processes, and an attempt cut short by a crash is made again once the
 * dead process's lease lapses (about ATTEMPT_LEASE_MS). A delivery names the one job it expects
 * (`pending_job`); a job that is stale (its delivery paused, retried or already recorded) does nothing.
 */
import type { Db } from '../../db/store.js';
import { withTransaction } from '../../db/store.js';
import { enqueueMany, type Job, type JobRunner } from '../../jobs/runner.js';
import type { JobContribution } from '../module.js';
import type { Clock } from '../../platform/clock.js';
import { decryptSecret, randomToken } from '../../platform/crypto.js';
import { prefixedId } from '../../platform/ids.js';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { type AttemptResult, attemptDelivery } from './attempt.js';
import { ATTEMPT_QUEUE, DISPATCH_QUEUE } from './events.js';
import {
  attemptContext,
  type DeliveryRow,
  type DeliveryState,
  dispatchTargets,
  insertDeliveries,
  lockDelivery,
  recordOutcome,
} from './repo.js';
import { buildDeliveryHeaders } from './signing.js';

/** Attempts running at once in one process, all endpoints together. */
export const ATTEMPT_CONCURRENCY = 32;
/** Attempts running at once in one process for one subscription: a slow receiver holds at most these. */
export const ENDPOINT_CONCURRENCY = 4;
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

type NextState = Pick<
  DeliveryRow,
  'status' | 'attempt_count' | 'next_attempt_at' | 'pending_job' | 'updated_at'
>;

export class WebhookDeliverer {
  constructor(
    private readonly jobs: Pick<JobRunner, 'finishIn'>,
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
        options: { concurrency: 4, leaseMs: ATTEMPT_LEASE_MS, extendLease: true },
      },
      {
        queue: ATTEMPT_QUEUE,
        handler: (job: Job<AttemptPayload>) => this.attempt(job),
        options: {
          concurrency: ATTEMPT_CONCURRENCY,
          leaseMs: ATTEMPT_LEASE_MS,
          extendLease: true,
          partition: { key: 'webhook_id', concurrency: ENDPOINT_CONCURRENCY },
        },
      },
    ];
  }

  /** Fans a committed event out into deliveries and their first attempts, in one transaction. */
  private async dispatch(job: Job<DispatchPayload>): Promise<void> {
    await withTransaction(this.db, async (trx) => {
      const targets = await dispatchTargets(trx, job.payload.event_id);
      const now = this.clock.now();
      const jobs = new Map<string, AttemptPayload>();
      const rows: DeliveryRow[] = targets.map((target) => {
        const id = prefixedId('whd', now.getTime());
        const first = attemptJob({ id, webhook_id: target.webhook_id }, false);
        jobs.set(id, first.payload);
        return {
          id,
          webhook_id: target.webhook_id,
          event_id: target.event_id,
          event_type: target.event_type,
          status: 'pending',
          attempt_count: 0,
          next_attempt_at: now,
          pending_job: first.token,
          created_at: now,
          updated_at: now,
        };
      });
      // A delivery that exists already (this job ran before and its end was lost) is not made again.
      const created = await insertDeliveries(trx, rows);
      await enqueueMany(
        trx,
        ATTEMPT_QUEUE,
        created.map((d) => ({ payload: jobs.get(d.id)!, runAt: now })),
      );
      await this.jobs.finishIn(trx, job);
    });
  }

  /** Makes one attempt of a delivery and records it; schedules the next one or ends the delivery. */
  private async attempt(job: Job<AttemptPayload>): Promise<void> {
    const ctx = await attemptContext(this.db, job.payload.delivery_id);
    // Stale: the delivery was deleted, ended, paused, or expects another job.
    if (ctx?.status !== 'pending' || ctx.pending_job !== job.payload.token) return;
    const state: DeliveryState = { status: ctx.status, attempt_count: ctx.attempt_count };
    const startedMs = this.clock.nowMs();
    if (!ctx.active) {
      // Paused while this job waited (its pause raced the fan-out): end it like the pause does.
      await this.record(job, state, startedMs, null);
      return;
    }
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
    await this.record(job, state, startedMs, result);
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

  /** Records the attempt and the delivery's next state, and ends this job, in one transaction. */
  private async record(
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
          attempt: result && {
            delivery_id: deliveryId,
            number: next.attempt_count,
            manual,
            at: new Date(startedMs),
            response_status: result.response_status,
            duration_ms: result.duration_ms,
            error: result.error,
            response_body: result.response_body,
          },
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
