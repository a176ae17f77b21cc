/**
 * TypeBox schemas of the booking routes (validation, OpenAPI and types in one). Every static limit of
 * a booking's fields lives here, once; the code checks only what depends on a link or on stored state
 * (input.ts).
 */
import { Type } from '@sinclair/typebox';
import {
  EmailAddress,
  Instant,
  NON_BLANK_PATTERN,
  named,
  Pagination,
  PrincipalId,
  StringEnum,
  Timestamp,
  TimeZone,
} from '../../platform/schemas.js';
import { BusyAsOf } from '../availability/schemas.js';
import { LinkQuestionSchema } from '../booking-links/schemas.js';

const ID_CHARS = '[0-9a-z]{26}';
export const BookingId = Type.String({
  pattern: `^booking_${ID_CHARS}$`,
  description: 'booking id (booking_…)',
});
export const LinkId = Type.String({ pattern: `^link_${ID_CHARS}$`, description: 'booking link id (link_…)' });
export const EntryId = Type.String({ pattern: `^wl_${ID_CHARS}$`, description: 'waitlist entry id (wl_…)' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/**
 * The static limits of docs/api.md#bookings, owned by these schemas. A booking's length in minutes
 * bounds duration_minutes here, and an end_time's distance from start_time in input.ts.
 */
export const BOOKING_LIMITS = {
  minMinutes: 5,
  maxMinutes: 1440,
  metadataKeys: 50,
  metadataKeyLength: 40,
  metadataValueLength: 500,
  name: 200,
  notes: 5000,
  answer: 5000,
  reason: 1000,
  guests: 10,
} as const;
const L = BOOKING_LIMITS;

// A record's key schema becomes a pattern of `patternProperties`, which does not limit the key's
// length: `propertyNames` does.
const Metadata = Type.Record(Type.String(), Type.String({ maxLength: L.metadataValueLength }), {
  description: `Up to ${L.metadataKeys} keys of 1 to ${L.metadataKeyLength} characters; string values of at most ${L.metadataValueLength}`,
  maxProperties: L.metadataKeys,
  propertyNames: { minLength: 1, maxLength: L.metadataKeyLength },
});
const Answers = Type.Record(
  Type.String({ maxLength: 40 }),
  Type.Union([Type.String({ maxLength: L.answer }), Type.Boolean()]),
  {
    description: 'Question id → answer (a string, or a boolean for checkboxes)',
    maxProperties: 20,
  },
);
const Duration = Type.Integer({
  minimum: L.minMinutes,
  maximum: L.maxMinutes,
  description: 'minutes (default 30, or the link’s default)',
});

const Customer = {
  start_time: Instant,
  end_time: Type.Optional(Instant),
  duration_minutes: Type.Optional(Duration),
  customer_email: Type.String({
    format: 'email',
    minLength: 1,
    maxLength: 320,
    description: 'e-mail address',
  }),
  customer_name: Type.String({ minLength: 1, maxLength: L.name, pattern: NON_BLANK_PATTERN }),
  customer_timezone: Type.Optional(TimeZone),
  notes: Type.Optional(Type.String({ maxLength: L.notes })),
  guests: Type.Optional(
    Type.Array(Type.String({ format: 'email', minLength: 1, maxLength: 320 }), {
      maxItems: L.guests,
      description: `up to ${L.guests} more attendees' e-mail addresses: each gets the mails and the invite, none can manage the booking`,
    }),
  ),
};

/** The recurrence limits of docs/api.md#recurring-series. */
export const RECURRENCE_LIMITS = { minCount: 2, maxCount: 52, maxInterval: 4 } as const;
export const Frequency = StringEnum(['daily', 'weekly', 'monthly'], {
  name: 'RecurrenceFrequency',
  description: 'how often the series repeats',
});
export const Recurrence = named(
  'Recurrence',
  Type.Object(
    {
      frequency: Frequency,
      interval: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: RECURRENCE_LIMITS.maxInterval,
          default: 1,
          description: 'every how many days, weeks or months (default 1)',
        }),
      ),
      count: Type.Integer({
        minimum: RECURRENCE_LIMITS.minCount,
        maximum: RECURRENCE_LIMITS.maxCount,
        description: 'how many occurrences, the first included',
      }),
      timezone: Type.Optional({
        ...TimeZone,
        description:
          'the zone whose wall-clock time every occurrence keeps (default the customer’s zone, else the host’s): a weekly 09:00 Europe/Berlin stays 09:00 Berlin across DST',
      }),
    },
    {
      additionalProperties: false,
      description:
        'Book a series: the first occurrence at start_time, the rest repeating from it; all or nothing',
    },
  ),
);

