/** TypeBox schemas of hosts and schedules (docs/api.md#hosts-and-schedules). */
import { Type } from '@sinclair/typebox';
import { SCHEDULE_LIMITS, WEEKDAYS } from '../../lib/schedule.js';
import {
  COMPONENT,
  EmailAddress,
  named,
  NON_BLANK_PATTERN,
  Pagination,
  StringEnum,
  Timestamp,
  TimeZone,
  Uuid,
} from '../../platform/schemas.js';

const Zone = TimeZone;

export const Host = named(
  'Host',
  Type.Object({
    id: Type.String({
      format: 'uuid',
      description: 'the host’s id, the same as principal_id (paths take either)',
    }),
    principal_id: Uuid,
    livemode: Type.Boolean({
      description:
        'false for a host made with a test key (docs: Test mode); each mode sees only its own hosts',
    }),
    display_name: Type.String(),
    email: Type.Union([EmailAddress, Type.Null()]),
    timezone: Type.String({ description: 'IANA time zone' }),
    status: Type.Unsafe<'active' | 'deleted'>({
      type: 'string',
      enum: ['active', 'deleted'],
      description: '`active`, or `deleted` after DELETE',
    }),
    calendar_connected: Type.Boolean({ description: 'whether the host has a connected calendar' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    deleted_at: Type.Union([Timestamp, Type.Null()]),
  }),
);

/** A host's e-mail address as bodies give it: the server's one e-mail rule, at most 320 characters. */
/** An address a request gives: `format: email` (RFC 5321) as well as the stored shape. */
const HostEmail = Type.String({ ...EmailAddress, format: 'email', maxLength: 320 });

export const HostList = Type.Object({ hosts: Type.Array(Host), pagination: Pagination });

export const CreateHostBody = Type.Object(
  {
    display_name: Type.String({ minLength: 1, maxLength: 200, pattern: NON_BLANK_PATTERN }),
    email: Type.Optional(Type.Union([HostEmail, Type.Null()])),
    timezone: Type.Optional({
      ...Zone,
      description: 'IANA time zone; defaults to the account’s time zone',
    }),
  },
  { additionalProperties: false },
);

export const UpdateHostBody = Type.Object(
  {
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: NON_BLANK_PATTERN })),
    email: Type.Optional(Type.Union([HostEmail, Type.Null()])),
    timezone: Type.Optional(Zone),
  },
  { additionalProperties: false, minProperties: 1 },
);

const Clock = Type.String({ pattern: '^\\d{2}:\\d{2}$', description: 'local time HH:MM' });
const EndClock = Type.String({ pattern: '^\\d{2}:\\d{2}$', description: 'local time HH:MM, or 24:00' });
const Range = named(
  'TimeRange',
  Type.Object({ start: Clock, end: EndClock }, { additionalProperties: false }),
);

/** A working-hours schedule; the same shape is read (GET) and written (PUT). */
export const Schedule = named(
  'Schedule',
  Type.Object(
    {
      timezone: Zone,
      weekly: Type.Array(
        Type.Object(
          {
            day: StringEnum(WEEKDAYS, { name: 'Weekday' }),
            start: Clock,
            end: EndClock,
          },
          { additionalProperties: false },
        ),
        { maxItems: SCHEDULE_LIMITS.maxWeeklyRules, description: 'several intervals per day allowed' },
      ),
      overrides: Type.Array(
        Type.Union([
          Type.Object(
            {
              date: Type.String({ format: 'date' }),
              intervals: Type.Array(Range, { maxItems: SCHEDULE_LIMITS.maxIntervalsPerOverride }),
            },
            { additionalProperties: false },
          ),
          Type.Object(
            { date: Type.String({ format: 'date' }), unavailable: Type.Literal(true) },
            { additionalProperties: false },
          ),
        ]),
        { maxItems: SCHEDULE_LIMITS.maxOverrides, description: 'other hours (or none) on given local dates' },
      ),
      buffer_before_minutes: Type.Integer({ minimum: 0, maximum: SCHEDULE_LIMITS.maxBufferMinutes }),
      buffer_after_minutes: Type.Integer({ minimum: 0, maximum: SCHEDULE_LIMITS.maxBufferMinutes }),
      minimum_notice_minutes: Type.Integer({ minimum: 0, maximum: SCHEDULE_LIMITS.maxNoticeMinutes }),
      max_days_ahead: Type.Integer({ minimum: 1, maximum: SCHEDULE_LIMITS.maxDaysAhead }),
    },
    { additionalProperties: false },
  ),
);

/** A schedule as a PUT sends it: fields left out take their defaults. Checked by lib/schedule validateSchedule. */
export const ScheduleInput = Type.Partial(Schedule, {
  [COMPONENT]: 'ScheduleInput',
  additionalProperties: false,
  description:
    'The whole schedule. Fields left out take their defaults: the principal’s time zone, Mon–Fri ' +
    '09:00–17:00, no overrides, no buffers or notice, 60 days ahead.',
});

/** PUT body: the schedule, or the schedule inside `{"schedule": …}` (what GET answers, sent back). */
export const PutScheduleBody = Type.Union(
  [
    ScheduleInput,
    Type.Object(
      { schedule: ScheduleInput },
      { additionalProperties: false, description: 'The schedule as GET answers it, sent back' },
    ),
  ],
  {
    'x-checks': [
      'each override has exactly one of `intervals` and `unavailable: true`; override dates are distinct',
      'each range ends after it starts (`end` may be 24:00)',
    ],
  },
);
