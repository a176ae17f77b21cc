/** TypeBox schemas of the availability endpoints (docs/api.md#availability). */
import { Type } from '@sinclair/typebox';
import { UUID_PATTERN } from '../../platform/ids.js';
import {
  Instant,
  named,
  PrefixedId,
  PrincipalId,
  StringEnum,
  Timestamp,
  TimeZone,
  Uuid,
} from '../../platform/schemas.js';

/** The limits of docs/api.md#availability, shared by the schemas and the service's own checks. */
/** Longest window one query may cover (docs/api.md#availability). */
export const MAX_WINDOW_DAYS = 62;
export const MIN_DURATION_MINUTES = 5;
export const MAX_DURATION_MINUTES = 720;
export const MAX_NEXT_DAYS_AHEAD = 90;
export const MUTUAL_MIN_PRINCIPALS = 2;
export const MUTUAL_MAX_PRINCIPALS = 5;

/** A UUID, unanchored (UUID_PATTERN without ^ and $), for patterns of lists. */
const UUID = UUID_PATTERN.slice(1, -1);

const Duration = Type.Integer({
  minimum: MIN_DURATION_MINUTES,
  maximum: MAX_DURATION_MINUTES,
  default: 30,
  description: 'slot length in minutes',
});
const Zone = Type.String({
  ...TimeZone,
  description: 'IANA time zone for labels and grouping (default: the principal’s); never changes the slots',
});
const SlotInterval = Type.Integer({
  minimum: 5,
  maximum: MAX_DURATION_MINUTES,
  description: 'minutes between slot starts, counted from local midnight; default min(duration, 15)',
});
const From = Type.String({ ...Instant, description: 'window start (ISO 8601 with offset)' });
const To = Type.String({
  ...Instant,
  description: `window end (exclusive); at most ${MAX_WINDOW_DAYS} days after from`,
});
const Target = {
  business_id: Type.Optional({ ...Uuid, description: 'the principal (account or host) to ask about' }),
  principal_id: Type.Optional({ ...PrincipalId, description: 'alias of business_id' }),
};

export const SlotsQuery = Type.Object(
  {
    ...Target,
    duration_minutes: Duration,
    from: From,
    to: To,
    timezone: Type.Optional(Zone),
    slot_interval: Type.Optional(SlotInterval),
    buffer: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1440,
        description: 'minutes kept free around busy time (at least the schedule’s own buffers)',
      }),
    ),
    group_by_day: Type.Boolean({ default: false, description: 'answer `days` instead of `slots`' }),
    consent_id: Type.Optional(PrefixedId('cons', 'the consent to read under (cons_…)')),
  },
  {
    'x-checks': [
      '`business_id` or its alias `principal_id` is required; given both, they are equal',
      '`to` is after `from`, at most 62 days after it',
    ],
    additionalProperties: false,
  },
);

export const NextQuery = Type.Object(
  {
    ...Target,
    duration_minutes: Duration,
    after: Type.Optional(Type.String({ format: 'date-time', description: 'search from here (default now)' })),
    days_ahead: Type.Integer({ minimum: 1, maximum: MAX_NEXT_DAYS_AHEAD, default: 14 }),
    timezone: Type.Optional(Zone),
    slot_interval: Type.Optional(SlotInterval),
    consent_id: Type.Optional(PrefixedId('cons', 'the consent to read under (cons_…)')),
  },
  {
    'x-checks': ['`business_id` or its alias `principal_id` is required; given both, they are equal'],
    additionalProperties: false,
  },
);

export const MutualQuery = Type.Object(
  {
    principal_ids: Type.String({
      minLength: 1,
      maxLength: 200,
      // What the service accepts: 2 to 5 UUIDs split on commas, each trimmed.
      pattern: `^\\s*${UUID}\\s*(,\\s*${UUID}\\s*){1,4}$`,
      description: '2 to 5 principal ids (UUIDs), comma-separated',
    }),
    duration_minutes: Duration,
    from: From,
    to: To,
    timezone: Type.Optional(Zone),
    slot_interval: Type.Optional(SlotInterval),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'most slots to return' }),
  },
  {
    'x-checks': [
      '`principal_ids` names each principal once',
      '`to` is after `from`, at most 62 days after it',
    ],
    additionalProperties: false,
  },
);