const ReturnUrls = {
  success_url: Type.Optional(
    Type.String({
      format: 'uri',
      maxLength: 2048,
      description: 'a priced link: where Stripe Checkout returns after payment (default: the link’s page)',
    }),
  ),
  cancel_url: Type.Optional(
    Type.String({
      format: 'uri',
      maxLength: 2048,
      description: 'a priced link: where Checkout returns when abandoned',
    }),
  ),
};

export const CreateBody = Type.Object(
  {
    principal_id: Type.Optional({
      ...PrincipalId,
      description: 'host to book (default: the caller’s own principal)',
    }),
    booking_link_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    ...Customer,
    metadata: Type.Optional(Metadata),
    answers: Type.Optional(Answers),
    recurrence: Type.Optional(Recurrence),
    ...ReturnUrls,
  },
  {
    'x-checks': [
      '`end_time` or `duration_minutes`, not both; `end_time` is after `start_time`',
      '`recurrence`: not with a priced or seated booking link',
      '`guests`: distinct addresses (case-insensitive), none of them `customer_email`',
      "`booking_link_id` names a booking link of the caller's account; with it, `duration_minutes` is one the link offers, `principal_id` one of its hosts, and `answers` answer its questions (required ones present, each of its question's type and options); without it, `answers` is refused",
    ],
    additionalProperties: false,
  },
);

export const PublicCreateBody = Type.Object(
  {
    ...Customer,
    answers: Type.Optional(Answers),
    metadata: Type.Optional(Metadata),
    recurrence: Type.Optional(Recurrence),
    ...ReturnUrls,
  },
  {
    'x-checks': [
      "`recurrence` only where the link allows it: one of the link's `recurrence.frequencies`, `count` at most its `max_count`",
      '`end_time` or `duration_minutes`, not both; `end_time` is after `start_time`; `duration_minutes` is one the link offers',
      "`answers` answer the link's questions: required ones present, each of its question's type and options, no others",
      '`guests`: distinct addresses (case-insensitive), none of them `customer_email`',
    ],
    additionalProperties: false,
  },
);

export const ClaimBody = Type.Object({ answers: Type.Optional(Answers) }, { additionalProperties: false });

export const UpdateBody = Type.Object(
  {
    start_time: Type.Optional(Instant),
    end_time: Type.Optional(Instant),
    notes: Type.Optional(Nullable(Type.String({ maxLength: L.notes }))),
    metadata: Type.Optional(Metadata),
  },
  {
    'x-checks': ["`end_time` is after `start_time` (the booking's own when not given)"],
    additionalProperties: false,
    minProperties: 1,
  },
);

export const ListQuery = Type.Object(
  {
    principal_id: Type.Optional({ ...PrincipalId, description: 'a host the bookings occupy' }),
    booking_link_id: Type.Optional({ ...LinkId, description: 'bookings made through this booking link' }),
    status: Type.Optional(
      StringEnum(['pending_payment', 'confirmed', 'cancelled', 'expired'], { name: 'BookingStatus' }),
    ),
    from: Type.Optional({ ...Instant, description: 'bookings ending after this instant' }),
    to: Type.Optional({ ...Instant, description: 'bookings starting before this instant' }),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { 'x-checks': ['`to` is after `from`'], additionalProperties: false },
);

const Scope = StringEnum(['single', 'following', 'series'], {
  name: 'CancelScope',
  description:
    'an occurrence of a series: `single` cancels it alone (the default), `following` it and the later live occurrences, `series` every future live occurrence; a booking outside a series takes only `single`',
});
export const CancelQuery = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: L.reason })), scope: Type.Optional(Scope) },
  { additionalProperties: false },
);
export const CancelBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: L.reason })), scope: Type.Optional(Scope) },
  { additionalProperties: false },
);
export const SeriesId = Type.String({ pattern: `^ser_${ID_CHARS}$`, description: 'series id (ser_…)' });
export const SeriesParams = Type.Object({ id: SeriesId }, { additionalProperties: false });
export const RescheduleBody = Type.Object({ start_time: Instant }, { additionalProperties: false });

