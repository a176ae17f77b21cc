/**
 * The delivery engine, on the one background-work mechanism (jobs/runner.ts):
 *
 * - `webhook-dispatch` (one job per event, enqueued by emitEvent in the emitting transaction) turns
 *   the committed event into one delivery per matching active subscription, and enqueues the first
 *   attempt of each, in one statement that also ends the dispatch job (re-running it creates nothing
 *   twice). makeDeliveries is the one way deliveries are made (a test send makes its one that way too).
 * - `webhook-attempt` (one job per attempt) POSTs the stored envelope bytes with fresh signature
 *   headers, then records the outcome in one statement (repo.ts recordOutcomes): the attempt row, the
 *   delivery's next state (2xx → succeeded; last scheduled attempt or a manual one → failed), the next
 *   attempt's job at retry-schedule[n] after the failed one (docs/api.md#signatures-and-retries: +1 min,
 *   +5 min, +30 min; settings.retryScheduleMs, from the configuration: deliverySettings), and the end
 *   of the job.
 *
 * Each job's claim reads what its handler needs in the same statement (RegisterOptions.claimWith): a
 * dispatch its event's targets (claimTargets), an attempt its delivery, subscription and event in one
 * join (claimContext). Claims are SKIP LOCKED leases renewed while the job runs, so each attempt is
 * made by exactly one worker of any number of processes, and an attempt cut short by a crash is made
 * again once the dead process's lease lapses (about ATTEMPT_LEASE_MS). A delivery names the one job it
 * expects (`pending_job`); a job that is stale (its delivery paused, retried or already recorded)
 * makes no request, and its outcome applies only while the delivery still expects it.
 *
 * The runner claims due jobs in batches (one statement each), and several attempts to one endpoint
 * run at once (ENDPOINT_CONCURRENCY), so deliveries need not arrive in the order of their events.
 * The statements of the jobs running at once in this process are batched (lib/batcher.ts): their
 * dispatches in one statement, their outcomes in one. A batch that failed is tried again one job at a
 * time (a lone job is a batch of one), so one bad row fails only its own job.
 */
import type { Db, Tx } from '../../db/store.js';
import type { BatchedWrite, Job } from '../../jobs/runner.js';
import { Batcher } from '../../lib/batcher.js';
import type { Config } from '../../config.js';
import type { JobContribution, Platform } from '../module.js';
import type { Clock } from '../../platform/clock.js';
import { decryptSecret, randomToken } from '../../platform/crypto.js';
import { prefixedId } from '../../platform/ids.js';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { type AttemptResult, attemptDelivery } from './attempt.js';
import { ATTEMPT_QUEUE, DISPATCH_QUEUE } from './events.js';
import {
  type AttemptContext,
  claimContext,
  claimTargets,
  contextRead,
  insertDeliveries,
  type NewDelivery,
  type Outcome,
  recordOutcomes,
  targetsRead,
} from './repo.js';
import { buildDeliveryHeaders } from './signing.js';

/** Attempt jobs running at once in one process, all endpoints together. */
export const ATTEMPT_CONCURRENCY = 512;
/**
 * Attempt jobs of one subscription running at once in one process: most of an attempt's time under
 * load is spent waiting for the store (the claim, the record), so one endpoint needs many of them to
 * keep up with a busy account's events. A slow receiver holds at most these (half).
 */
export const ENDPOINT_JOBS = 256;
/** Requests in flight to one subscription's URL at once from one process: what a receiver sees. */
export const ENDPOINT_CONCURRENCY = 32;
/** Dispatch jobs running at once in one process (their fan-outs are batched). */
const DISPATCH_CONCURRENCY = 256;
/** Most items one batched statement takes, and such statements under way at once. */
const BATCHING = { maxBatch: 128, maxInFlight: 2 };
/** Claim lease of dispatch and attempt jobs; renewed while they run, so it only bounds crash recovery. */
export const ATTEMPT_LEASE_MS = 10_000;

export interface DeliverySettings {
  /** Delays before the 2nd, 3rd… attempt, each counted from the end of the failed one. */
  retryScheduleMs: number[];
  timeoutMs: number;
  policy: OutboundPolicy;
}

