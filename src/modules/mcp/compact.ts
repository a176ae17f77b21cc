/**
 * The compact schemas `tools/list` shows (docs/mcp.md#toolsets), derived from each tool's full
 * schemas (derive.ts, from the routes' own TypeBox schemas): what an agent needs to call a tool and
 * read its answer, in a fraction of the bytes.
 *
 * - Input: the fields, their types, enums, numeric bounds, list sizes, defaults and descriptions;
 *   no string lengths, and an instant is `format: date-time` instead of its long pattern (the API
 *   checks the whole rule either way, and refuses a time without an offset); a field with a default
 *   is not required (the route fills it in); no `additionalProperties: false` (an unknown field is
 *   refused by name all the same).
 * - Output: a loosening of the full answer schema — every answer valid against the full schema is
 *   valid against the compact one, so a client that checks `structuredContent` against the listed
 *   `outputSchema` accepts every answer (the server itself checks the full one before it leaves).
 *   The top-level fields (required as in the full schema), their fields, and the fields of list
 *   items, with their types and enums; deeper objects are `type: object`; no descriptions, formats,
 *   patterns, bounds or `additionalProperties`.
 * Either accepts `$ref`-free schemas in the forms TypeBox and the OpenAPI document use (`anyOf` of
 * single-value enums or `enum`, `anyOf` with `null`).
 */
import { INSTANT_NOTE, type JsonSchema } from './derive.js';

/**
 * How deep a compact output keeps fields: 1, the top-level fields (the listing of every tool); 2,
 * theirs too (a listing narrowed to toolsets).
 */
export type OutputDepth = 1 | 2;
/** Input keywords an agent needs no help with (the route checks them). */
const INPUT_DROPPED = new Set(['minLength', 'maxLength', 'maxProperties', 'examples', 'example', '$id']);

const isObj = (v: unknown): v is JsonSchema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The values of an `anyOf` whose branches each admit one value (`{enum: [x]}` or `{const: x}`). */
function enumOf(alts: JsonSchema[]): unknown[] | undefined {
  const values: unknown[] = [];
  for (const a of alts) {
    if (Array.isArray(a.enum) && a.enum.length === 1) values.push(a.enum[0]);
    else if ('const' in a) values.push(a.const);
    else return undefined;
  }
  return values;
}

function isInstantPattern(s: JsonSchema): boolean {
  return typeof s.pattern === 'string' && s.pattern.includes('[Zz]|[+-]');
}

/** An input schema with what an agent needs (above). */
export function compactInput(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (INPUT_DROPPED.has(k)) continue;
    // A closed object: the tool refuses an unknown field by name (service.ts), the route a nested one.
    if (k === 'additionalProperties' && v === false) continue;
    if (k === 'properties' && isObj(v)) {
      out.properties = Object.fromEntries(
        Object.entries(v).map(([n, s]) => [n, compactInput(s as JsonSchema)]),
      );
    } else if ((k === 'items' || k === 'additionalProperties') && isObj(v)) {
      out[k] = compactInput(v);
    } else if (k === 'propertyNames' && isObj(v)) {
      // Keys' lengths, like strings' (the route checks them): nothing else left, nothing listed.
      const names = compactInput(v);
      if (Object.keys(names).length > 0) out[k] = names;
    } else if ((k === 'anyOf' || k === 'oneOf') && Array.isArray(v)) {
      const values = enumOf(v as JsonSchema[]);
      if (values?.every((x) => typeof x === 'string')) {
        out.type = 'string';
        out.enum = values;
      } else out[k] = (v as JsonSchema[]).map((s) => compactInput(s));
    } else out[k] = v;
  }
  // A field with a default is filled by the route when absent: not one the agent must send.
  if (Array.isArray(out.required) && isObj(out.properties)) {
    const props = out.properties;
    const required = (out.required as string[]).filter((n) => !(isObj(props[n]) && 'default' in props[n]));
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  if (isInstantPattern(out) || out.format === 'date-time') {
    delete out.pattern;
    out.format = 'date-time';
    // The rule is the server's instructions' (every time sent carries its offset) and the API's.
    const text = typeof out.description === 'string' ? out.description.replace(INSTANT_NOTE, '').trim() : '';
    if (text === '' || text.startsWith('ISO 8601 instant')) delete out.description;
    else out.description = text;
  }
  // A long pattern a description already explains (a UUID of any case, an id's prefix).
  if (typeof out.pattern === 'string' && out.pattern.length > 24 && typeof out.description === 'string')
    delete out.pattern;
  return out;
}

type Types = Set<string> | undefined; // undefined: any value