export const BookingParams = Type.Object({ id: BookingId }, { additionalProperties: false });
export const SlugParams = Type.Object(
  { slug: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export const TokenParams = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'the token of a self-service or claim link',
    }),
  },
  { additionalProperties: false },
);
export const LinkParams = Type.Object({ id: LinkId }, { additionalProperties: false });
export const EntryParams = Type.Object({ id: LinkId, entry_id: EntryId }, { additionalProperties: false });

const Status = named(
  'BookingStatus',
  StringEnum(['pending_payment', 'confirmed', 'cancelled', 'expired'], { name: 'BookingStatus' }),
);
/** A paid booking cancelled (or paid too late): its full refund through Stripe. */
const RefundStatus = StringEnum(['pending', 'succeeded', 'failed'], {
  name: 'RefundStatus',
  description: 'a paid booking cancelled (or paid too late): its full refund through Stripe',
});

export const NoShowParty = StringEnum(['customer', 'host'], {
  name: 'NoShowParty',
  description: 'who did not come: the customer (and guests) or the host',
});
export const NoShowBody = Type.Object({ party: NoShowParty }, { additionalProperties: false });

const BookingFields = {
  id: BookingId,
  status: Status,
  start_time: Timestamp,
  end_time: Timestamp,
  customer_email: EmailAddress,
  customer_name: Type.String(),
  customer_timezone: Nullable(Type.String()),
  notes: Nullable(Type.String()),
  answers: Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean()])),
  livemode: Type.Boolean({
    description: 'false for a booking made in test mode (docs/api.md#test-mode), true for a live one',
  }),
  payment_amount: Nullable(Type.Integer()),
  payment_currency: Nullable(Type.String()),
  checkout_url: Nullable(Type.String({ format: 'uri' })),
  payment_expires_at: Nullable(Timestamp),
  refund_status: Nullable(RefundStatus),
  cancellation_reason: Nullable(Type.String()),
  cancelled_at: Nullable(Timestamp),
  series_id: Nullable({ ...SeriesId, description: 'the recurring series it is an occurrence of, else null' }),
  guests: Type.Array(EmailAddress, {
    description:
      'more attendees (lowercase addresses): mailed and on the invite; they cannot manage the booking',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
};
export const Booking = named(
  'Booking',
  Type.Object({
    ...BookingFields,
    principal_id: Type.String({ format: 'uuid', description: 'the host the booking is attributed to' }),
    host_ids: Type.Array(Type.String({ format: 'uuid' }), {
      description: 'every principal the booking occupies',
    }),
    booking_link_id: Nullable(LinkId),
    title: Nullable(
      Type.String({
        description:
          'what the booking is called: its link’s title, its proposal’s title, or “Meeting with <hosts>”; null for bookings made before titles were stored',
      }),
    ),
    metadata: Type.Record(Type.String(), Type.String()),
    no_show: Type.Array(NoShowParty, {
      description: 'the parties marked as not having come (POST /v1/bookings/{id}/no-show); a set',
    }),
    seat_session_id: Nullable(
      Type.String({
        pattern: `^sess_${ID_CHARS}$`,
        description:
          'a seat of a seated link: the session (one slot of the link) it holds a seat in, shared by that slot’s other seats; else null',
      }),
    ),
    manage_url: Type.Optional(
      Type.String({
        format: 'uri',
        description: 'the attendee’s self-service link; only in the creation answer',
      }),
    ),
    calendar_sync: Type.Optional(
      Type.Array(
        Type.Object({
          principal_id: Type.String({ format: 'uuid' }),
          provider: Nullable(Type.String({ enum: ['google', 'microsoft', 'caldav', 'ics'] })),
          status: Type.String({ enum: ['pending', 'synced', 'failed', 'removed'] }),
          error: Nullable(Type.String()),
          updated_at: Nullable(Timestamp),
        }),
        {
          description:
            'the booking in each host’s own calendar (GET and list only): pending until written, ' +
            'synced, failed with the last error, removed after cancellation; hosts without a writable ' +
            'calendar are not listed',
        },
      ),
    ),
  }),
);
export const BookingAnswer = named('BookingAnswer', Type.Object({ booking: Booking }));
export const BookingList = Type.Object({ bookings: Type.Array(Booking), pagination: Pagination });

export const PublicBooking = named(
  'PublicBooking',
  Type.Object({
    ...BookingFields,
    title: Type.String(),
    hosts: Type.Array(Type.Object({ display_name: Type.String() })),
    sequence: Type.Integer({
      minimum: 0,
      description: "The SEQUENCE of the booking's latest calendar invite: 0, one more with each change",
    }),
    manage_url: Type.Optional(Type.String({ format: 'uri' })),
  }),
);
export const PublicBookingAnswer = Type.Object({ booking: PublicBooking });

export const PublicLinkAnswer = Type.Object({
  booking_link: Type.Object({
    slug: Type.String(),
    title: Type.String(),
    description: Type.String(),
    duration_minutes: Type.Integer(),
    durations: Type.Array(Type.Integer()),
    hosts: Type.Array(Type.Object({ display_name: Type.String() })),
    questions: Type.Array(LinkQuestionSchema),
    price_amount: Nullable(Type.Integer()),
    price_currency: Nullable(Type.String()),
    livemode: Type.Boolean({
      description:
        'false for a test-mode link: its page shows a "Test mode" banner and its bookings are test bookings',
    }),
    recurrence: Nullable(
      Type.Object(
        { frequencies: Type.Array(Frequency), max_count: Type.Integer() },
        { description: 'the series a booker may ask for; null: single bookings only' },
      ),
    ),
    seats: Nullable(
      Type.Object(
        { capacity: Type.Integer(), show_remaining: Type.Boolean() },
        { description: 'a seated link: customers per slot; null: one customer per slot' },
      ),
    ),
  }),
});

export const PublicAvailabilityQuery = Type.Object(
  {
    from: { ...Instant, description: 'window start' },
    to: { ...Instant, description: 'window end (exclusive)' },
    timezone: Type.Optional({ ...TimeZone, description: 'IANA time zone for labels and grouping by day' }),
    duration_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1440 })),
  },
  { additionalProperties: false },
);
export const PublicSlots = Type.Object({
  duration_minutes: Type.Integer(),
  timezone: Type.String(),
  stale: Type.Boolean(),
  busy_as_of: BusyAsOf,
  slots: Type.Array(
    Type.Object({
      start: Timestamp,
      end: Timestamp,
      seats_remaining: Type.Optional(
        Type.Integer({
          minimum: 1,
          description: 'a seated link that shows what remains: the seats of this slot still free',
        }),
      ),
    }),
  ),
});

