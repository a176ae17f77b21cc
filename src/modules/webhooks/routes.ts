import { answer, noContent, withExample } from '../../platform/openapi.js';
import { ListQuery, wrap } from '../../platform/schemas.js';
import {
  CreateBody,
  CreatedWebhook,
  DeliveriesQuery,
  Delivery,
  DeliveryList,
  DeliveryParams,
  Event,
  EventParams,
  eventTypeSchemas,
  RotatedWebhook,
  TestSent,
  UpdateBody,
  Webhook,
  WebhookList,
  WebhookParams,
} from './schemas.js';
import type { WebhookService } from './service.js';
import { actorOf } from '../../platform/actor.js';
import type { TypedApp } from '../../platform/routes.js';

/** What the OpenAPI document shows (platform/openapi.ts). */
const HOOK = {
  id: 'wh_01jxk2m4q8r7t5v3w9y6z1a2b3',
  url: 'https://crm.acme-physio.example/hooks/kairos',
  events: ['booking.created', 'booking.cancelled'],
  description: 'CRM sync',
  active: true,
  livemode: true,
  created_at: '2054-06-02T11:30:00.000Z',
  updated_at: '2054-06-02T11:30:00.000Z',
  previous_secret_expires_at: null,
};
const SECRET = 'whsec_MfKQ9r8GKYqVpmLs1e8xq5dUJ3ZtR0d0n6yq2m1tN2c=';
const EVENT = {
  id: 'evt_01jxk9c2f4h6j8k0m2n4p6q8r0',
  type: 'booking.created',
  created_at: '2054-06-08T09:15:02.310Z',
  livemode: true,
  data: {
    booking: {
      id: 'booking_01jxk9c2e1d3f5g7h9j1k3m5n7',
      status: 'confirmed',
      start_time: '2054-06-10T14:00:00.000Z',
      end_time: '2054-06-10T14:30:00.000Z',
      customer_email: 'ada@example.com',
      customer_name: 'Ada Lovelace',
    },
  },
};
const DELIVERY = {
  id: 'whd_01jxk9c2g5h7j9k1m3n5p7q9r1',
  webhook_id: HOOK.id,
  event_id: EVENT.id,
  event_type: EVENT.type,
  status: 'succeeded' as const,
  attempts: [
    {
      number: 1,
      at: '2054-06-08T09:15:02.402Z',
      manual: false,
      response_status: 200,
      duration_ms: 143,
      error: null,
      response_body: '{"ok":true}',
    },
  ],
  next_attempt_at: null,
  created_at: '2054-06-08T09:15:02.310Z',
};