function typesOf(s: JsonSchema): Types {
  if (typeof s.type === 'string') return new Set([s.type]);
  if (Array.isArray(s.type)) return new Set(s.type as string[]);
  const alts = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(alts)) {
    const all = new Set<string>();
    for (const a of alts) {
      const t = typesOf(a);
      if (!t) return undefined;
      for (const x of t) all.add(x);
    }
    return all;
  }
  const values = Array.isArray(s.enum) ? s.enum : 'const' in s ? [s.const] : undefined;
  if (values)
    return new Set(values.map((v) => (v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v)));
  return undefined;
}

/** A loosening of `s` (every value it admits, the result admits), `depth` levels from the root. */
function summarize(s: JsonSchema, depth: number, max: OutputDepth): JsonSchema {
  const alts = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(alts)) {
    const nulls = alts.filter((a) => a.type === 'null');
    const rest = alts.filter((a) => a.type !== 'null');
    let r: JsonSchema;
    if (rest.length === 1) r = summarize(rest[0] as JsonSchema, depth, max);
    else if (rest.length > 1 && rest.every((a) => a.type === 'object')) r = mergeObjects(rest, depth, max);
    else {
      const values = enumOf(rest);
      if (values) {
        const t = [...(typesOf({ enum: values }) ?? [])];
        r = { type: t.length === 1 ? t[0] : t, ...(depth <= 1 ? { enum: values } : {}) };
      } else {
        const types = typesOf({ anyOf: rest });
        r = types ? { type: [...types] } : {};
      }
    }
    if (nulls.length === 0) return r;
    if (r.type === undefined) return {};
    const types = new Set(Array.isArray(r.type) ? (r.type as string[]) : [r.type as string]);
    types.add('null');
    const out: JsonSchema = { ...r, type: [...types] };
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    return out;
  }
  const types = typesOf(s);
  if (!types) return {};
  const type = types.size === 1 ? [...types][0] : [...types];
  if (type === 'object') {
    if (depth >= max || !isObj(s.properties)) return { type };
    return {
      type,
      properties: Object.fromEntries(
        Object.entries(s.properties).map(([n, p]) => [n, summarize(p as JsonSchema, depth + 1, max)]),
      ),
    };
  }
  if (type === 'array') {
    // A list's items count as the level of the list itself.
    if (!isObj(s.items)) return { type };
    return { type, items: summarize(s.items, depth, max) };
  }
  const out: JsonSchema = { type };
  // Enums of the top-level fields only: deeper ones cost more than they tell.
  if (depth <= 1 && Array.isArray(s.enum)) out.enum = s.enum;
  else if (depth <= 1 && 'const' in s) out.enum = [s.const];
  return out;
}

/** Several object alternatives as one: every field of any, a field in several as the loosest. */
function mergeObjects(alts: JsonSchema[], depth: number, max: OutputDepth): JsonSchema {
  if (depth >= max) return { type: 'object' };
  const props: Record<string, JsonSchema> = {};
  for (const a of alts) {
    for (const [n, p] of Object.entries((a.properties ?? {}) as Record<string, JsonSchema>)) {
      const s = summarize(p, depth + 1, max);
      props[n] = n in props && JSON.stringify(props[n]) !== JSON.stringify(s) ? {} : s;
    }
  }
  return { type: 'object', properties: props };
}

/**
 * An output schema as `tools/list` shows it (above): a root object whose `required` are the fields
 * every answer has (the root's own and those all of its alternatives require).
 */
export function compactOutput(schema: JsonSchema, max: OutputDepth): JsonSchema {
  const alts = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  const objects = Array.isArray(alts) ? alts.filter((a) => a.type === 'object') : [];
  const merged =
    objects.length > 0 && objects.length === (alts?.length ?? 0)
      ? mergeObjects(objects, 0, max)
      : { type: 'object', properties: {} };
  const own = summarize({ ...schema, anyOf: undefined, oneOf: undefined, type: 'object' }, 0, max);
  const properties = {
    ...((merged.properties ?? {}) as Record<string, JsonSchema>),
    ...((own.properties ?? {}) as Record<string, JsonSchema>),
  };
  const required = new Set((schema.required ?? []) as string[]);
  if (objects.length > 0 && objects.length === (alts?.length ?? 0)) {
    const each = objects.map((o) => new Set((o.required ?? []) as string[]));
    for (const n of each[0] ?? []) if (each.every((r) => r.has(n))) required.add(n);
  }
  return {
    type: 'object',
    properties,
    ...(required.size > 0 ? { required: [...required].filter((n) => n in properties) } : {}),
  };
}