const Occurrence = Type.Object(
  { booking_id: BookingId, start_time: Timestamp, end_time: Timestamp, status: Status },
  { additionalProperties: false },
);
const SeriesRecurrence = Type.Object(
  {
    frequency: Frequency,
    interval: Type.Integer(),
    count: Type.Integer(),
    timezone: Type.String({ description: 'the zone whose wall-clock time the occurrences keep' }),
  },
  { additionalProperties: false },
);
export const Series = named(
  'BookingSeries',
  Type.Object({
    id: SeriesId,
    principal_id: Type.String({ format: 'uuid', description: 'the host the series is attributed to' }),
    booking_link_id: Nullable(LinkId),
    livemode: Type.Boolean(),
    recurrence: SeriesRecurrence,
    occurrences: Type.Array(Occurrence, { description: 'every occurrence, by start time' }),
    created_at: Timestamp,
  }),
);
export const SeriesAnswer = named('BookingSeriesAnswer', Type.Object({ series: Series }));
export const BookingCreated = Type.Object({
  booking: Booking,
  series: Type.Optional({
    ...Series,
    description: 'with `recurrence` only: the series and every occurrence',
  }),
});
/** A series as its attendee sees it: no host ids. */
export const PublicSeries = Type.Object({
  id: SeriesId,
  recurrence: SeriesRecurrence,
  occurrences: Type.Array(Occurrence),
});
export const PublicBookingCreated = Type.Object({
  booking: PublicBooking,
  series: Type.Optional({
    ...PublicSeries,
    description: 'with `recurrence` only: the series and every occurrence',
  }),
});

