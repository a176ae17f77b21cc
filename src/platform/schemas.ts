import { type SchemaOptions, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import { EMAIL_ADDRESS_PATTERN, ISO_INSTANT_PATTERN, TIME_ZONE_FORMAT } from './validation.js';

/** Shared schema pieces. */

/**
 * The keyword that names a schema: the OpenAPI document shows it once, as `#/components/schemas/<name>`,
 * and refers to it wherever it appears (platform/openapi.ts `liftComponents`). Validation and
 * serialization read the schema inline as before: an `x-` keyword is an annotation to them.
 */
export const COMPONENT = 'x-component';

/** `schema` named `name` in the document (docs/design.md#openapi): one component, one generated class. */
export function named<T extends TSchema>(name: string, schema: T): T {
  return { ...schema, [COMPONENT]: name };
}

/**
 * A closed set of strings as JSON Schema writes one (`{type: 'string', enum: [...]}`), which client
 * generators make one enum of, typed as the union of its values. Named (`options.name`), it is one
 * component wherever it is used.
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions & { name?: string } = {},
): TUnsafe<T[number]> {
  const { name, ...rest } = options;
  const schema = Type.Unsafe<T[number]>({ ...rest, type: 'string', enum: [...values] });
  return name === undefined ? schema : named(name, schema);
}
export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });

/** An IANA time zone name the time-zone database knows (docs/api.md#conventions). */
export const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  format: TIME_ZONE_FORMAT,
  description: 'IANA time zone, e.g. Europe/Paris',
});

/** Text with something in it: at least one character that is not white space. */
export const NON_BLANK_PATTERN = '\\S';

/** A DNS hostname (letters, digits and hyphens in dot-separated labels), any case: `example.com`. */
export const HOSTNAME_PATTERN =
  '^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$';
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp' });
/** The pattern of a prefixed id of one kind (platform/ids.ts `prefixedId`): `cons_` + 26 base32 characters. */
export function prefixedIdPattern(prefix: string): string {
  return `^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`;
}
/**
 * A prefixed id of one kind as a request names it (a path or query parameter, a body field): the shape of
 * its kind, so a malformed id is 400 `validation-error` like any other malformed parameter, and a
 * well-formed unknown one is 404.
 */
export function PrefixedId(prefix: string, description = `${prefix}_…`) {
  return Type.String({ pattern: prefixedIdPattern(prefix), description });
}
/** A principal id (UUID) as a request names it: `principal_id` in a query string or a body, one shape everywhere. */
export const PrincipalId = Type.String({ format: 'uuid', description: 'a principal id (UUID)' });
/** The `principal_id` a request acts for: a host of the caller's account (docs/api.md#hosts). */
export const ActingFor = Type.String({
  ...PrincipalId,
  description: 'act for this host of the account (default: the caller)',
});
/**
 * An instant as requests give one (`from`, `to`, `start_time`, …): any ISO 8601 instant with an offset,
 * seconds optional (platform/validation.ts `isIsoInstant`). One shape in every query and body.
 */
export const Instant = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: ISO_INSTANT_PATTERN,
  description: 'ISO 8601 instant with an offset, e.g. 2054-06-10T14:00:00Z',
});
/**
 * An e-mail address as the server accepts it (platform/validation.ts `isEmailAddress`: something@domain.tld,
 * no spaces), for answers. Not `format: email`: that rule (RFC 5321) is stricter than the one addresses
 * are stored under, and the serializer checks the branches of a nullable union, so a stored address
 * outside it would become a 500.
 */
export const EmailAddress = Type.String({
  pattern: EMAIL_ADDRESS_PATTERN,
  description: 'e-mail address (something@domain.tld)',
});
/** An absolute URL (answers). */
export const AbsoluteUrl = Type.String({ format: 'uri' });
export const Pagination = named(
  'Pagination',
  Type.Object({
    next_cursor: Type.Union([Type.String(), Type.Null()]),
    has_more: Type.Boolean(),
  }),
);
export const ListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);
export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const Problem = Type.Object(
  {
    type: Type.String({ format: 'uri' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    request_id: Type.String({ pattern: '^req_' }),
    errors: Type.Optional(Type.Record(Type.String(), Type.String())),
    retry_after: Type.Optional(Timestamp),
    code: Type.Optional(Type.String()),
    reason: Type.Optional(
      Type.String({
        description: 'why a slot is refused (409 `slot_unavailable`): e.g. `taken`, `calendar_busy`',
      }),
    ),
    key_type: Type.Optional(Type.String({ description: 'a publishable key outside its reach (403)' })),
    available_scopes: Type.Optional(
      Type.Array(Type.String(), { description: 'what a publishable key may do (403, with `key_type`)' }),
    ),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem detail' },
);

export function wrap<K extends string, T extends TSchema>(name: K, schema: T) {
  return Type.Object({ [name]: schema } as { [P in K]: T });
}
