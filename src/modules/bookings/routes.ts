/** Routes of the bookings module: the authenticated API and the public booking surface. */
import type { Static } from '@sinclair/typebox';
import { actorOf } from '../../platform/actor.js';
import { CALENDAR_503, STALE_DESCRIPTION } from '../availability/schemas.js';
import { answer, withExample } from '../../platform/openapi.js';
import type { ProblemDoc } from '../../platform/http.js';
import { emptyBodyIsObject, type TypedApp } from '../../platform/routes.js';
import {
  BOOKED,
  BOOKING,
  BookingAnswer,
  BookingCreated,
  BookingList,
  BookingParams,
  CancelBody,
  CancelQuery,
  ClaimBody,
  CreateBody,
  EntryAnswer,
  EntryList,
  EntryListQuery,
  EntryParams,
  HOST_ID,
  JoinBody,
  LinkParams,
  ListQuery,
  PublicAvailabilityQuery,
  PublicBookingAnswer,
  PublicBookingCreated,
  PublicCreateBody,
  PublicEntryAnswer,
  PublicLinkAnswer,
  PublicSlots,
  RescheduleBody,
  SlugParams,
  TokenParams,
  UpdateBody,
} from './schemas.js';
import type { PublicBookings } from './public.js';
import type { BookingService } from './service.js';

/** The example booking, also read from here by test helpers (its home is schemas.ts). */
export { BOOKING } from './schemas.js';
import type { WaitlistService } from './waitlist.js';

const CONFLICT =
  '`conflict` (code `slot_unavailable`, with a `reason`): the time is taken, busy, or outside hours, notice or horizon';
const PAST =
  '`unprocessable`: code `start_in_past` (start_time in the past) or `payments_not_configured` (a priced link)';
/** A read of busy time that failed (availability, CALENDAR_503). */
const BUSY_503: ProblemDoc = {
  description: CALENDAR_503,
  codes: ['calendar_unavailable', 'calendar_disconnected'],
};
const BOOKING_503: ProblemDoc = {
  description: `${CALENDAR_503}; or code \`payments_unavailable\`: Stripe could not be reached (a priced link)`,
  codes: ['calendar_unavailable', 'calendar_disconnected', 'payments_unavailable'],
};
/** Booking a time: busy time is read, and a priced link opens a Stripe checkout. */
const BOOKING_PROBLEMS: Record<string, ProblemDoc> = {
  '409': {
    description: `${CONFLICT}; a series (\`recurrence\`) names every failing occurrence in \`conflicts\` [{start_time, end_time, reason}] and books none; \`slot_full\`: every seat of a seated slot is taken`,
    codes: ['slot_unavailable', 'slot_full'],
  },
  '422': {
    description: `${PAST}, or \`payments_not_ready\` (the payee has not finished Stripe onboarding)`,
    codes: ['start_in_past', 'payments_not_configured', 'payments_not_ready'],
  },
  '503': BOOKING_503,
};
/** Moving a booking: busy time is read again. */
const RESCHEDULE_409: ProblemDoc = {
  description: `${CONFLICT}; or \`booking_not_live\`, or \`payment_pending\` (waiting for its payment)`,
  codes: ['slot_unavailable', 'slot_full', 'booking_not_live', 'payment_pending'],
};

/** What the OpenAPI document shows (platform/openapi.ts). */
const SYNCED = [
  {
    principal_id: HOST_ID,
    provider: 'google' as const,
    status: 'synced' as const,
    error: null,
    updated_at: '2054-06-08T09:15:03.004Z',
  },
];
const MANAGE_URL = 'https://kairos.acme-physio.example/b/bm_Yk3xQ9vN2rT7wL5pZ8cF1hJ4dS6gA0mE';
const PUBLIC_BOOKING = {
  ...BOOKED,
  title: 'Physiotherapy assessment',
  hosts: [{ display_name: 'Dr. Maya Chen' }],
  sequence: 0,
};
const CANCELLED = {
  status: 'cancelled' as const,
  cancellation_reason: 'Feeling better',
  cancelled_at: '2054-06-09T18:02:44.120Z',
  updated_at: '2054-06-09T18:02:44.120Z',
};
const ENTRY = {
  id: 'wl_01jxka1b2c3d4e5f6g7h8j9k0m',
  status: 'waiting' as const,
  preferred_from: '2054-06-11T07:00:00.000Z',
  preferred_to: '2054-06-12T16:00:00.000Z',
  livemode: true,
  created_at: '2054-06-08T12:40:00.000Z',
};
const WAITLIST_ENTRY = {
  ...ENTRY,
  booking_link_id: 'link_01jxk3f5g7h9j1k3m5n7p9q1r3',
  customer_email: 'grace@example.com',
  customer_name: 'Grace Hopper',
  notes: 'Mornings preferred',
  offer: null,
  booking_id: null,
  updated_at: '2054-06-08T12:40:00.000Z',
};

