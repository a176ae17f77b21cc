import { type Job, JobRunner } from '../../src/jobs/runner.js';
import { WebhookDeliverer } from '../../src/modules/webhooks/delivery.js';
import type { TestApp } from './app.js';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * A job runner of its own over the test app's store with the webhook deliverer's queues (only those
 * in `queues`, when given), as a second process would run them: retries after a minute, receivers on
 * loopback allowed. `onJob` is told each job's queue before the job runs. Not started.
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
    { retryScheduleMs: [60_000], timeoutMs: 10_000, policy: { allowPrivateNetwork: true } },
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
