import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; under NodeNext its default export arrives as the module namespace.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ??
  (addFormatsModule as unknown as AddFormats);

const common: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };

function make(coerce: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ ...common, coerceTypes: coerce });
  addFormats(ajv);
  return ajv;
}

/**
 * Bodies are validated strictly (a number is not a string, unknown fields are errors); query strings,
 * path parameters and headers arrive as text and are coerced to the schema's types.
 */
export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = make(false);
  const coercing = make('array');
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(schema as object);
  };
}

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * Adds `errors[path] = …` for every string (value or object key) under `value` that contains U+0000.
 * PostgreSQL cannot store that character in text or jsonb, so it is refused here, for every route and
 * every part of a request, before any schema or handler sees it.
 */
function collectNul(value: unknown, path: string, errors: Record<string, string>): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) errors[path] = NUL_MESSAGE;
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) collectNul(v, path ? `${path}.${i}` : String(i), errors);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    const field = path ? `${path}.${k}` : k;
    if (k.includes('\u0000')) errors[field.replaceAll('\u0000', '\\u0000')] = NUL_MESSAGE;
    else collectNul(v, field, errors);
  }
}

/**
 * The fields of a request that hold U+0000: path parameters and query values (only when the target
 * has `%00`, the one way to spell it in a URL) and the parsed body. Empty when there are none.
 */
export function nulFields(
  url: string,
  params: unknown,
  query: unknown,
  body: unknown,
): Record<string, string> {
  const errors: Record<string, string> = {};
  if (url.includes('%00')) {
    collectNul(params, '', errors);
    collectNul(query, '', errors);
  }
  if (typeof body === 'string') collectNul(body, 'body', errors);
  else collectNul(body, '', errors);
  return errors;
}
