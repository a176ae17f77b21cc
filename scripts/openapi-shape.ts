// What a client generator (openapi-python-client, openapi-generator) would make of the OpenAPI document:
// each named component schema is one class; each object schema written inline (with properties) is one
// more model class, each inline `enum` one more enum class, and an `anyOf` of one-value constants a
// union no generator makes a closed set of. `tsx scripts/openapi-shape.ts [document.json]` prints the
// counts (the document built without a database when no file is named); the test beside the document
// (src/platform/openapi-shape.test.ts) holds the rules these counts are about.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords whose values are data, not schemas. */
const DATA = new Set(['enum', 'const', 'default', 'example', 'examples', 'required']);
/** Keywords that only annotate: two shapes differing in these alone are the same class. */
const ANNOTATIONS = new Set(['description', 'title', 'example', 'examples', 'default']);

/** A schema with annotations removed, keys sorted: equal for shapes a generator would make alike. */
function canonical(s: unknown): string {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (!isObject(v)) return v;
    const out: Json = {};
    for (const k of Object.keys(v).sort()) if (!ANNOTATIONS.has(k)) out[k] = strip(v[k]);
    return out;
  };
  return JSON.stringify(strip(s));
}

/** Every schema under `value` (itself included), with a path for messages; `$ref`s are not followed. */
function* schemasIn(value: unknown, path: string): Generator<{ schema: Json; path: string }> {
  if (!isObject(value)) return;
  yield { schema: value, path };
  for (const [k, v] of Object.entries(value)) {
    if (DATA.has(k)) continue;
    if (k === 'properties' && isObject(v)) {
      for (const [p, s] of Object.entries(v)) yield* schemasIn(s, `${path}.${p}`);
    } else if (Array.isArray(v)) {
      for (const [i, s] of v.entries()) yield* schemasIn(s, `${path}.${k}[${i}]`);
    } else if (isObject(v)) yield* schemasIn(v, `${path}.${k}`);
  }
}

/** The schemas the document holds outside `components`: parameters, bodies, answers, webhooks. */
function* operationSchemas(doc: Json): Generator<{ schema: Json; path: string }> {
  for (const [where, items] of [
    ['paths', doc.paths],
    ['webhooks', doc.webhooks],
  ] as const) {
    if (!isObject(items)) continue;
    for (const [path, methods] of Object.entries(items)) {
      if (!isObject(methods)) continue;
      for (const [method, op] of Object.entries(methods)) {
        if (!isObject(op)) continue;
        const at = `${where} ${method.toUpperCase()} ${path}`;
        for (const p of (op.parameters as Json[] | undefined) ?? []) {
          yield* schemasIn(p.schema, `${at} ${p.in} ${p.name}`);
        }
        const body = op.requestBody as Json | undefined;
        for (const [type, media] of Object.entries((body?.content as Json | undefined) ?? {})) {
          yield* schemasIn((media as Json).schema, `${at} body ${type}`);
        }
        for (const [status, res] of Object.entries((op.responses as Json | undefined) ?? {})) {
          for (const [type, media] of Object.entries(((res as Json).content as Json | undefined) ?? {})) {
            yield* schemasIn((media as Json).schema, `${at} ${status} ${type}`);
          }
          for (const [name, h] of Object.entries(((res as Json).headers as Json | undefined) ?? {})) {
            yield* schemasIn((h as Json).schema, `${at} ${status} header ${name}`);
          }
        }
      }
    }
  }
}

/** Whether a generator makes a model class of this schema (an object with properties). */
const isModel = (s: Json) =>
  (s.type === 'object' || s.properties !== undefined) &&
  isObject(s.properties) &&
  Object.keys(s.properties).length > 0;
/** Whether a generator makes an enum class of this schema. */
const isEnum = (s: Json) => Array.isArray(s.enum) && s.enum.filter((v) => v !== null).length > 1;
/** An `anyOf`/`oneOf` of one-value constants (`Type.Union` of `Type.Literal`s): a closed set not written as one. */
export const isConstUnion = (s: Json) => {
  const branches = (s.anyOf ?? s.oneOf) as unknown;
  if (!Array.isArray(branches)) return false;
  const single = branches.filter(
    (b) => isObject(b) && (b.const !== undefined || (Array.isArray(b.enum) && b.enum.length === 1)),
  );
  return single.length >= 2;
};

export interface Shape {
  components: number;
  inlineModels: number;
  inlineEnums: number;
  constUnions: number;
  /** Inline models whose shape appears more than once (each occurrence beyond the first). */
  duplicateModels: number;
  /** Inline enums whose set of values appears more than once (each occurrence beyond the first). */
  duplicateEnums: number;
  /** Examples, for messages: where each const union is. */
  constUnionPaths: string[];
}

/** What a generator would make of `doc`. */
export function shapeOf(doc: Json): Shape {
  const components =
    isObject(doc.components) && isObject(doc.components.schemas) ? doc.components.schemas : {};
  const all: { schema: Json; path: string; root: boolean }[] = [];
  for (const [name, c] of Object.entries(components)) {
    for (const s of schemasIn(c, `#/components/schemas/${name}`)) all.push({ ...s, root: s.schema === c });
  }
  for (const s of operationSchemas(doc)) all.push({ ...s, root: false });
  const inline = all.filter((s) => !s.root);
  const models = inline.filter((s) => isModel(s.schema));
  const enums = inline.filter((s) => isEnum(s.schema));
  const repeats = (items: string[]) => items.length - new Set(items).size;
  const unions = all.filter((s) => isConstUnion(s.schema));
  return {
    components: Object.keys(components).length,
    inlineModels: models.length,
    inlineEnums: enums.length,
    constUnions: unions.length,
    duplicateModels: repeats(models.map((m) => canonical(m.schema))),
    duplicateEnums: repeats(enums.map((e) => JSON.stringify([...(e.schema.enum as unknown[])].sort()))),
    constUnionPaths: unions.map((u) => u.path),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2];
  const doc = file
    ? (JSON.parse(readFileSync(file, 'utf8')) as Json)
    : await (await import('../src/openapi.js')).openApiDocument();
  const { constUnionPaths: _, ...counts } = shapeOf(doc);
  console.log(JSON.stringify(counts, null, 2));
}