export function webhookRoutes(app: TypedApp, webhooks: WebhookService, eventTypes: readonly string[]): void {
  const tags = ['Webhooks'];
  for (const schema of eventTypeSchemas(eventTypes)) app.addSchema(schema);

  app.post(
    '/v1/webhooks',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        operationId: 'createWebhook',
        tags,
        summary: 'Subscribe a URL to events; the answer (not wrapped) carries the signing secret, shown once',
        body: withExample(CreateBody, {
          url: HOOK.url,
          events: HOOK.events,
          description: HOOK.description,
        }),
        response: {
          201: answer('The subscription with its signing secret (shown only here)', CreatedWebhook, {
            id: HOOK.id,
            url: HOOK.url,
            events: HOOK.events,
            description: HOOK.description,
            livemode: true,
            secret: SECRET,
            created_at: HOOK.created_at,
          }),
        },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(actorOf(request.caller), request.body);
      reply.code(201).header('location', `/v1/webhooks/${created.id}`);
      return created;
    },
  );

  app.get(
    '/v1/webhooks',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'listWebhooks',
        tags,
        summary: 'List the account’s webhooks (never their secrets)',
        querystring: ListQuery,
        response: {
          200: answer('One page of webhooks, newest first', WebhookList, {
            webhooks: [HOOK],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => webhooks.list(actorOf(request.caller), request.query),
  );

  app.get(
    '/v1/webhooks/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'Read a webhook',
        params: WebhookParams,
        response: {
          200: answer('The webhook (never its secret)', wrap('webhook', Webhook), { webhook: HOOK }),
        },
      },
    },
    async (request) => ({
      webhook: await webhooks.get(actorOf(request.caller), request.params.id),
    }),
  );

  app.patch(
    '/v1/webhooks/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Change url, events, description or active (false pauses it)',
        params: WebhookParams,
        body: withExample(UpdateBody, {
          events: ['booking.created', 'booking.updated', 'booking.cancelled'],
        }),
        response: {
          200: answer('The webhook as updated', wrap('webhook', Webhook), {
            webhook: {
              ...HOOK,
              events: ['booking.created', 'booking.updated', 'booking.cancelled'],
              updated_at: '2054-06-05T08:12:40.019Z',
            },
          }),
        },
      },
    },
    async (request) => ({
      webhook: await webhooks.update(actorOf(request.caller), request.params.id, request.body),
    }),
  );

  app.delete(
    '/v1/webhooks/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a webhook with its delivery history; nothing more is sent to it',
        params: WebhookParams,
        response: { 204: noContent('Deleted with its delivery history') },
      },
    },
    async (request, reply) => {
      await webhooks.remove(actorOf(request.caller), request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: 'New signing secret, shown once; the previous one also signs for 24 hours',
        params: WebhookParams,
        response: {
          200: answer('The webhook with its new secret (shown only here)', wrap('webhook', RotatedWebhook), {
            webhook: {
              ...HOOK,
              updated_at: '2054-06-09T10:00:00.000Z',
              previous_secret_expires_at: '2054-06-10T10:00:00.000Z',
              secret: 'whsec_3q8Vb1sN0xZkE7yW4tR2mP9cL6hG5fD1aJ0uK8iO2n4=',
            },
          }),
        },
      },
    },
    async (request) => ({
      webhook: await webhooks.rotateSecret(actorOf(request.caller), request.params.id),
    }),
  );

  app.post(
    '/v1/webhooks/:id/test',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        operationId: 'testWebhook',
        tags,
        summary: 'Send a webhook.test event to this webhook only',
        params: WebhookParams,
        response: {
          202: answer('The test event and its delivery, still pending', TestSent, {
            event: {
              id: 'evt_01jxkb0a2c4e6g8j0k2m4p6r8t',
              type: 'webhook.test',
              created_at: '2054-06-09T10:05:00.000Z',
              livemode: true,
              data: { webhook_id: HOOK.id, message: 'This is a test event sent from the Kairos API.' },
            },
            delivery: {
              ...DELIVERY,
              id: 'whd_01jxkb0a3d5f7h9k1m3n5q7s9v',
              event_id: 'evt_01jxkb0a2c4e6g8j0k2m4p6r8t',
              event_type: 'webhook.test',
              status: 'pending',
              attempts: [],
              next_attempt_at: '2054-06-09T10:05:00.000Z',
              created_at: '2054-06-09T10:05:00.000Z',
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const sent = await webhooks.sendTest(actorOf(request.caller), request.params.id);
      reply.code(202);
      return sent;
    },
  );

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: 'Delivery history, newest first, with every attempt',
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: {
          200: answer('One page of deliveries', DeliveryList, {
            deliveries: [DELIVERY],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => webhooks.listDeliveries(actorOf(request.caller), request.params.id, request.query),
  );

  app.post(
    '/v1/webhooks/:id/deliveries/:delivery_id/retry',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        operationId: 'retryWebhookDelivery',
        tags,
        summary: 'One manual attempt of a failed delivery, made at once and recorded as manual',
        params: DeliveryParams,
        response: {
          202: answer('The delivery with the manual attempt recorded', wrap('delivery', Delivery), {
            delivery: {
              ...DELIVERY,
              attempts: [
                {
                  number: 4,
                  at: '2054-06-08T09:51:03.004Z',
                  manual: false,
                  response_status: 503,
                  duration_ms: 88,
                  error: 'HTTP 503',
                  response_body: 'Service Unavailable',
                },
                { ...DELIVERY.attempts[0]!, number: 5, at: '2054-06-08T11:02:17.550Z', manual: true },
              ],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const { id, delivery_id } = request.params;
      const delivery = await webhooks.retryDelivery(actorOf(request.caller), id, delivery_id);
      reply.code(202);
      return { delivery };
    },
  );

  app.get(
    '/v1/events/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getEvent',
        tags: ['Events'],
        summary: 'Read one of the account’s events (the envelope as delivered)',
        params: EventParams,
        response: { 200: answer('The event', wrap('event', Event), { event: EVENT }) },
      },
    },
    async (request) => ({
      event: await webhooks.getEvent(actorOf(request.caller), request.params.id),
    }),
  );
}
