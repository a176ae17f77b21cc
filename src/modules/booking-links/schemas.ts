/** TypeBox schemas of the booking-link routes (docs/api.md#booking-links): validation, OpenAPI and types. */
import { type Static, Type } from '@sinclair/typebox';
import { UUID_PATTERN } from '../../platform/ids.js';
import {
  named,
  Pagination,
  PrefixedId,
  prefixedIdPattern,
  StringEnum,
  Timestamp,
  Uuid,
} from '../../platform/schemas.js';

/** The limits of docs/api.md#booking-links, shared by schemas and the service's own checks. */
export const LINK_LIMITS = {
  minDuration: 5,
  maxDuration: 720,
  maxDurations: 10,
  defaultDuration: 30,
  maxHosts: 20,
  maxQuestions: 20,
  maxOptions: 50,
  minPrice: 50,
  maxPrice: 99_999_999,
  maxNoticeMinutes: 525_600,
  maxDaysAhead: 730,
  minRecurrenceCount: 2,
  maxRecurrenceCount: 52,
  minSeats: 2,
  maxSeats: 500,
} as const;

/** The frequencies a link may allow (docs/api.md#recurring-series), in the order the API lists them. */
export const FREQUENCIES = ['daily', 'weekly', 'monthly'] as const;

export const SLUG_PATTERN = '^[a-z0-9-]{3,64}$';

const Slug = Type.String({
  pattern: SLUG_PATTERN,
  description:
    'Unique across the service (live and test links share one namespace): 3–64 of a–z, 0–9 and -; the page is {base_url}/book/{slug}',
  examples: ['intro-call'],
});
const Title = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 5000 });
const Minutes = Type.Integer({ minimum: LINK_LIMITS.minDuration, maximum: LINK_LIMITS.maxDuration });
const AssignmentSchema = named(
  'Assignment',
  StringEnum(['single', 'round_robin', 'collective'], {
    name: 'Assignment',
    description:
      '`single`: one host; `round_robin`: the free host with the fewest bookings; `collective`: every host',
  }),
);
const QuestionTypeSchema = named(
  'QuestionType',
  StringEnum(['text', 'textarea', 'email', 'phone', 'select', 'checkbox']),
);
const Options = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
  minItems: 1,
  maxItems: LINK_LIMITS.maxOptions,
  description: 'The choices; required for `select` questions, refused for the others',
});

const QuestionInput = named(
  'QuestionInput',
  Type.Object(
    {
      id: Type.String({ pattern: '^[a-z0-9_]{1,40}$', description: 'unique within the link' }),
      label: Type.String({ minLength: 1, maxLength: 200 }),
      type: QuestionTypeSchema,
      required: Type.Optional(Type.Boolean({ default: false })),
      options: Type.Optional(Options),
    },
    { additionalProperties: false },
  ),
);

const PriceAmount = Type.Union(
  [Type.Integer({ minimum: LINK_LIMITS.minPrice, maximum: LINK_LIMITS.maxPrice }), Type.Null()],
  { description: 'Minor units (cents); null: free' },
);
const PriceCurrency = Type.Union([Type.String({ pattern: '^[a-z]{3}$' }), Type.Null()], {
  description: 'Lower-case ISO 4217 code; required when price_amount is set, null otherwise',
});
const Notice = Type.Union(
  [Type.Integer({ minimum: 0, maximum: LINK_LIMITS.maxNoticeMinutes }), Type.Null()],
  { description: 'Minutes of notice a booking needs; null: each host’s schedule decides' },
);
const DaysAhead = Type.Union([Type.Integer({ minimum: 1, maximum: LINK_LIMITS.maxDaysAhead }), Type.Null()], {
  description: 'How far ahead bookings may be made; null: each host’s schedule decides',
});

/**
 * The frequency of a series: the one `RecurrenceFrequency` component (the bookings module's
 * `recurrence.frequency` has the same rule, so the document shows one enum).
 */
const Frequency = StringEnum(FREQUENCIES, {
  name: 'RecurrenceFrequency',
  description: 'how often the series repeats',
});

const RecurrenceInput = named(
  'LinkRecurrenceInput',
  Type.Object(
    {
      frequencies: Type.Array(Frequency, {
        minItems: 1,
        maxItems: FREQUENCIES.length,
        description: 'The frequencies a public booker may pick, each at most once',
      }),
      max_count: Type.Integer({
        minimum: LINK_LIMITS.minRecurrenceCount,
        maximum: LINK_LIMITS.maxRecurrenceCount,
        description: 'The most occurrences a public series may have, the first included',
      }),
    },
    { additionalProperties: false },
  ),
);
const RecurrenceField = Type.Union([RecurrenceInput, Type.Null()], {
  description:
    'The recurring series public bookers may ask for (docs: Recurring series); null (the default): single bookings only. Not on a priced or seated link',
});

