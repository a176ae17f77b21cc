import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { IANAZone } from 'luxon';
import { ValidationFailed } from './errors.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives as the module namespace.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ??
  (addFormatsModule as unknown as AddFormats);

const common: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };

/**
 * The string format of an IANA time zone name (docs/api.md#conventions): one the time-zone database knows,
 * e.g. `Europe/Paris` or `UTC`. JSON Schema has no such format; the document names it so that clients
 * know the rule, and requests are checked against it before any handler runs.
 */
export const TIME_ZONE_FORMAT = 'iana-time-zone';

/** Whether `zone` names a time zone of the IANA database (as Luxon, and so the slot engine, reads it). */
export function isTimeZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

/** The standard formats (ajv-formats) and Kairos's own (`iana-time-zone`), on any Ajv instance. */
export function addKairosFormats<A extends Pick<Ajv, 'addFormat'>>(ajv: A): A {
  addFormats(ajv as unknown as Ajv);
  ajv.addFormat(TIME_ZONE_FORMAT, { type: 'string', validate: isTimeZone });
  return ajv;
}

function make(coerce: Options['coerceTypes']): Ajv {
  return addKairosFormats(new Ajv({ ...common, coerceTypes: coerce }));
}

/**
 * Bodies are validated strictly (a number is not a string, unknown fields are errors); query strings,
 * path parameters and headers arrive as text and are coerced to the schema's types. `shared` answers
 * the app's shared schemas (`app.addSchema`, by `$id`) that route schemas may `$ref`.
 */
export function validatorCompiler(
  shared: () => Record<string, unknown> = () => ({}),
): FastifySchemaCompiler<unknown> {
  const strict = make(false);
  const coercing = make('array');
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    for (const [id, s] of Object.entries(shared())) {
      if (!ajv.getSchema(id)) ajv.addSchema(s as object, id);
    }
    return ajv.compile(schema as object);
  };
}

/**
 * The instant shape bodies accept, as a JSON Schema `pattern` (no flags: T and Z in either case), so
 * that schemas can say exactly what `isIsoInstant` checks.
 */
export const ISO_INSTANT_PATTERN =
  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])[Tt]([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)$';
const ISO_INSTANT = new RegExp(ISO_INSTANT_PATTERN);

/**
 * The one instant shape bodies accept: ISO 8601 with a time and an offset (or Z), on a day the month has
 * (JavaScript would read 2054-02-30 as 2 March without a word).
 */
export function isIsoInstant(value: string): boolean {
  if (!ISO_INSTANT.test(value)) return false;
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(5, 7));
  const day = Number(value.slice(8, 10));
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * The one e-mail shape, as a JSON Schema `pattern` (platform/schemas.ts `EmailAddress` uses it), so that
 * schemas say exactly what `isEmailAddress` checks.
 */
export const EMAIL_ADDRESS_PATTERN = '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$';
const EMAIL = new RegExp(EMAIL_ADDRESS_PATTERN);

/** The one e-mail shape accounts, users, hosts and invitations accept: something@domain.tld, no spaces. */
export function isEmailAddress(value: string): boolean {
  return EMAIL.test(value);
}

/**
 * The strict variant of the one e-mail shape, for addresses typed by anonymous bookers (a booking's or
 * a waitlist entry's customer, a link question of type `email`): also none of `<>()[]\,;:"`, so that
 * an address written into mails and calendar invitations cannot carry a display name or a second
 * address.
 */
const STRICT_EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/;

export function isStrictEmailAddress(value: string): boolean {
  return STRICT_EMAIL.test(value);
}

/**
 * Field problems found by checks beyond the schemas, collected per field (the first one of a field
 * wins) and thrown together as one 400 `validation_failed` (docs/api.md#errors).
 */
export class Problems {
  readonly errors: Record<string, string> = {};

  add(field: string, message: string): void {
    if (!(field in this.errors)) this.errors[field] = message;
  }

  get any(): boolean {
    for (const _ in this.errors) return true;
    return false;
  }

  throwIfAny(): void {
    if (this.any) throw new ValidationFailed(this.errors);
  }
}

/**
 * An ISO 8601 instant with an offset (or Z) given in a body or query, in ms; records a problem under
 * `field` otherwise (undefined when not given).
 */
export function instant(value: string | undefined, field: string, p: Problems): number | undefined {
  if (value === undefined) return undefined;
  const ms = isIsoInstant(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    p.add(field, 'must be an ISO 8601 timestamp with an offset, e.g. 2054-06-10T14:00:00Z');
    return undefined;
  }
  return ms;
}

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/** How deep a JSON body may nest: far more than any body of this API needs, far less than a stack. */
export const MAX_BODY_DEPTH = 32;

/**
 * Adds `errors[path] = …` for every string (value or object key) under `value` that contains U+0000,
 * and `errors.body` when it nests deeper than MAX_BODY_DEPTH. PostgreSQL cannot store U+0000 in text
 * or jsonb, and a body nested thousands deep breaks recursive code (JSON.stringify, hashing), so both
 * are refused here, for every route and every part of a request, before any schema or handler sees
 * them. Walks with its own stack.
 */
function collectNul(root: unknown, rootPath: string, errors: Record<string, string>): void {
  const stack: [unknown, string, number][] = [[root, rootPath, 0]];
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop() as [unknown, string, number];
    if (typeof value === 'string') {
      if (value.includes('\u0000')) errors[path] = NUL_MESSAGE;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_BODY_DEPTH) {
      errors[rootPath || 'body'] = `must not nest deeper than ${MAX_BODY_DEPTH} levels`;
      return;
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        stack.push([value[i], path ? `${path}.${i}` : String(i), depth + 1]);
      }
      continue;
    }
    for (const [k, v] of Object.entries(value)) {
      const field = path ? `${path}.${k}` : k;
      if (k.includes('\u0000')) errors[field.replaceAll('\u0000', '\\u0000')] = NUL_MESSAGE;
      else stack.push([v, field, depth + 1]);
    }
  }
}

/**
 * The fields of a request that hold U+0000 — path parameters and query values (only when the target
 * has `%00`, the one way to spell it in a URL) and the parsed body — and a body nested too deep; null
 * when there are none (the common case costs one string search and no allocation).
 */
export function refusedFields(
  url: string,
  params: unknown,
  query: unknown,
  body: unknown,
): Record<string, string> | null {
  const inUrl = url.includes('%00');
  if (!inUrl && (body === undefined || body === null)) return null;
  const errors: Record<string, string> = {};
  if (inUrl) {
    collectNul(params, '', errors);
    collectNul(query, '', errors);
  }
  if (typeof body === 'string') collectNul(body, 'body', errors);
  else collectNul(body, '', errors);
  for (const _ in errors) return errors;
  return null;
}
