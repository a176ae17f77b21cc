/** TypeBox schemas of the out-of-office routes (docs/api.md#out-of-office): validation, OpenAPI and types. */
import { Type } from '@sinclair/typebox';
import { Instant, named, Pagination, PrefixedId, Timestamp, Uuid } from '../../platform/schemas.js';

/** The limits of docs/api.md#out-of-office, shared by schemas and the service's own checks. */
export const OOO_LIMITS = { maxDays: 366, maxNote: 500 } as const;

export const OutOfOfficeId = PrefixedId('ooo', 'an out-of-office range id (`ooo_…`)');

export const PrincipalParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const RangeParams = Type.Object({ id: Uuid, ooo_id: OutOfOfficeId }, { additionalProperties: false });

export const CreateBody = Type.Object(
  {
    start: { ...Instant, description: 'when the time away begins (an instant with an offset)' },
    end: { ...Instant, description: 'when it ends: after `start`, at most 366 days later' },
    note: Type.Optional(
      Type.Union([Type.String({ maxLength: OOO_LIMITS.maxNote }), Type.Null()], {
        description: 'a note for the account (never shown to bookers), at most 500 characters',
      }),
    ),
  },
  { 'x-checks': ['`end` is after `start`, at most 366 days later'], additionalProperties: false },
);

export const ListQuery = Type.Object(
  {
    from: Type.Optional({ ...Instant, description: 'ranges ending after this instant' }),
    to: Type.Optional({ ...Instant, description: 'ranges starting before this instant' }),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { 'x-checks': ['`to` is after `from`'], additionalProperties: false },
);

export const OutOfOffice = named(
  'OutOfOffice',
  Type.Object({
    id: OutOfOfficeId,
    principal_id: Uuid,
    start: Timestamp,
    end: Timestamp,
    note: Type.Union([Type.String(), Type.Null()]),
    livemode: Type.Boolean(),
    created_at: Timestamp,
  }),
);

/** A live booking of the principal inside a new range: it stays booked (never cancelled by it). */
export const OutOfOfficeConflict = named(
  'OutOfOfficeConflict',
  Type.Object({
    booking_id: Type.String({ description: 'a booking (`booking_…`) overlapping the range' }),
    start_time: Timestamp,
    end_time: Timestamp,
  }),
);

export const CreatedAnswer = Type.Object({
  out_of_office: OutOfOffice,
  conflicts: Type.Array(OutOfOfficeConflict, {
    description: 'the principal’s live bookings inside the range, by start: they are not cancelled',
  }),
});

export const OutOfOfficeList = Type.Object({
  out_of_office: Type.Array(OutOfOffice),
  pagination: Pagination,
});