const SeatsInput = named(
  'LinkSeatsInput',
  Type.Object(
    {
      capacity: Type.Integer({
        minimum: LINK_LIMITS.minSeats,
        maximum: LINK_LIMITS.maxSeats,
        description:
          'Customers who may book the same slot; a change applies to slots not yet booked (a slot already booked keeps the capacity it was opened with)',
      }),
      show_remaining: Type.Optional(
        Type.Boolean({
          default: false,
          description: 'Whether the public slots show `seats_remaining` (default false)',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
const SeatsField = Type.Union([SeatsInput, Type.Null()], {
  description:
    'A seated (group) link: `capacity` customers may book each slot (docs: Seats); null (the default): one customer per slot. Only with one duration, not with `round_robin` or `recurrence`; a PATCH replaces the whole object',
});

const fields = {
  slug: Slug,
  title: Title,
  description: Type.Optional(Description),
  duration_minutes: Type.Optional({
    ...Minutes,
    description: 'The default duration; one of `durations` (default: durations[0], or 30)',
  }),
  durations: Type.Optional(
    Type.Array(Minutes, {
      minItems: 1,
      maxItems: 100,
      description: `The durations a booker may pick (at most ${LINK_LIMITS.maxDurations} distinct; stored sorted; default: [duration_minutes])`,
    }),
  ),
  host_ids: Type.Optional(
    Type.Array(Type.String({ pattern: UUID_PATTERN, description: 'principal UUID (any case)' }), {
      minItems: 1,
      maxItems: LINK_LIMITS.maxHosts,
      description:
        'Distinct principals: the caller itself or live hosts of its account of the caller’s mode (a test key: test hosts; default: the caller itself)',
    }),
  ),
  assignment: Type.Optional(AssignmentSchema),
  questions: Type.Optional(Type.Array(QuestionInput, { maxItems: LINK_LIMITS.maxQuestions })),
  price_amount: Type.Optional(PriceAmount),
  price_currency: Type.Optional(PriceCurrency),
  minimum_notice_minutes: Type.Optional(Notice),
  max_days_ahead: Type.Optional(DaysAhead),
  active: Type.Optional(Type.Boolean({ description: 'false: the public page answers 404' })),
  recurrence: Type.Optional(RecurrenceField),
  seats: Type.Optional(SeatsField),
};

export const CreateLinkBody = Type.Object(fields, {
  'x-checks': [
    '`duration_minutes` is one of `durations`, which hold at most 10 distinct values',
    '`host_ids` names each principal once (in any case), each the caller or a live host of its account; `assignment: single` takes exactly one host',
    '`price_currency` is given with `price_amount` and null without it; a priced link needs payments configured on the server (422)',
    'question ids are distinct; `options` is required for, and only allowed on, `select` questions',
    '`recurrence.frequencies` are distinct; `recurrence` is refused on a priced link',
    '`seats` is refused with `recurrence`, with `assignment: round_robin` and with more than one duration',
  ],
  additionalProperties: false,
});

export const UpdateLinkBody = Type.Object(
  { ...fields, slug: Type.Optional(Slug), title: Type.Optional(Title) },
  {
    'x-checks': [
      'the link as changed follows the rules of creation: `duration_minutes` one of `durations`, `host_ids` distinct hosts of the account, one host for `assignment: single`, `price_currency` with `price_amount`, distinct question ids, `options` only on `select` questions, distinct `recurrence.frequencies`, no `recurrence` on a priced link, no `seats` with `recurrence`, `round_robin` or several durations',
    ],
    additionalProperties: false,
    minProperties: 1,
  },
);

export type CreateLinkInput = Static<typeof CreateLinkBody>;
export type UpdateLinkInput = Static<typeof UpdateLinkBody>;

export const LinkQuestionSchema = named(
  'LinkQuestion',
  Type.Object({
    id: Type.String(),
    label: Type.String(),
    type: QuestionTypeSchema,
    required: Type.Boolean(),
    options: Type.Optional(Type.Array(Type.String())),
  }),
);

export const LinkRecurrenceSchema = named(
  'LinkRecurrence',
  Type.Object(
    {
      frequencies: Type.Array(Frequency),
      max_count: Type.Integer({ description: 'the most occurrences a public series may have' }),
    },
    { description: 'the series a public booker may ask for; null: single bookings only' },
  ),
);

export const LinkSeatsSchema = named(
  'LinkSeats',
  Type.Object(
    {
      capacity: Type.Integer({ description: 'customers per slot (for slots not yet booked)' }),
      show_remaining: Type.Boolean({ description: 'whether the public slots show `seats_remaining`' }),
    },
    { description: 'a seated link’s seats; null: one customer per slot' },
  ),
);

export const BookingLinkSchema = named(
  'BookingLink',
  Type.Object({
    id: Type.String({ pattern: prefixedIdPattern('link'), description: 'booking link id (link_…)' }),
    livemode: Type.Boolean({
      description:
        'false for a link made with a test key (docs: Test mode): its page books in test mode; each mode sees only its own links',
    }),
    slug: Type.String({ pattern: SLUG_PATTERN }),
    title: Type.String(),
    description: Type.String(),
    duration_minutes: Type.Integer({ description: 'the default duration' }),
    durations: Type.Array(Type.Integer(), { description: 'sorted ascending' }),
    host_ids: Type.Array(Uuid),
    assignment: AssignmentSchema,
    questions: Type.Array(LinkQuestionSchema),
    price_amount: Type.Union([Type.Integer(), Type.Null()]),
    price_currency: Type.Union([Type.String(), Type.Null()]),
    minimum_notice_minutes: Type.Union([Type.Integer(), Type.Null()]),
    max_days_ahead: Type.Union([Type.Integer(), Type.Null()]),
    active: Type.Boolean(),
    recurrence: Type.Union([LinkRecurrenceSchema, Type.Null()]),
    seats: Type.Union([LinkSeatsSchema, Type.Null()]),
    url: Type.String({ format: 'uri', description: 'the public booking page: {base_url}/book/{slug}' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    deleted_at: Type.Union([Timestamp, Type.Null()], { description: 'set by DELETE' }),
  }),
);

export const BookingLinkList = Type.Object({
  booking_links: Type.Array(BookingLinkSchema),
  pagination: Pagination,
});

/** A malformed id is 400 like every id parameter's; a well-formed unknown one (or another account's) 404. */
export const LinkParams = Type.Object(
  { id: PrefixedId('link', 'booking link id (link_…)') },
  { additionalProperties: false },
);
