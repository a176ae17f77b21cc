import { actorOf } from '../../platform/actor.js';
import type { TypedApp } from '../../platform/routes.js';
import { ListQuery, wrap } from '../../platform/schemas.js';
import { BookingLinkList, BookingLinkSchema, CreateLinkBody, LinkParams, UpdateLinkBody } from './schemas.js';
import type { BookingLinkService } from './service.js';

/** The route-specific error answers of the OpenAPI document (src/app.ts adds 400/401/403/404/429/5xx). */
const SLUG_TAKEN = '`conflict` with `code: slug_taken`: another live booking link uses the slug';

/** docs/api.md#booking-links: secret keys and sessions only (publishable keys get the platform's 403). */
export function bookingLinkRoutes(app: TypedApp, links: BookingLinkService): void {
  const tags = ['Booking links'];
  const Link = wrap('booking_link', BookingLinkSchema);

  app.post(
    '/v1/booking-links',
    {
      config: {
        access: 'private',
        idempotent: true,
        problems: { '409': `${SLUG_TAKEN}; or \`idempotency-key-in-use\`` },
      },
      schema: {
        tags,
        summary:
          'Create a booking link: a public page ({base_url}/book/{slug}) where customers book its hosts',
        body: CreateLinkBody,
        response: { 201: Link },
      },
    },
    async (request, reply) => {
      const link = await links.create(actorOf(request.caller), request.body);
      reply.code(201).header('location', `/v1/booking-links/${link.id}`);
      return { booking_link: link };
    },
  );

  app.get(
    '/v1/booking-links',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'List the account’s booking links, newest first',
        querystring: ListQuery,
        response: { 200: BookingLinkList },
      },
    },
    async (request) => links.list(actorOf(request.caller).accountId, request.query),
  );

  app.get(
    '/v1/booking-links/:id',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Read a booking link',
        params: LinkParams,
        response: { 200: Link },
      },
    },
    async (request) => ({
      booking_link: await links.read(actorOf(request.caller).accountId, request.params.id),
    }),
  );

  app.patch(
    '/v1/booking-links/:id',
    {
      config: { access: 'private', problems: { '409': SLUG_TAKEN } },
      schema: {
        tags,
        summary: 'Change any field of a booking link; the result is validated as a whole',
        params: LinkParams,
        body: UpdateLinkBody,
        response: { 200: Link },
      },
    },
    async (request) => ({
      booking_link: await links.update(actorOf(request.caller), request.params.id, request.body),
    }),
  );

  app.delete(
    '/v1/booking-links/:id',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary:
          'Delete a booking link (soft: it leaves lists and the public surface, its slug is free again); answers its final state',
        params: LinkParams,
        response: { 200: Link },
      },
    },
    async (request) => ({
      booking_link: await links.remove(actorOf(request.caller).accountId, request.params.id),
    }),
  );
}
