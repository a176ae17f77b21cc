import { defineModule } from '../module.js';
import type { WebhooksApi, WebhooksNeeds } from './api.js';
import { deliverySettings, WebhookDeliverer } from './delivery.js';
import { TEST_EVENT_TYPE, TestEventPayload } from './events.js';
import { webhookRetentionSchedule } from './retention.js';
import { webhookRoutes } from './routes.js';
import { WebhookService } from './service.js';

/** Webhook subscriptions, the event outbox, and signed deliveries with retries. Needs no other module. */
export const webhooksModule = defineModule<WebhooksNeeds>()({
  name: 'webhooks',
  needs: [],
  events: { [TEST_EVENT_TYPE]: TestEventPayload },
  create({ platform, events }) {
    const { config, db, clock, keys, log } = platform;
    // Every declared type but the test event, which only POST /v1/webhooks/{id}/test sends.
    const types = [...events.keys()].filter((t) => t !== TEST_EVENT_TYPE);
    const service = new WebhookService(platform, types);
    const deliverer = new WebhookDeliverer(
      platform.jobs,
      db,
      clock,
      keys.encryptionKey,
      deliverySettings(config),
      log,
    );
    const api: WebhooksApi = service;
    return {
      api,
      routes: (app) => webhookRoutes(app, service, types),
      jobs: deliverer.queues(),
      schedules: [webhookRetentionSchedule(db, clock, config.retention)],
    };
  },
});