export const BlocksQuery = Type.Object(
  {
    from: From,
    to: To,
    details: Type.Boolean({
      default: false,
      description:
        'add the events’ titles to calendar blocks (read from the calendars now): the principal itself, ' +
        'its account, or a consent with availability:read:details; others get 403 details_not_granted',
    }),
  },
  { 'x-checks': ['`to` is after `from`, at most 62 days after it'], additionalProperties: false },
);

export const PrincipalParams = Type.Object({ id: Uuid }, { additionalProperties: false });

const Slot = named('Slot', Type.Object({ start: Timestamp, end: Timestamp }));
const Stale = Type.Boolean({
  description: 'true when a calendar could not be refreshed and its last known busy time was used',
});
/** What every availability answer says about calendars that failed (docs/api.md#availability). */
export const STALE_DESCRIPTION =
  'Busy time comes from the connected calendars’ cache. When a calendar cannot be read (an error, 429, ' +
  'a time-out, revoked access), its last known busy time is used for at most 24 hours: the answer says ' +
  '`stale: true` and `busy_as_of`, when the oldest busy time used was read; a fresh answer has ' +
  '`stale: false` and `busy_as_of: null`. With nothing usable cached the answer is 503, never free time.';
/** The 503 of a calendar that failed with nothing usable cached. */
export const CALENDAR_503 =
  '`service-unavailable`: a calendar could not be read and no busy time of it from the last 24 hours is ' +
  'known — code `calendar_unavailable` (or `calendar_disconnected` when its access was revoked), with ' +
  '`principal_id`, `connection_id` and `provider` naming it, and `Retry-After`';

/** How old a stale answer's busy time is (docs/api.md#availability). */
export const BusyAsOf = Type.Union([Timestamp, Type.Null()], {
  description:
    'with stale=true: when the oldest busy time used was read from its calendar (at most 24 hours ago); ' +
    'null when every calendar was read within the cache’s freshness bound (stale=false)',
});
const Head = {
  duration_minutes: Type.Integer(),
  timezone: Type.String(),
  stale: Stale,
  busy_as_of: BusyAsOf,
};

const ConsentUsed = Type.Optional(
  Type.Object(
    { id: Type.String({ description: 'cons_…' }) },
    { description: 'the consent that allowed this read (reads of principals who granted the caller one)' },
  ),
);

export const SlotsAnswer = Type.Object({
  principal_id: Uuid,
  ...Head,
  slots: Type.Optional(Type.Array(Slot, { description: 'bookable slots by start (without group_by_day)' })),
  days: Type.Optional(
    Type.Array(Type.Object({ date: Type.String({ format: 'date' }), slots: Type.Array(Slot) }), {
      description: 'slots grouped by local date in `timezone` (with group_by_day=true)',
    }),
  ),
  consent: ConsentUsed,
});

export const NextAnswer = Type.Object({
  principal_id: Uuid,
  ...Head,
  slot: Type.Union([Slot, Type.Null()]),
  consent: ConsentUsed,
});

export const MutualAnswer = Type.Object({
  principal_ids: Type.Array(Uuid),
  ...Head,
  slots: Type.Array(Slot),
  consents: Type.Array(
    Type.Object({
      principal_id: Uuid,
      consent_id: Type.Union([Type.String(), Type.Null()], {
        description: 'the consent behind `consent` (a cons_… id of the network module, or another rule’s)',
      }),
      basis: StringEnum(['self', 'managed_host', 'network', 'consent']),
    }),
  ),
});

export const BlocksAnswer = Type.Object({
  principal_id: Uuid,
  from: Timestamp,
  to: Timestamp,
  timezone: Type.String({ description: 'the principal’s schedule time zone' }),
  stale: Stale,
  busy_as_of: BusyAsOf,
  blocks: Type.Array(
    Type.Object({
      start: Timestamp,
      end: Timestamp,
      status: StringEnum(['busy', 'free', 'outside_hours']),
      source: StringEnum(['calendar', 'booking', 'out_of_office', 'schedule']),
      titles: Type.Optional(
        Type.Array(Type.String(), {
          description:
            'calendar blocks, for readers allowed to see details (the principal itself, its account, or ' +
            'a consent with availability:read:details): the titles of the events behind the block',
        }),
      ),
    }),
    {
      description:
        'normalized: sorted, non-overlapping, covering the window; busy time wins over outside_hours, ' +
        'and a booking over the calendar event it may also appear as',
    },
  ),
});
