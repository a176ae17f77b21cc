import { Type } from '@sinclair/typebox';
import fastJsonStringify, { type AnySchema } from 'fast-json-stringify';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../openapi.js';
import { inlineComponents } from './openapi.js';
import { Uuid } from './schemas.js';
import { buildSerializer, forSerializer } from './serializer.js';
import { addKairosFormats } from './validation.js';

type Json = Record<string, unknown>;
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));

/** Every `anyOf` in a schema, as the list of its branches' types. */
function unions(schema: unknown, found: unknown[][] = []): unknown[][] {
  if (Array.isArray(schema)) for (const s of schema) unions(s, found);
  else if (typeof schema === 'object' && schema !== null) {
    const s = schema as Json;
    if (Array.isArray(s.anyOf)) found.push(s.anyOf.map((b: Json) => b.type));
    for (const v of Object.values(s)) unions(v, found);
  }
  return found;
}

describe('response schemas as the serializer reads them', () => {
  it('write unions of strings, nullable fields and distinct scalars by type, keeping the outer keywords', () => {
    const schema = clone(
      Type.Object({
        status: Type.Union([Type.Literal('confirmed'), Type.Literal('cancelled')], { description: 'state' }),
        plan: Type.Union([Type.Literal('free'), Type.Literal('paid'), Type.Null()]),
        key_id: Type.Union([Uuid, Type.Null()], { description: 'the key' }),
        user: Type.Union([Type.Object({ id: Uuid }), Type.Null()]),
        answer: Type.Union([Type.String(), Type.Boolean()]),
      }),
    );
    const before = clone(schema);
    const props = (forSerializer(schema) as { properties: Record<string, Json> }).properties;
    expect(props.status).toEqual({ description: 'state', type: 'string', enum: ['confirmed', 'cancelled'] });
    expect(props.plan).toEqual({ type: ['string', 'null'], enum: ['free', 'paid', null] });
    // The branch's own keywords over the outer ones, as the serializer merges them.
    expect(props.key_id).toMatchObject({ type: ['string', 'null'], format: 'uuid', description: 'UUID' });
    expect(props.user).toMatchObject({ type: ['object', 'null'], properties: { id: { format: 'uuid' } } });
    expect(props.answer).toEqual({ type: ['string', 'boolean'] });
    expect(unions(forSerializer(schema))).toEqual([]);
    // The same values accepted: a union of objects around these still decides with Ajv.
    const ajv = addKairosFormats(new Ajv({ strict: false }));
    const [original, rewritten] = [ajv.compile(schema), ajv.compile(forSerializer(schema) as Json)];
    const base = { status: 'confirmed', plan: null, key_id: null, user: null, answer: true };
    for (const change of [
      {},
      { plan: 'paid' },
      { plan: 'gold' },
      { status: null },
      { key_id: '0190a4ba-5d6e-7f80-9a1b-2c3d4e5f6a7b' },
      { key_id: 'nope' },
      { user: { id: '0190a4ba-5d6e-7f80-9a1b-2c3d4e5f6a7b' } },
      { answer: 'yes' },
      { answer: 3 },
    ]) {
      const value = { ...base, ...change };
      expect(rewritten(value), JSON.stringify(change)).toBe(original(value));
    }
    expect(schema).toEqual(before); // the route's own schema, the one the document shows, is not changed
  });

  it('keep unions the serializer cannot write by type, and leave data keywords as they are', () => {
    const objects = clone(
      Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Integer() })]),
    );
    expect(forSerializer(objects)).toEqual(objects);
    const numbers = clone(Type.Union([Type.Integer(), Type.Number()]));
    expect(forSerializer(numbers)).toEqual(numbers);
    const reference = { anyOf: [{ $ref: 'Problem#' }, { type: 'null' }] };
    expect(forSerializer(reference)).toEqual(reference);
    // Written by type, these would take values the union refuses (a union around them decides by them).
    const patterned = clone(Type.Union([Type.Literal('google'), Type.String({ pattern: '^conn_' })]));
    expect(forSerializer(patterned)).toEqual(patterned);
    const formatted = clone(Type.Union([Uuid, Type.Boolean()]));
    expect(forSerializer(formatted)).toEqual(formatted);
    const data = { type: 'object', default: { anyOf: [{ type: 'string' }, { type: 'null' }] } };
    expect(forSerializer(data)).toEqual(data);
  });

  it('write every documented answer to the same bytes as before, with no union left but of objects', async () => {
    const doc = (await openApiDocument()) as {
      paths: Record<
        string,
        Record<string, { responses?: Record<string, { content?: Record<string, Json> }> }>
      >;
      components: { schemas: Record<string, unknown> };
    };
    const compile = buildSerializer({}, {});
    let written = 0;
    const left: unknown[][] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          const content = response.content?.['application/json'];
          if (!status.startsWith('2') || !content?.schema) continue;
          const schema = inlineComponents(content.schema, doc.components.schemas);
          left.push(...unions(forSerializer(schema)));
          const examples = Object.values((content.examples ?? {}) as Record<string, { value: unknown }>);
          for (const example of [content.example, ...examples.map((e) => e.value)]) {
            if (example === undefined) continue;
            const route = `${method.toUpperCase()} ${path} ${status}`;
            const before = fastJsonStringify(clone(schema) as AnySchema)(example);
            let after: string;
            try {
              after = compile({ schema: clone(schema) })(example);
            } catch (err) {
              throw new Error(
                `${route}: ${String(err)} ${JSON.stringify(forSerializer(schema)).slice(0, 400)}`,
              );
            }
            expect(after, route).toBe(before);
            written++;
          }
        }
      }
    }
    expect(written).toBeGreaterThan(60);
    expect(left.every((types) => types.every((t) => t === 'object'))).toBe(true);
  });
});
