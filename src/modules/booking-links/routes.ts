import { actorOf } from '../../platform/actor.js';
import { answer, withExample } from '../../platform/openapi.js';
import type { TypedApp } from '../../platform/routes.js';
import { ListQuery, wrap } from '../../platform/schemas.js';
import { BookingLinkList, BookingLinkSchema, CreateLinkBody, LinkParams, UpdateLinkBody } from './schemas.js';
import type { BookingLinkService } from './service.js';

/** The route-specific error answers of the OpenAPI document (src/app.ts adds 400/401/403/404/429/5xx). */
const SLUG_TAKEN = '`conflict` with `code: slug_taken`: another live booking link uses the slug';
const NOT_PAYABLE =
  '`unprocessable` with `code: payments_not_configured`: a price on a server without payments (for test mode: without STRIPE_TEST_SECRET_KEY)';

/** What the OpenAPI document shows (platform/openapi.ts). */
const LINK = {
  id: 'link_01jxk3f5g7h9j1k3m5n7p9q1r3',
  livemode: true,
  slug: 'physio-assessment',
  title: 'Physiotherapy assessment',
  description: 'A first assessment with one of our physiotherapists.',
  duration_minutes: 45,
  durations: [30, 45, 60],
  host_ids: ['0190a4c2-7b1e-7d3a-9f4e-2c8b5d6a1e03', '0190a4c3-2a4b-7c6d-8e0f-1a2b3c4d5e6f'],
  assignment: 'round_robin' as const,
  questions: [
    { id: 'reason', label: 'What brings you in?', type: 'textarea' as const, required: true },
    {
      id: 'first_visit',
      label: 'First visit?',
      type: 'select' as const,
      required: false,
      options: ['Yes', 'No'],
    },
  ],
  price_amount: 6500,
  price_currency: 'eur',
  minimum_notice_minutes: 240,
  max_days_ahead: 60,
  active: true,
  recurrence: null,
  seats: null,
  url: 'https://kairos.acme-physio.example/book/physio-assessment',
  created_at: '2054-06-02T12:00:00.000Z',
  updated_at: '2054-06-02T12:00:00.000Z',
  deleted_at: null,
};

/** A free link whose bookers may ask for a weekly or monthly series (docs/api.md#recurring-series). */
const RECURRING_LINK = {
  ...LINK,
  id: 'link_01jxk4a2b4c6d8e0f2g4h6j8k0',
  slug: 'physio-follow-up',
  title: 'Follow-up session',
  description: 'Regular follow-up sessions with your physiotherapist.',
  duration_minutes: 30,
  durations: [30],
  host_ids: [LINK.host_ids[0]!],
  assignment: 'single' as const,
  questions: [],
  price_amount: null,
  price_currency: null,
  recurrence: { frequencies: ['weekly' as const, 'monthly' as const], max_count: 12 },
  url: 'https://kairos.acme-physio.example/book/physio-follow-up',
};

/** A seated link: twelve customers share each slot (docs/api.md#seats). */
const SEATED_LINK = {
  ...RECURRING_LINK,
  id: 'link_01jxk4c3d5e7f9g1h3j5k7m9n1',
  slug: 'back-pain-class',
  title: 'Back pain group class',
  description: 'A guided group class for a healthy back.',
  duration_minutes: 60,
  durations: [60],
  recurrence: null,
  seats: { capacity: 12, show_remaining: true },
  url: 'https://kairos.acme-physio.example/book/back-pain-class',
};

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
        problems: {
          '409': { description: `${SLUG_TAKEN}; or \`idempotency-key-in-use\``, codes: ['slug_taken'] },
          '422': {
            description: `${NOT_PAYABLE}; or \`idempotency-key-reused\``,
            codes: ['payments_not_configured'],
          },
        },
      },
      schema: {
        operationId: 'createBookingLink',
        tags,
        summary:
          'Create a booking link: a public page ({base_url}/book/{slug}) where customers book its hosts',
        body: withExample(CreateLinkBody, {
          slug: LINK.slug,
          title: LINK.title,
          description: LINK.description,
          durations: LINK.durations,
          duration_minutes: 45,
          host_ids: LINK.host_ids,
          assignment: 'round_robin',
          questions: LINK.questions,
          price_amount: 6500,
          price_currency: 'eur',
          minimum_notice_minutes: 240,
          max_days_ahead: 60,
        }),
        response: { 201: answer('The new booking link', Link, { booking_link: LINK }) },
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
        operationId: 'listBookingLinks',
        tags,
        summary: 'List the account’s booking links of the caller’s mode (live or test), newest first',
        querystring: ListQuery,
        response: {
          200: answer('One page of booking links', BookingLinkList, {
            booking_links: [SEATED_LINK, RECURRING_LINK, LINK],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => links.list(actorOf(request.caller), request.query),
  );

  app.get(
    '/v1/booking-links/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getBookingLink',
        tags,
        summary: 'Read a booking link',
        params: LinkParams,
        response: { 200: answer('The booking link', Link, { booking_link: LINK }) },
      },
    },
    async (request) => ({
      booking_link: await links.read(actorOf(request.caller), request.params.id),
    }),
  );

  app.patch(
    '/v1/booking-links/:id',
    {
      config: {
        access: 'private',
        problems: {
          '409': { description: SLUG_TAKEN, codes: ['slug_taken'] },
          '422': { description: NOT_PAYABLE, codes: ['payments_not_configured'] },
        },
      },
      schema: {
        operationId: 'updateBookingLink',
        tags,
        summary: 'Change any field of a booking link; the result is validated as a whole',
        params: LinkParams,
        body: withExample(UpdateLinkBody, { seats: { capacity: 12, show_remaining: true } }),
        response: {
          200: answer('The booking link as updated', Link, {
            booking_link: { ...SEATED_LINK, updated_at: '2054-06-04T09:30:00.000Z' },
          }),
        },
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
        operationId: 'deleteBookingLink',
        tags,
        summary:
          'Delete a booking link (soft: it leaves lists and the public surface, its slug is free again); answers its final state',
        params: LinkParams,
        response: {
          200: answer('The deleted booking link, in its final state', Link, {
            booking_link: {
              ...LINK,
              updated_at: '2054-06-30T17:00:00.000Z',
              deleted_at: '2054-06-30T17:00:00.000Z',
            },
          }),
        },
      },
    },
    async (request) => ({
      booking_link: await links.remove(actorOf(request.caller), request.params.id),
    }),
  );
}
