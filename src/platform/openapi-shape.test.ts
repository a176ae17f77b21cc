/**
 * The OpenAPI document is shaped for client generators (docs/design.md#openapi): every named thing is
 * one component, every closed set an `enum`, and every answer's headers declared.
 * scripts/openapi-shape.ts counts what a generator would make of it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { shapeOf } from '../../scripts/openapi-shape.js';
import type { Json } from '../../test/helpers/app.js';
import { openApiDocument } from '../openapi.js';

let doc: Json;
const ops: { method: string; path: string; op: Json }[] = [];
beforeAll(async () => {
  doc = await openApiDocument();
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(methods)) ops.push({ method: method.toUpperCase(), path, op });
  }
}, 60_000);

describe('the OpenAPI document, as a client generator reads it', () => {
  it('writes every closed set as an enum, never an anyOf of one-value constants', () => {
    expect(shapeOf(doc).constUnionPaths).toEqual([]);
  });

  it('writes each closed set once: no set of enum values repeated inline (a generator makes one enum class each)', () => {
    expect(shapeOf(doc).duplicateEnums).toBe(0);
  });

  it('declares X-Request-Id on every answer, the rate-limit headers on metered ones, Retry-After on 429', () => {
    const missing: string[] = [];
    for (const { method, path, op } of ops) {
      const metered = (op.security ?? doc.security).length > 0 || path.startsWith('/v1/public/');
      for (const [status, res] of Object.entries(op.responses as Record<string, Json>)) {
        const headers = Object.keys(res.headers ?? {});
        const need = ['X-Request-Id'];
        if (metered && status !== '429')
          need.push('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset');
        if (status === '429') need.push('Retry-After');
        for (const h of need) if (!headers.includes(h)) missing.push(`${method} ${path} ${status}: ${h}`);
      }
    }
    expect(missing.slice(0, 20)).toEqual([]);
  });

  it('declares Idempotent-Replayed on the answers of operations that take an Idempotency-Key', () => {
    const missing: string[] = [];
    for (const { method, path, op } of ops) {
      const idempotent = (op.parameters ?? []).some((p: Json) => p.name.toLowerCase() === 'idempotency-key');
      if (!idempotent) continue;
      for (const [status, res] of Object.entries(op.responses as Record<string, Json>)) {
        if (/^2/.test(status) && !res.headers?.['Idempotent-Replayed'])
          missing.push(`${method} ${path} ${status}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('makes each resource one component, referenced wherever it appears', () => {
    const schemas = doc.components.schemas as Record<string, Json>;
    for (const name of ['Booking', 'BookingLink', 'Host', 'Problem', 'Webhook', 'Proposal', 'ApiKey']) {
      expect(Object.keys(schemas)).toContain(name);
    }
    // No inline object has the booking's fields: each is a $ref to the one component.
    const text = JSON.stringify({ paths: doc.paths, webhooks: doc.webhooks });
    const bookingFields = JSON.stringify(schemas.Booking.required);
    expect(text).not.toContain(bookingFields);
  });

  it('declares the members a problem carries beyond RFC 9457', () => {
    const problem = doc.components.schemas.Problem as Json;
    expect(Object.keys(problem.properties)).toEqual(expect.arrayContaining(['code', 'reason', 'errors']));
  });

  it('gives no operation two parameters of one name', () => {
    const twice: string[] = [];
    for (const { method, path, op } of ops) {
      const names = (op.parameters ?? []).map((p: Json) => p.name as string);
      for (const n of new Set(names))
        if (names.filter((m: string) => m === n).length > 1) twice.push(`${method} ${path} ${n}`);
    }
    expect(twice).toEqual([]);
  });

  it('gives every id parameter the shape of its ids (a prefix pattern or a UUID)', () => {
    const loose: string[] = [];
    for (const { method, path, op } of ops) {
      for (const p of (op.parameters ?? []) as Json[]) {
        if (!/(^|_)id$/.test(p.name)) continue;
        const s = resolve(p.schema);
        if (s.pattern === undefined && s.format !== 'uuid') loose.push(`${method} ${path} ${p.in} ${p.name}`);
      }
    }
    expect(loose).toEqual([]);
  });

  it('declares format email or uri on every e-mail address and URL a request carries', () => {
    const loose: string[] = [];
    const visit = (schema: unknown, at: string) => {
      const s = resolve(schema);
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
        const p = resolve(v);
        const branches = [p, ...((p.anyOf ?? []) as Json[]).map(resolve)].filter((b) => b.type === 'string');
        const want = /(^|_)email$/.test(k) ? 'email' : /(^|_)(url|uri)$/.test(k) ? 'uri' : undefined;
        if (want && branches.some((b) => b.format !== want)) loose.push(`${at}.${k}`);
        visit(p, `${at}.${k}`);
        if (p.type === 'array') visit(p.items, `${at}.${k}[]`);
      }
    };
    // Checked by their handlers, which answer otherwise: a bulk invitation skips an invalid address
    // (`invalid_email`), signing in takes the address as stored, the connect page shows its form again.
    const own = [
      'POST /v1/network/invitations/bulk',
      'POST /v1/sessions',
      'POST /v1/public/connect/{token}/caldav',
      'POST /v1/public/connect/{token}/ics',
    ];
    for (const { method, path, op } of ops) {
      if (own.includes(`${method} ${path}`)) continue;
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Json>)) {
        if (type === 'application/json') visit(media.schema, `${method} ${path}`);
      }
    }
    expect(loose).toEqual([]);
  });

  it('gives `from`/`to`, `principal_id` and a question’s `type` one schema wherever they appear', () => {
    const seen = new Map<string, Set<string>>();
    const note = (name: string, schema: unknown) => {
      const set = seen.get(name) ?? new Set<string>();
      set.add(JSON.stringify(stripNotes(resolve(schema))));
      seen.set(name, set);
    };
    for (const { op } of ops) {
      for (const p of (op.parameters ?? []) as Json[]) {
        if (['from', 'to', 'principal_id'].includes(p.name)) note(`${p.in} ${p.name}`, p.schema);
      }
    }
    const shapes = Object.fromEntries([...seen].map(([k, v]) => [k, v.size]));
    expect(shapes).toEqual({ 'query from': 1, 'query to': 1, 'query principal_id': 1 });
    const types = new Set<string>();
    for (const { op } of ops) {
      for (const media of Object.values((op.requestBody?.content ?? {}) as Record<string, Json>)) {
        const q = resolve(resolve(media.schema).properties?.questions);
        if (q.items) types.add(JSON.stringify(stripNotes(resolve(resolve(q.items).properties?.type))));
      }
      for (const res of Object.values((op.responses ?? {}) as Record<string, Json>)) {
        for (const media of Object.values((res.content ?? {}) as Record<string, Json>)) {
          const link = resolve(resolve(media.schema).properties?.booking_link);
          const q = resolve(link.properties?.questions);
          if (q.items) types.add(JSON.stringify(stripNotes(resolve(resolve(q.items).properties?.type))));
        }
      }
    }
    expect(types.size).toBe(1);
  });
});

/** A schema, its `$ref` to a component followed. */
function resolve(schema: unknown): Json {
  const s = (schema ?? {}) as Json;
  if (typeof s.$ref === 'string' && s.$ref.startsWith('#/components/schemas/')) {
    return doc.components.schemas[s.$ref.slice('#/components/schemas/'.length)] as Json;
  }
  return s;
}

/** A schema without the words that only describe it. */
function stripNotes(s: Json): Json {
  const { description: _d, example: _e, examples: _x, default: _f, ...rest } = s;
  return rest;
}