/** The deliverer's settings, from the configuration (KAIROS_WEBHOOK_RETRY_SCHEDULE and the others). */
export function deliverySettings(
  config: Pick<Config, 'webhookRetryScheduleMs' | 'webhookTimeoutMs' | 'allowPrivateNetwork'>,
): DeliverySettings {
  return {
    retryScheduleMs: config.webhookRetryScheduleMs,
    timeoutMs: config.webhookTimeoutMs,
    policy: { allowPrivateNetwork: config.allowPrivateNetwork },
  };
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

/**
 * Makes pending deliveries of `targets` at `now`, each with its first attempt's job, and ends `end`'s
 * jobs, in one statement (repo.ts insertDeliveries): the one way a delivery is made. Answers the ids
 * of the deliveries made (a target that has one already gets none).
 */
export async function makeDeliveries(
  db: Db | Tx,
  targets: readonly Pick<NewDelivery, 'webhook_id' | 'event_id' | 'event_type'>[],
  now: Date,
  end: BatchedWrite | null = null,
): Promise<{ rows: NewDelivery[]; made: string[] }> {
  const jobs = new Map<string, AttemptPayload>();
  const rows = targets.map((target): NewDelivery => {
    const id = prefixedId('whd', now.getTime());
    const first = attemptJob({ id, webhook_id: target.webhook_id }, false);
    jobs.set(id, first.payload);
    return {
      id,
      webhook_id: target.webhook_id,
      event_id: target.event_id,
      event_type: target.event_type,
      pending_job: first.token,
    };
  });
  return { rows, made: await insertDeliveries(db, rows, ATTEMPT_QUEUE, jobs, now, end) };
}

interface Log {
  error(obj: object, msg: string): void;
}

/** A finished attempt (`result` null: none was made), waiting to be recorded. */
interface Finished {
  job: Job<AttemptPayload>;
  startedMs: number;
  result: AttemptResult | null;
}

export class WebhookDeliverer {
  private readonly dispatches = new Batcher<Job<DispatchPayload>, null>(
    (jobs) => this.dispatchMany(jobs),
    BATCHING,
  );
  private readonly outcomes = new Batcher<Finished, null>((items) => this.recordMany(items), BATCHING);
  /** Per subscription: requests in flight, and the attempts waiting for one of them to end. */
  private readonly sending = new Map<string, { running: number; waiting: (() => void)[] }>();

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
          claimWith: claimContext,
        },
      },
    ];
  }

  /** Fans a committed event out into deliveries and their first attempts, with the others running. */
  private async dispatch(job: Job<DispatchPayload>): Promise<void> {
    // A failed batch may have failed for another job's sake: this one alone, once more.
    await this.dispatches.ask(job).catch((err: unknown) => {
      this.log.error({ err, job: job.id }, 'webhook dispatch batch failed; dispatching alone');
      return this.dispatchMany([job]);
    });
  }

  /**
   * Fans committed events out into deliveries and their first attempts: the targets each claim read,
   * then one statement that makes the deliveries and their attempt jobs and ends the dispatch jobs.
   */
  private async dispatchMany(batch: readonly Job<DispatchPayload>[]): Promise<null[]> {
    const targets = batch.flatMap((job) => targetsRead(job.read));
    // A delivery that exists already (this job ran before and its end was lost) is not made again,
    // nor its first attempt.
    await makeDeliveries(this.db, targets, this.clock.now(), this.jobs.finishingMany(batch));
    return batch.map(() => null);
  }

  /** Makes one attempt of a delivery and records it; schedules the next one or ends the delivery. */
  private async attempt(job: Job<AttemptPayload>): Promise<void> {
    const ctx = contextRead(job.read);
    // Stale: the delivery was deleted, ended, paused, or expects another job. The runner ends it.
    if (ctx?.status !== 'pending' || ctx.pending_job !== job.payload.token) return;
    if (!ctx.active) {
      // Paused while this job waited (its pause raced the fan-out): end it like the pause does.
      await this.record({ job, startedMs: this.clock.nowMs(), result: null });
      return;
    }
    const finished = await this.endpointSlot(ctx.webhook_id, () => this.send(job, ctx));
    await this.record(finished);
  }

  /** The request of an attempt, signed when sent: waiting for a slot must not age its timestamp. */
  private async send(job: Job<AttemptPayload>, ctx: AttemptContext): Promise<Finished> {
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
    return { job, startedMs, result };
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

  /** Records an attempt's outcome and ends its job, with the attempts finishing meanwhile. */
  private async record(finished: Finished): Promise<void> {
    await this.outcomes.ask(finished).catch((err: unknown) => {
      // A deadlock with a pause, or one bad row: each outcome of the batch is recorded alone.
      this.log.error(
        { err, delivery: finished.job.payload.delivery_id },
        'webhook outcome batch failed; recording alone',
      );
      return this.recordMany([finished]);
    });
  }

  /** Records finished attempts and ends their jobs, in one statement (repo.ts recordOutcomes). */
  private async recordMany(items: readonly Finished[]): Promise<null[]> {
    const outcomes = items.map(({ job, startedMs, result }): Outcome => {
      const { delivery_id: deliveryId, token, manual } = job.payload;
      return {
        deliveryId,
        token,
        manual,
        attempt: result && {
          ok: result.ok,
          at: new Date(startedMs),
          response_status: result.response_status,
          duration_ms: result.duration_ms,
          error: result.error,
          response_body: result.response_body,
        },
        retry: attemptJob({ id: deliveryId, webhook_id: job.payload.webhook_id }, false),
      };
    });
    const superseded = await recordOutcomes(
      this.db,
      outcomes,
      ATTEMPT_QUEUE,
      this.settings.retryScheduleMs,
      this.clock.now(),
      this.jobs.finishingMany(items.map((i) => i.job)),
    );
    // Another run of this job (its lease had lapsed) recorded first, or a manual retry took over.
    for (const id of superseded)
      this.log.error({ delivery: id }, 'webhook attempt result dropped: superseded');
    return items.map(() => null);
  }
}
