/** Routes of the bookings module: the authenticated API and the public booking surface. */
import type { Static } from '@sinclair/typebox';
import { actorOf } from '../../platform/actor.js';
import type { TypedApp } from '../../platform/routes.js';
import {
  BookingAnswer,
  BookingList,
  BookingParams,
  CancelBody,
  CancelQuery,
  CreateBody,
  EntryAnswer,
  EntryList,
  EntryListQuery,
  EntryParams,
  JoinBody,
  LinkParams,
  ListQuery,
  PublicAvailabilityQuery,
  PublicBookingAnswer,
  PublicCreateBody,
  PublicEntryAnswer,
  PublicLinkAnswer,
  PublicSlots,
  RescheduleBody,
  SlugParams,
  TokenParams,
  UpdateBody,
} from './schemas.js';
import type { BookingService } from './service.js';
import type { WaitlistService } from './waitlist.js';

const CONFLICT =
  '`conflict` (code `slot_unavailable`, with a `reason`): the time is taken, busy, or outside hours, notice or horizon';
const PAST =
  '`unprocessable`: code `start_in_past` (start_time in the past) or `payments_not_configured` (a priced link)';

export function bookingRoutes(app: TypedApp, bookings: BookingService, waitlist: WaitlistService): void {
  const tags = ['Bookings'];

  app.post(
    '/v1/bookings',
    {
      config: { access: 'private', idempotent: true, problems: { '409': CONFLICT, '422': PAST } },
      schema: {
        tags,
        summary:
          'Book a time for the caller or one of its hosts (directly, or through one of its booking links)',
        body: CreateBody,
        response: { 201: BookingAnswer },
      },
    },
    async (request, reply) => {
      const created = await bookings.create(actorOf(request.caller), request.body);
      reply.code(201).header('location', `/v1/bookings/${created.booking.id}`);
      return created;
    },
  );

  app.get(
    '/v1/bookings',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'List the account’s bookings by start time',
        querystring: ListQuery,
        response: { 200: BookingList },
      },
    },
    async (request) => bookings.list(actorOf(request.caller).accountId, request.query),
  );

  app.get(
    '/v1/bookings/:id',
    {
      config: { access: 'private' },
      schema: { tags, summary: 'Read a booking', params: BookingParams, response: { 200: BookingAnswer } },
    },
    async (request) => bookings.get(actorOf(request.caller).accountId, request.params.id),
  );

  app.patch(
    '/v1/bookings/:id',
    {
      config: {
        access: 'private',
        problems: {
          '409': `${CONFLICT}; or \`booking_not_live\``,
          '422': '`unprocessable`: code `start_in_past`',
        },
      },
      schema: {
        tags,
        summary: 'Change notes or metadata; a new start_time / end_time reschedules (booking.updated)',
        params: BookingParams,
        body: UpdateBody,
        response: { 200: BookingAnswer },
      },
    },
    async (request) => bookings.update(actorOf(request.caller).accountId, request.params.id, request.body),
  );

  app.delete(
    '/v1/bookings/:id',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Cancel a booking (booking.cancelled once; a repeat answers the cancelled booking)',
        params: BookingParams,
        querystring: CancelQuery,
        response: { 200: BookingAnswer },
      },
    },
    async (request) =>
      bookings.cancel(actorOf(request.caller).accountId, request.params.id, request.query.reason),
  );

  const linkTags = ['Booking links'];
  app.get(
    '/v1/booking-links/:id/waitlist',
    {
      config: { access: 'private' },
      schema: {
        tags: linkTags,
        summary: 'List a booking link’s waitlist, oldest first (the order offers follow)',
        params: LinkParams,
        querystring: EntryListQuery,
        response: { 200: EntryList },
      },
    },
    async (request) => waitlist.list(actorOf(request.caller).accountId, request.params.id, request.query),
  );

  app.delete(
    '/v1/booking-links/:id/waitlist/:entry_id',
    {
      config: { access: 'private' },
      schema: {
        tags: linkTags,
        summary: 'Remove a waitlist entry (a time held for it passes to the next entry)',
        params: EntryParams,
        response: { 200: EntryAnswer },
      },
    },
    async (request) =>
      waitlist.remove(actorOf(request.caller).accountId, request.params.id, request.params.entry_id),
  );

  // ---- public surface: anonymous or publishable key (docs/api.md#public-booking-surface) ---------
  const publicTags = ['Public booking surface'];

  app.get(
    '/v1/public/links/:slug',
    {
      config: { access: 'public' },
      schema: {
        tags: publicTags,
        summary: 'Resolve an active booking link (no ids, no e-mail addresses)',
        params: SlugParams,
        response: { 200: PublicLinkAnswer },
      },
    },
    async (request) => bookings.publicLinkView(request.caller, request.params.slug),
  );

  app.get(
    '/v1/public/links/:slug/availability',
    {
      config: { access: 'public' },
      schema: {
        tags: publicTags,
        summary: 'Bookable slots of a link (round robin: any host free; collective: all free)',
        params: SlugParams,
        querystring: PublicAvailabilityQuery,
        response: { 200: PublicSlots },
      },
    },
    async (request, reply) => {
      const json = await bookings.publicAvailability(request.caller, request.params.slug, request.query);
      // Pre-rendered JSON text (availability/present.ts), exactly the PublicSlots shape.
      return reply
        .type('application/json; charset=utf-8')
        .send(json as unknown as Static<typeof PublicSlots>);
    },
  );

  app.post(
    '/v1/public/links/:slug/bookings',
    {
      config: { access: 'public', idempotent: true, problems: { '409': CONFLICT, '422': PAST } },
      schema: {
        tags: publicTags,
        summary: 'Book a link; the answer carries manage_url, the attendee’s self-service link (once)',
        params: SlugParams,
        body: PublicCreateBody,
        response: { 201: PublicBookingAnswer },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return bookings.createPublic(request.caller, request.params.slug, request.body);
    },
  );

  app.post(
    '/v1/public/links/:slug/waitlist',
    {
      config: { access: 'public', idempotent: true },
      schema: {
        tags: publicTags,
        summary: 'Join a link’s waitlist for a window of time',
        params: SlugParams,
        body: JoinBody,
        response: { 201: PublicEntryAnswer },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return waitlist.join(request.caller, request.params.slug, request.body);
    },
  );

  app.post(
    '/v1/public/waitlist/:token/claim',
    {
      config: {
        access: 'public',
        idempotent: true,
        problems: {
          '409': '`conflict`: code `offer_expired` or `offer_claimed`',
          '422': '`unprocessable`: the time has started',
        },
      },
      schema: {
        tags: publicTags,
        summary: 'Claim a held waitlist offer: it becomes a booking',
        params: TokenParams,
        response: { 201: PublicBookingAnswer },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return waitlist.claim(request.params.token);
    },
  );

  app.get(
    '/v1/public/bookings/:token',
    {
      config: { access: 'public' },
      schema: {
        tags: publicTags,
        summary: 'The attendee’s booking, by its self-service token',
        params: TokenParams,
        response: { 200: PublicBookingAnswer },
      },
    },
    async (request) => bookings.publicView(request.params.token),
  );

  app.post(
    '/v1/public/bookings/:token/cancel',
    {
      config: { access: 'public', problems: { '422': '`unprocessable`: code `booking_started`' } },
      schema: {
        tags: publicTags,
        summary: 'Cancel by self-service token (booking.cancelled once)',
        params: TokenParams,
        body: CancelBody,
        response: { 200: PublicBookingAnswer },
      },
    },
    async (request) => bookings.publicCancel(request.params.token, request.body?.reason),
  );

  app.post(
    '/v1/public/bookings/:token/reschedule',
    {
      config: {
        access: 'public',
        problems: {
          '409': `${CONFLICT}; or \`booking_not_live\``,
          '422': '`unprocessable`: `start_in_past` or `booking_started`',
        },
      },
      schema: {
        tags: publicTags,
        summary: 'Move the booking to a new start, same length (booking.updated)',
        params: TokenParams,
        body: RescheduleBody,
        response: { 200: PublicBookingAnswer },
      },
    },
    async (request) => bookings.publicReschedule(request.params.token, request.body.start_time),
  );
}
