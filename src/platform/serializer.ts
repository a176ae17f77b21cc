import fastJsonStringify, { type AnySchema, type Options, type Schema as Shared } from 'fast-json-stringify';

/** Keywords whose values are data, not schemas: copied as they are. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);

type Schema = Record<string, unknown>;

const isSchema = (s: unknown): s is Schema => typeof s === 'object' && s !== null && !Array.isArray(s);

/** Keywords that make a branch more than a type the serializer dispatches on by `typeof`. */
const COMPOUND = ['anyOf', 'oneOf', 'allOf', 'not', 'if', '$ref'] as const;

/** A branch of one type other than null, written without asking Ajv (not a union or a reference). */
const isPlain = (b: Schema) =>
  typeof b.type === 'string' && b.type !== 'null' && COMPOUND.every((k) => b[k] === undefined);

/** Whether a branch has no keywords but these (and annotations). */
const only = (b: Schema, keys: readonly string[]) =>
  Object.keys(b).every((k) => k === 'description' || k === 'title' || keys.includes(k));

/** The values a branch lists (`const` or `enum`), else undefined. */
const listed = (b: Schema): unknown[] | undefined =>
  b.const !== undefined ? [b.const] : Array.isArray(b.enum) ? b.enum : undefined;

/**
 * One `anyOf` as a schema the serializer writes with the same bytes without Ajv, or undefined where it
 * has no such form. fast-json-stringify writes a union by validating the value against each branch
 * with Ajv, one compiled validation per union per object written: a booking holds sixteen. These
 * shapes have a form it dispatches on by `typeof` instead:
 * - one plain branch and `null` (a nullable field): that branch with `type: [its type, 'null']`;
 * - string constants, with or without `null` (a `Type.Union` of `Type.Literal`s): a string with
 *   those values as its `enum`;
 * - scalar types with nothing more to them (`Type.String()` or `Type.Boolean()`), distinct, with or
 *   without `null`: those types.
 * Each form accepts exactly the values the union does, so that a union of objects around it, which
 * the serializer still decides with Ajv, decides as before: `enum` and `const` hold for every type,
 * so listed values take `null` among them where the union does; every other keyword of a plain
 * branch holds for its own type only. The outer schema's own keywords (a description) are kept, as
 * the serializer merges them into the branch it takes.
 */
function plainUnion(outer: Schema, branches: Schema[]): Schema | undefined {
  const { anyOf: _, ...rest } = outer;
  const isNull = (b: Schema) => b.type === 'null' && only(b, ['type']);
  const nullable = branches.some(isNull);
  const others = branches.filter((b) => !isNull(b));
  if (others.length === 0 || !others.every(isPlain)) return undefined;
  const withNull = (type: unknown) => (nullable ? [type, 'null'].flat() : type);
  const among = (values: unknown[] | undefined) =>
    values ? { enum: nullable ? [...values, null] : values } : {};
  const [first] = others;
  if (others.length === 1 && first) {
    const { const: _c, enum: _e, ...branch } = first;
    return { ...rest, ...branch, type: withNull(first.type), ...among(listed(first)) };
  }
  const values = others.map(listed);
  if (others.every((b, i) => b.type === 'string' && values[i] && only(b, ['type', 'const', 'enum']))) {
    return { ...rest, type: withNull('string'), ...among(values.flat()) };
  }
  const types = others.map((b) => b.type as string);
  const scalar = (t: string) => ['string', 'boolean', 'integer', 'number'].includes(t);
  const distinct =
    new Set(types).size === types.length && !(types.includes('integer') && types.includes('number'));
  if (distinct && others.every((b) => scalar(b.type as string) && only(b, ['type']))) {
    return { ...rest, type: withNull(types) };
  }
  return undefined;
}

/**
 * A response schema as the serializer reads it: every union of the shapes `plainUnion` names rewritten,
 * all else as it is. The route's own schema (the one the OpenAPI document shows and responses are
 * tested against) is not changed: this is a copy, made once when the route's serializer is compiled.
 */
export function forSerializer(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forSerializer);
  if (!isSchema(schema)) return schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) out[k] = DATA_KEYWORDS.has(k) ? v : forSerializer(v);
  const branches = out.anyOf;
  if (Array.isArray(branches) && branches.every(isSchema)) return plainUnion(out, branches) ?? out;
  return out;
}

/**
 * Fastify's serializer factory (`schemaController.compilersFactory.buildSerializer`): fast-json-stringify,
 * as Fastify's own compiler uses it, over `forSerializer`'s form of each response schema and of the
 * shared schemas they may `$ref` (docs/performance.md, "Unions written without Ajv").
 */
export function buildSerializer(
  externalSchemas?: unknown,
  serializerOpts: Options = {},
): (route: { schema?: unknown }) => (data: unknown) => string {
  // The shared schemas by id, each in the serializer's form (the ids are names, not keywords).
  const shared: Record<string, Shared> = {};
  if (isSchema(externalSchemas)) {
    for (const [id, s] of Object.entries(externalSchemas)) shared[id] = forSerializer(s) as Shared;
  }
  return ({ schema }) => {
    const id = isSchema(schema) && typeof schema.$id === 'string' ? schema.$id : undefined;
    // A schema is not its own external (as in Fastify's compiler): fast-json-stringify refuses the duplicate id.
    const { [id ?? '']: _self, ...others } = shared;
    return fastJsonStringify(forSerializer(schema) as AnySchema, {
      ...serializerOpts,
      schema: id === undefined ? shared : others,
    }) as (data: unknown) => string;
  };
}
