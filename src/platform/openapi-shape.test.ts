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
});
