import { defineModule } from '../module.js';
import { WebhookDeliverer } from './delivery.js';
import { webhookRoutes } from './routes.js';
import { WebhookService } from './service.js';

/** Webhook subscriptions, the event outbox, and signed deliveries with retries. Needs no other module. */
export const webhooksModule = defineModule()({
  name: 'webhooks',
  needs: [],
  create({ platform }) {
    const { config, db, clock, keys, log } = platform;
    const policy = { allowPrivateNetwork: config.allowPrivateNetwork };
    const service = new WebhookService(db, clock, keys.encryptionKey, policy);
    const deliverer = new WebhookDeliverer(
      platform.jobs,
      db,
      clock,
      keys.encryptionKey,
      { retryScheduleMs: config.webhookRetryScheduleMs, timeoutMs: config.webhookTimeoutMs, policy },
      log,
    );
    return { api: service, routes: (app) => webhookRoutes(app, service), jobs: deliverer.queues() };
  },
});