export const JoinBody = Type.Object(
  {
    customer_email: Type.String({ format: 'email', minLength: 1, maxLength: 320 }),
    customer_name: Type.String({ minLength: 1, maxLength: L.name, pattern: NON_BLANK_PATTERN }),
    preferred_from: Instant,
    preferred_to: Instant,
    notes: Type.Optional(Type.String({ maxLength: L.notes })),
  },
  {
    'x-checks': [
      '`preferred_to` is after `preferred_from`, in the future, and at most 90 days after `preferred_from`',
    ],
    additionalProperties: false,
  },
);
const PublicEntryFields = {
  id: EntryId,
  status: StringEnum(['waiting', 'offered', 'booked', 'expired', 'removed'], {
    name: 'WaitlistEntryStatus',
    description:
      'waiting: for freed time inside its window; offered: time is held for it; booked: the offer was claimed; expired: an offer ran out unclaimed, or the window ended while it waited (within a minute); removed: by the owner',
  }),
  preferred_from: Timestamp,
  preferred_to: Timestamp,
  livemode: Type.Boolean({ description: 'false: of test mode (its link’s mode, docs/api.md#test-mode)' }),
  created_at: Timestamp,
};
export const PublicEntryAnswer = Type.Object({ waitlist_entry: Type.Object(PublicEntryFields) });
export const Entry = named(
  'WaitlistEntry',
  Type.Object({
    ...PublicEntryFields,
    booking_link_id: LinkId,
    customer_email: EmailAddress,
    customer_name: Type.String(),
    notes: Nullable(Type.String()),
    offer: Nullable(Type.Object({ start_time: Timestamp, end_time: Timestamp, expires_at: Timestamp })),
    booking_id: Nullable(BookingId),
    updated_at: Timestamp,
  }),
);
export const EntryAnswer = named('WaitlistEntryAnswer', Type.Object({ waitlist_entry: Entry }));
export const EntryList = Type.Object({ waitlist_entries: Type.Array(Entry), pagination: Pagination });
export const EntryListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

/** What the OpenAPI document shows (platform/openapi.ts); the booking events show BOOKING too. */
export const HOST_ID = '0190a4c2-7b1e-7d3a-9f4e-2c8b5d6a1e03';
export const BOOKED = {
  id: 'booking_01jxk9c2e1d3f5g7h9j1k3m5n7',
  status: 'confirmed' as const,
  start_time: '2054-06-10T14:00:00.000Z',
  end_time: '2054-06-10T14:45:00.000Z',
  customer_email: 'ada@example.com',
  customer_name: 'Ada Lovelace',
  customer_timezone: 'Europe/London',
  notes: 'Left knee, after running',
  answers: { reason: 'Knee pain when running', first_visit: 'Yes' },
  livemode: true,
  payment_amount: null,
  payment_currency: null,
  checkout_url: null,
  payment_expires_at: null,
  refund_status: null,
  cancellation_reason: null,
  cancelled_at: null,
  series_id: null,
  guests: [] as string[],
  created_at: '2054-06-08T09:15:02.310Z',
  updated_at: '2054-06-08T09:15:02.310Z',
};
export const BOOKING = {
  ...BOOKED,
  principal_id: HOST_ID,
  host_ids: [HOST_ID],
  booking_link_id: 'link_01jxk3f5g7h9j1k3m5n7p9q1r3',
  title: 'Physiotherapy assessment',
  metadata: { crm_contact_id: 'C-20931' },
  no_show: [] as ('customer' | 'host')[],
  seat_session_id: null,
};