export function bookingRoutes(
  app: TypedApp,
  bookings: BookingService,
  publicBookings: PublicBookings,
  waitlist: WaitlistService,
): void {
  const tags = ['Bookings'];

  app.post(
    '/v1/bookings',
    {
      config: { access: 'private', idempotent: true, problems: BOOKING_PROBLEMS },
      schema: {
        operationId: 'createBooking',
        tags,
        summary:
          'Book a time for the caller or one of its hosts (directly, or through one of its booking links)',
        body: withExample(CreateBody, {
          principal_id: HOST_ID,
          booking_link_id: BOOKING.booking_link_id,
          start_time: '2054-06-10T16:00:00+02:00',
          duration_minutes: 45,
          customer_email: 'ada@example.com',
          customer_name: 'Ada Lovelace',
          customer_timezone: 'Europe/London',
          notes: 'Left knee, after running',
          answers: BOOKING.answers,
          metadata: BOOKING.metadata,
        }),
        response: {
          201: answer(
            'The booking, with the attendee’s manage_url (shown only here); with `recurrence`, the first occurrence and the series',
            BookingCreated,
            { booking: { ...BOOKING, manage_url: MANAGE_URL } },
          ),
        },
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
        operationId: 'listBookings',
        tags,
        summary: 'List the account’s bookings by start time',
        querystring: ListQuery,
        response: {
          200: answer('One page of bookings', BookingList, {
            bookings: [{ ...BOOKING, calendar_sync: SYNCED }],
            pagination: {
              next_cursor: 'MjAyNi0wNi0xMFQxNDowMDowMC4wMDBafGJvb2tpbmdfMDFqeGs5YzJlMWQzZjVnN2g5ajFrM201bjc',
              has_more: true,
            },
          }),
        },
      },
    },
    async (request) => bookings.list(actorOf(request.caller), request.query),
  );

  app.get(
    '/v1/bookings/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getBooking',
        tags,
        summary: 'Read a booking',
        params: BookingParams,
        response: {
          200: answer('The booking and where it stands in each host’s calendar', BookingAnswer, {
            booking: { ...BOOKING, calendar_sync: SYNCED },
          }),
        },
      },
    },
    async (request) => bookings.get(actorOf(request.caller), request.params.id),
  );

  app.patch(
    '/v1/bookings/:id',
    {
      config: {
        access: 'private',
        problems: {
          '409': RESCHEDULE_409,
          '422': { description: '`unprocessable`: code `start_in_past`', codes: ['start_in_past'] },
          '503': BUSY_503,
        },
      },
      schema: {
        operationId: 'updateBooking',
        tags,
        summary: 'Change notes or metadata; a new start_time / end_time reschedules (booking.updated)',
        params: BookingParams,
        body: withExample(UpdateBody, {
          start_time: '2054-06-11T09:00:00Z',
          end_time: '2054-06-11T09:45:00Z',
        }),
        response: {
          200: answer('The booking as changed', BookingAnswer, {
            booking: {
              ...BOOKING,
              start_time: '2054-06-11T09:00:00.000Z',
              end_time: '2054-06-11T09:45:00.000Z',
              updated_at: '2054-06-09T08:30:00.000Z',
            },
          }),
        },
      },
    },
    async (request) => bookings.update(actorOf(request.caller), request.params.id, request.body),
  );

  app.delete(
    '/v1/bookings/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'cancelBooking',
        tags,
        summary: 'Cancel a booking (booking.cancelled once; a repeat answers the cancelled booking)',
        params: BookingParams,
        querystring: CancelQuery,
        response: {
          200: answer('The cancelled booking', BookingAnswer, { booking: { ...BOOKING, ...CANCELLED } }),
        },
      },
    },
    async (request) =>
      bookings.cancel(actorOf(request.caller), request.params.id, request.query.reason, request.query.scope),
  );

  const linkTags = ['Booking links'];
  app.get(
    '/v1/booking-links/:id/waitlist',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'listWaitlistEntries',
        tags: linkTags,
        summary: 'List a booking link’s waitlist, oldest first (the order offers follow)',
        params: LinkParams,
        querystring: EntryListQuery,
        response: {
          200: answer('One page of waitlist entries', EntryList, {
            waitlist_entries: [WAITLIST_ENTRY],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => waitlist.list(actorOf(request.caller), request.params.id, request.query),
  );

  app.delete(
    '/v1/booking-links/:id/waitlist/:entry_id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'removeWaitlistEntry',
        tags: linkTags,
        summary: 'Remove a waitlist entry (a time held for it passes to the next entry)',
        params: EntryParams,
        response: {
          200: answer('The removed entry', EntryAnswer, {
            waitlist_entry: { ...WAITLIST_ENTRY, status: 'removed', updated_at: '2054-06-09T10:00:00.000Z' },
          }),
        },
      },
    },
    async (request) => waitlist.remove(actorOf(request.caller), request.params.id, request.params.entry_id),
  );

  // ---- public surface: anonymous or publishable key (docs/api.md#public-booking-surface) ---------
  const publicTags = ['Public booking surface'];

  app.get(
    '/v1/public/links/:slug',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'getPublicBookingLink',
        tags: publicTags,
        summary: 'Resolve an active booking link (no ids, no e-mail addresses)',
        params: SlugParams,
        response: {
          200: answer('What a booking page shows', PublicLinkAnswer, {
            booking_link: {
              slug: 'physio-assessment',
              title: 'Physiotherapy assessment',
              description: 'A first assessment with one of our physiotherapists.',
              duration_minutes: 45,
              durations: [30, 45, 60],
              hosts: [{ display_name: 'Dr. Maya Chen' }, { display_name: 'Sam Okafor' }],
              questions: [
                { id: 'reason', label: 'What brings you in?', type: 'textarea', required: true },
                {
                  id: 'first_visit',
                  label: 'First visit?',
                  type: 'select',
                  required: false,
                  options: ['Yes', 'No'],
                },
              ],
              price_amount: null,
              price_currency: null,
              livemode: true,
              recurrence: { frequencies: ['weekly'], max_count: 12 },
              seats: null,
            },
          }),
        },
      },
    },
    async (request) => publicBookings.publicLinkView(request.caller, request.params.slug),
  );

  app.get(
    '/v1/public/links/:slug/availability',
    {
      config: { access: 'public', problems: { '503': BUSY_503 } },
      schema: {
        operationId: 'listPublicSlots',
        tags: publicTags,
        summary: 'Bookable slots of a link (round robin: any host free; collective: all free)',
        description: STALE_DESCRIPTION,
        params: SlugParams,
        querystring: PublicAvailabilityQuery,
        response: {
          200: answer('Bookable slots by start', PublicSlots, {
            duration_minutes: 45,
            timezone: 'Europe/London',
            stale: false,
            busy_as_of: null,
            slots: [
              { start: '2054-06-10T07:00:00.000Z', end: '2054-06-10T07:45:00.000Z' },
              { start: '2054-06-10T07:15:00.000Z', end: '2054-06-10T08:00:00.000Z' },
              { start: '2054-06-10T14:00:00.000Z', end: '2054-06-10T14:45:00.000Z' },
            ],
          }),
        },
      },
    },
    async (request, reply) => {
      const json = await publicBookings.publicAvailability(
        request.caller,
        request.params.slug,
        request.query,
      );
      // Pre-rendered JSON text (availability/present.ts), exactly the PublicSlots shape.
      return reply
        .type('application/json; charset=utf-8')
        .send(json as unknown as Static<typeof PublicSlots>);
    },
  );

  app.post(
    '/v1/public/links/:slug/bookings',
    {
      config: { access: 'public', idempotent: true, problems: BOOKING_PROBLEMS },
      schema: {
        operationId: 'createPublicBooking',
        tags: publicTags,
        summary: 'Book a link; the answer carries manage_url, the attendee’s self-service link (once)',
        params: SlugParams,
        body: withExample(PublicCreateBody, {
          start_time: '2054-06-10T15:00:00+01:00',
          duration_minutes: 45,
          customer_email: 'ada@example.com',
          customer_name: 'Ada Lovelace',
          customer_timezone: 'Europe/London',
          answers: { reason: 'Knee pain when running', first_visit: 'Yes' },
        }),
        response: {
          201: answer(
            'The booking, with manage_url (shown only here); with `recurrence`, the first occurrence and the series',
            PublicBookingCreated,
            { booking: { ...PUBLIC_BOOKING, notes: null, manage_url: MANAGE_URL } },
          ),
        },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return publicBookings.createPublic(request.caller, request.params.slug, request.body);
    },
  );

  app.post(
    '/v1/public/links/:slug/waitlist',
    {
      config: { access: 'public', idempotent: true },
      schema: {
        operationId: 'joinWaitlist',
        tags: publicTags,
        summary: 'Join a link’s waitlist for a window of time',
        params: SlugParams,
        body: withExample(JoinBody, {
          customer_email: 'grace@example.com',
          customer_name: 'Grace Hopper',
          preferred_from: '2054-06-11T08:00:00+01:00',
          preferred_to: '2054-06-12T17:00:00+01:00',
          notes: 'Mornings preferred',
        }),
        response: { 201: answer('The new waitlist entry', PublicEntryAnswer, { waitlist_entry: ENTRY }) },
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
          '400':
            '`validation-error`: `errors["answers.<id>"]` for a required question left out, an answer of the wrong type, or an unknown question',
          '409': {
            description:
              '`conflict`: code `offer_expired` or `offer_claimed`; `slot_unavailable` when the time was taken',
            codes: ['offer_expired', 'offer_claimed', 'slot_unavailable'],
          },
          '422': {
            description: '`unprocessable`: the time has started; a priced link without payments',
            codes: ['start_in_past', 'payments_not_configured', 'payments_not_ready'],
          },
          '503': BOOKING_503,
        },
      },
      preValidation: emptyBodyIsObject,
      schema: {
        operationId: 'claimWaitlistOffer',
        tags: publicTags,
        summary: 'Claim a held waitlist offer: it becomes a booking',
        description:
          'The body carries the answers to the link’s questions, checked as a public booking’s are (required ones present, each of its type); a link without questions takes no body.',
        params: TokenParams,
        body: withExample(ClaimBody, { answers: { reason: 'Knee pain when running', first_visit: 'Yes' } }),
        response: {
          201: answer('The booking made from the offer, with its manage_url', PublicBookingAnswer, {
            booking: {
              ...PUBLIC_BOOKING,
              id: 'booking_01jxkb7c8d9e0f1g2h3j4k5m6n',
              start_time: '2054-06-11T08:00:00.000Z',
              end_time: '2054-06-11T08:45:00.000Z',
              customer_email: 'grace@example.com',
              customer_name: 'Grace Hopper',
              customer_timezone: null,
              notes: 'Mornings preferred',
              answers: {},
              created_at: '2054-06-10T07:05:00.000Z',
              updated_at: '2054-06-10T07:05:00.000Z',
              manage_url: 'https://kairos.acme-physio.example/b/bm_Pq7rS2tU9vW4xY6zA1bC3dE5fG8hJ0kL',
            },
          }),
        },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return waitlist.claim(request.params.token, request.body);
    },
  );

  app.get(
    '/v1/public/bookings/:token',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'getPublicBooking',
        tags: publicTags,
        summary: 'The attendee’s booking, by its self-service token',
        params: TokenParams,
        response: { 200: answer('The booking', PublicBookingAnswer, { booking: PUBLIC_BOOKING }) },
      },
    },
    async (request) => publicBookings.publicView(request.params.token),
  );

  app.post(
    '/v1/public/bookings/:token/cancel',
    {
      config: {
        access: 'public',
        problems: {
          '422': { description: '`unprocessable`: code `booking_started`', codes: ['booking_started'] },
        },
      },
      schema: {
        operationId: 'cancelPublicBooking',
        tags: publicTags,
        summary: 'Cancel by self-service token (booking.cancelled once)',
        params: TokenParams,
        body: withExample(CancelBody, { reason: 'Feeling better' }),
        response: {
          200: answer('The cancelled booking', PublicBookingAnswer, {
            booking: { ...PUBLIC_BOOKING, ...CANCELLED, sequence: 1 },
          }),
        },
      },
    },
    async (request) =>
      publicBookings.publicCancel(request.params.token, request.body?.reason, request.body?.scope),
  );

  app.post(
    '/v1/public/bookings/:token/reschedule',
    {
      config: {
        access: 'public',
        problems: {
          '409': RESCHEDULE_409,
          '422': {
            description: '`unprocessable`: `start_in_past` or `booking_started`',
            codes: ['start_in_past', 'booking_started'],
          },
          '503': BUSY_503,
        },
      },
      schema: {
        operationId: 'reschedulePublicBooking',
        tags: publicTags,
        summary: 'Move the booking to a new start, same length (booking.updated)',
        params: TokenParams,
        body: withExample(RescheduleBody, { start_time: '2054-06-11T10:00:00+01:00' }),
        response: {
          200: answer('The booking at its new time', PublicBookingAnswer, {
            booking: {
              ...PUBLIC_BOOKING,
              sequence: 1,
              start_time: '2054-06-11T09:00:00.000Z',
              end_time: '2054-06-11T09:45:00.000Z',
              updated_at: '2054-06-09T08:30:00.000Z',
            },
          }),
        },
      },
    },
    async (request) => publicBookings.publicReschedule(request.params.token, request.body.start_time),
  );
}
