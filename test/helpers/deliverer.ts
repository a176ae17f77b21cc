import { type Job, JobRunner } from '../../src/jobs/runner.js';
import { ATTEMPT_QUEUE, DISPATCH_QUEUE } from '../../src/modules/webhooks/events.js';
import { waitUntil } from './promises.js';
import { deliverySettings, WebhookDeliverer } from '../../src/modules/webhooks/delivery.js';
import type { TestApp } from './app.js';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * A job runner of its own over the test app's store with the webhook deliverer's queues (only those
 * in `queues`, when given), as a second process of the same configuration would run them (the test
 * app's retry schedule and timeout), receivers on loopback allowed. `onJob` is told each job's queue
 * before the job runs. Not started.
 */
export function delivererRunner(
  t: TestApp,
  opts: { queues?: readonly string[]; onJob?: (queue: string) => void } = {},
): JobRunner {
  const runner = new JobRunner(t.ctx.db, t.ctx.clock, quiet);
  const deliverer = new WebhookDeliverer(
    runner,
    t.ctx.db,
    t.ctx.clock,
    t.ctx.keys.encryptionKey,
    deliverySettings({ ...t.ctx.config, allowPrivateNetwork: true }),
    quiet,
  );
  for (const q of deliverer.queues()) {
    if (opts.queues && !opts.queues.includes(q.queue)) continue;
    runner.register(
      q.queue,
      (job: Job<unknown>) => {
        opts.onJob?.(q.queue);
        return q.handler(job);
      },
      q.options,
    );
  }
  return runner;
}

/**
 * Resolves once no webhook job (dispatch or attempt, due now or later) is left in the store and each
 * of `runners` (this process's) is idle: every request a delivery will get has been made, since an
 * attempt's job ends only after its request, and a pending delivery always has its job. The signal a
 * "nothing more arrives" check waits for, whichever processes run the workers.
 */
export async function webhookWorkDone(
  t: TestApp,
  runners: readonly JobRunner[] = [],
  timeoutMs = 20_000,
): Promise<void> {
  await waitUntil(
    'no webhook job left in the store',
    async () =>
      (
        await t.ctx.db
          .selectFrom('jobs')
          .select('id')
          .where('queue', 'in', [DISPATCH_QUEUE, ATTEMPT_QUEUE])
          .limit(1)
          .execute()
      ).length === 0,
    timeoutMs,
  );
  for (const runner of runners) await runner.settle();
}
