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

export function webhookRoutes(app: TypedApp, webhooks: WebhookService): void {
  const tags = ['Webhooks'];

  app.post(
    '/v1/webhooks',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        tags,
        summary: 'Subscribe a URL to events; the answer (not wrapped) carries the signing secret, shown once',
        body: CreateBody,
        response: { 201: CreatedWebhook },
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
        tags,
        summary: 'List the account’s webhooks (never their secrets)',
        querystring: ListQuery,
        response: { 200: WebhookList },
      },
    },
    async (request) => webhooks.list(actorOf(request.caller).accountId, request.query),
  );

  app.get(
    '/v1/webhooks/:id',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Read a webhook',
        params: WebhookParams,
        response: { 200: wrap('webhook', Webhook) },
      },
    },
    async (request) => ({
      webhook: await webhooks.get(actorOf(request.caller).accountId, request.params.id),
    }),
  );

  app.patch(
    '/v1/webhooks/:id',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Change url, events, description or active (false pauses it)',
        params: WebhookParams,
        body: UpdateBody,
        response: { 200: wrap('webhook', Webhook) },
      },
    },
    async (request) => ({
      webhook: await webhooks.update(actorOf(request.caller).accountId, request.params.id, request.body),
    }),
  );

  app.delete(
    '/v1/webhooks/:id',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Delete a webhook with its delivery history; nothing more is sent to it',
        params: WebhookParams,
        response: { 204: { type: 'null', description: 'Deleted' } },
      },
    },
    async (request, reply) => {
      await webhooks.remove(actorOf(request.caller).accountId, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        tags,
        summary: 'New signing secret, shown once; the previous one also signs for 24 hours',
        params: WebhookParams,
        response: { 200: wrap('webhook', RotatedWebhook) },
      },
    },
    async (request) => ({
      webhook: await webhooks.rotateSecret(actorOf(request.caller).accountId, request.params.id),
    }),
  );

  app.post(
    '/v1/webhooks/:id/test',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        tags,
        summary: 'Send a webhook.test event to this webhook only',
        params: WebhookParams,
        response: { 202: TestSent },
      },
    },
    async (request, reply) => {
      const sent = await webhooks.sendTest(actorOf(request.caller).accountId, request.params.id);
      reply.code(202);
      return sent;
    },
  );

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Delivery history, newest first, with every attempt',
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryList },
      },
    },
    async (request) =>
      webhooks.listDeliveries(actorOf(request.caller).accountId, request.params.id, request.query),
  );

  app.post(
    '/v1/webhooks/:id/deliveries/:delivery_id/retry',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        tags,
        summary: 'One manual attempt of a failed delivery, made at once and recorded as manual',
        params: DeliveryParams,
        response: { 202: wrap('delivery', Delivery) },
      },
    },
    async (request, reply) => {
      const { id, delivery_id } = request.params;
      const delivery = await webhooks.retryDelivery(actorOf(request.caller).accountId, id, delivery_id);
      reply.code(202);
      return { delivery };
    },
  );

  app.get(
    '/v1/events/:id',
    {
      config: { access: 'private' },
      schema: {
        tags: ['Events'],
        summary: 'Read one of the account’s events (the envelope as delivered)',
        params: EventParams,
        response: { 200: wrap('event', Event) },
      },
    },
    async (request) => ({
      event: await webhooks.getEvent(actorOf(request.caller).accountId, request.params.id),
    }),
  );
}
