/**
 * Tool schemas derived from the routes' own schemas, as the app's OpenAPI document carries them
 * (docs/mcp.md#schemas): a tool's input is the operation's path and query parameters and its JSON
 * body's properties, one flat object; its output is the operation's success answer plus the
 * `timezone` every time in it is shown in. Nothing is restated: a field the route gains, the tool
 * gains.
 */
import { ISO_INSTANT_PATTERN, TIME_ZONE_FORMAT } from '../../platform/validation.js';
import type { RestTool } from './tools.js';

export type JsonSchema = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}
interface Operation {
  operationId?: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

/** One REST operation a tool dispatches to, with the parts of its request the tool's input fills. */
export interface DerivedOperation {
  method: string;
  /** The route template, `/v1/bookings/{id}`. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  /** The JSON body's properties (none for a body-less operation). */
  bodyParams: string[];
  hasBody: boolean;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  /** Input fields that are instants (they must carry an offset). */
  instantFields: string[];
  /** The answer is not an object: the tool's result carries it as `result`. */
  wrapped: boolean;
  /**
   * The query string as the route states it (its parameters' own schemas, required ones, nothing
   * else), for a tool answered through its module's API instead of the route (service.ts).
   */
  querySchema: JsonSchema;
}

const TIME_NOTE = 'ISO 8601 instant with the UTC offset of `timezone` (the IANA zone the answer is shown in)';

/** Resolves `#/components/schemas/X` references inline (the document has few; tools want one schema). */
function inline(schema: unknown, components: Record<string, JsonSchema>, depth = 0): unknown {
  if (depth > 40 || schema === null || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map((s) => inline(s, components, depth + 1));
  const obj = schema as JsonSchema;
  const ref = obj.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
    const target = components[ref.slice('#/components/schemas/'.length)];
    return inline(target ?? {}, components, depth + 1);
  }
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'example' || k === 'examples' || k.startsWith('x-')) continue;
    // Kairos's own format is unknown to agents' validators (they warn); the description says it.
    if (k === 'format' && v === TIME_ZONE_FORMAT) continue;
    out[k] = inline(v, components, depth + 1);
  }
  return out;
}

/** Output times are shown with the offset of the answer's zone: their descriptions say so. */
function relabelTimes(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map(relabelTimes);
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(schema as JsonSchema)) out[k] = relabelTimes(v);
  if (out.format === 'date-time') out.description = TIME_NOTE;
  return out;
}

function isInstant(schema: JsonSchema | undefined): boolean {
  if (!schema) return false;
  if (schema.format === 'date-time' || schema.pattern === ISO_INSTANT_PATTERN) return true;
  if (typeof schema.pattern === 'string' && schema.pattern.includes('[+-]\\d{2}:\\d{2}')) return true;
  const alts = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  return Array.isArray(alts) && alts.some((a) => isInstant(a));
}

export const INSTANT_NOTE =
  ' Must carry a UTC offset (`2026-06-10T14:00:00+02:00` or `…Z`): a time without one is refused, never guessed.';

function successSchema(op: Operation): JsonSchema | undefined {
  for (const status of ['200', '201']) {
    const s = op.responses?.[status]?.content?.['application/json']?.schema;
    if (s) return s;
  }
  return undefined;
}

/** Builds the input and output schema of one tool from the operation it mirrors. */
export function deriveOperation(doc: OpenApiDocument, tool: RestTool): DerivedOperation {
  const components = doc.components?.schemas ?? {};
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (op.operationId !== tool.operationId) continue;
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      const pathParams: string[] = [];
      const queryParams: string[] = [];
      const queryProps: Record<string, JsonSchema> = {};
      const queryRequired: string[] = [];
      const instantFields: string[] = [];
      const fixed = tool.fixed ?? {};
      const add = (name: string, schema: JsonSchema, isRequired: boolean, description?: string) => {
        if (name in fixed || tool.omit?.includes(name)) return;
        const s = inline(schema, components) as JsonSchema;
        const hint = tool.hints?.[name] ?? description ?? (s.description as string | undefined);
        const instant = isInstant(s);
        if (instant) instantFields.push(name);
        properties[name] = {
          ...s,
          ...(hint || instant ? { description: `${hint ?? ''}${instant ? INSTANT_NOTE : ''}`.trim() } : {}),
        };
        if (isRequired) required.push(name);
      };
      for (const p of op.parameters ?? []) {
        if (p.in === 'path') pathParams.push(p.name);
        else if (p.in === 'query') {
          queryParams.push(p.name);
          queryProps[p.name] = inline(p.schema ?? { type: 'string' }, components) as JsonSchema;
          if (p.required === true) queryRequired.push(p.name);
        } else continue;
        add(p.name, p.schema ?? { type: 'string' }, p.in === 'path' || p.required === true, p.description);
      }
      const body = op.requestBody?.content?.['application/json']?.schema;
      const bodyParams: string[] = [];
      if (body) {
        const b = inline(body, components) as JsonSchema;
        const props = (b.properties ?? {}) as Record<string, JsonSchema>;
        const req = new Set((b.required ?? []) as string[]);
        for (const [name, s] of Object.entries(props)) {
          if (tool.omit?.includes(name)) continue;
          bodyParams.push(name);
          add(name, s, req.has(name));
        }
      }
      if (!('timezone' in properties)) {
        properties.timezone = {
          type: 'string',
          minLength: 1,
          maxLength: 64,
          description: 'IANA zone of the answer',
        };
      }
      if (tool.creates) {
        properties.idempotency_key = {
          type: 'string',
          minLength: 1,
          maxLength: 256,
          pattern: '^[A-Za-z0-9_\\-:.]+$',
          description: 'reuse on a retry: done once (24 h)',
        };
      }
      const out = inline(successSchema(op) ?? { type: 'object' }, components) as JsonSchema;
      // An answer that is one of several objects stays one object (`type: object` over its `anyOf`);
      // anything else is carried as `result`.
      const alts = (out.anyOf ?? out.oneOf) as JsonSchema[] | undefined;
      const objects = Array.isArray(alts) && alts.every((a) => a.type === 'object');
      const wrapped = out.type !== 'object' && !objects;
      const outObj: JsonSchema = wrapped
        ? { type: 'object', properties: { result: out }, required: ['result'] }
        : { ...out, type: 'object' };
      const outProps = { ...((outObj.properties ?? {}) as Record<string, JsonSchema>) };
      outProps.timezone = {
        type: 'string',
        description: 'the IANA time zone every time in this answer is shown in (each carries its offset)',
      };
      const outputSchema = relabelTimes({
        ...outObj,
        properties: outProps,
        required: [...new Set([...((outObj.required ?? []) as string[]), 'timezone'])],
      }) as JsonSchema;
      return {
        method: method.toUpperCase(),
        path,
        pathParams,
        queryParams,
        bodyParams,
        hasBody: body !== undefined,
        inputSchema: {
          type: 'object',
          properties,
          ...(required.length > 0 ? { required } : {}),
          additionalProperties: false,
        },
        outputSchema,
        instantFields,
        wrapped,
        querySchema: {
          type: 'object',
          properties: queryProps,
          ...(queryRequired.length > 0 ? { required: queryRequired } : {}),
          additionalProperties: false,
        },
      };
    }
  }
  throw new Error(`MCP tool ${tool.name}: no operation ${tool.operationId} in the OpenAPI document`);
}
