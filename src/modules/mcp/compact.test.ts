/**
 * The compact schemas of `tools/list` (compact.ts): the listed output schema is a loosening of the
 * full one (whatever the full one accepts, it accepts), in the forms the routes' schemas take, and the
 * compact input keeps what an agent needs.
 */
import type { Ajv2020 as AjvType } from 'ajv/dist/2020.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { compactInput, compactOutput } from './compact.js';
import type { JsonSchema } from './derive.js';

type AjvCtor = new (opts: object) => AjvType;
const Ajv2020: AjvCtor =
  (Ajv2020Module as unknown as { default?: AjvCtor }).default ?? (Ajv2020Module as unknown as AjvCtor);
const ajv = new Ajv2020({ strict: false, allErrors: true });

const ID = { type: 'string', pattern: '^prop_[0-9a-z]{26}$', description: 'prop_…' };
const WHEN = { type: 'string', format: 'date-time', description: 'an instant' };
const proposal: JsonSchema = {
  type: 'object',
  required: ['id', 'status', 'poll_variant', 'slots', 'resolution'],
  additionalProperties: false,
  properties: {
    id: ID,
    // Both forms an enum takes: `enum`, and `anyOf` of single values (TypeBox unions of literals).
    status: { type: 'string', enum: ['proposed', 'accepted'] },
    poll_variant: { anyOf: [{ anyOf: [{ const: 'named' }, { const: 'open' }] }, { type: 'null' }] },
    kind: { anyOf: [{ type: 'string', enum: ['a'] }, { type: 'string', enum: ['b'] }, { type: 'null' }] },
    slots: {
      type: 'array',
      items: { type: 'object', required: ['start'], properties: { start: WHEN, votes: { type: 'integer' } } },
    },
    resolution: {
      anyOf: [
        { type: 'object', properties: { winner: { type: 'object', properties: { id: ID } } } },
        { type: 'null' },
      ],
    },
  },
};
const full: JsonSchema = {
  type: 'object',
  required: ['timezone'],
  properties: { timezone: { type: 'string' } },
  anyOf: [
    { type: 'object', required: ['proposal'], properties: { proposal } },
    { type: 'object', required: ['proposal', 'counter'], properties: { proposal, counter: proposal } },
  ],
};
const answers = [
  {
    timezone: 'Europe/Paris',
    proposal: {
      id: `prop_${'a'.repeat(26)}`,
      status: 'accepted',
      poll_variant: null,
      kind: null,
      slots: [{ start: '2026-06-10T14:00:00+02:00', votes: 2 }],
      resolution: { winner: { id: `prop_${'b'.repeat(26)}` } },
    },
  },
  {
    timezone: 'UTC',
    proposal: {
      id: `prop_${'c'.repeat(26)}`,
      status: 'proposed',
      poll_variant: 'open',
      kind: 'b',
      slots: [],
      resolution: null,
    },
    counter: {
      id: `prop_${'d'.repeat(26)}`,
      status: 'proposed',
      poll_variant: 'named',
      slots: [],
      resolution: null,
    },
  },
];

describe('compactOutput', () => {
  for (const depth of [1, 2] as const) {
    it(`accepts every answer the full schema accepts (depth ${depth}), with its top-level required fields`, () => {
      const full_ = ajv.compile(full);
      const compact = compactOutput(full, depth);
      const check = ajv.compile(compact);
      for (const a of answers) {
        expect(full_(a), JSON.stringify(full_.errors)).toBe(true);
        expect(check(a), JSON.stringify(check.errors)).toBe(true);
      }
      expect(compact.required).toEqual(expect.arrayContaining(['timezone', 'proposal']));
      expect(JSON.stringify(compact)).not.toMatch(/pattern|format|description|additionalProperties/);
      expect(check({ proposal: {} })).toBe(false); // timezone is still required
    });
  }

  it('keeps the top-level fields at depth 1 and their fields at depth 2', () => {
    const one = compactOutput(full, 1).properties as Record<string, JsonSchema>;
    expect(one.proposal).toEqual({ type: 'object' });
    const two = compactOutput(full, 2).properties as Record<string, JsonSchema>;
    const fields = two.proposal?.properties as Record<string, JsonSchema>;
    expect(Object.keys(fields)).toEqual(['id', 'status', 'poll_variant', 'kind', 'slots', 'resolution']);
    expect(fields.poll_variant).toEqual({ type: ['string', 'null'] });
    expect(fields.resolution).toEqual({ type: ['object', 'null'] });
  });

  it('lets null through a nullable enum it keeps', () => {
    const compact = compactOutput(
      {
        type: 'object',
        properties: {
          v: { anyOf: [{ type: 'string', enum: ['a'] }, { type: 'string', enum: ['b'] }, { type: 'null' }] },
        },
      },
      1,
    );
    expect(compact.properties).toEqual({ v: { type: ['string', 'null'], enum: ['a', 'b', null] } });
    const check = ajv.compile(compact);
    expect(check({ v: null }) && check({ v: 'b' })).toBe(true);
    expect(check({ v: 'c' })).toBe(false);
  });
});

describe('compactInput', () => {
  it('keeps types, enums and bounds, drops string lengths, and shows an instant as date-time', () => {
    const compact = compactInput({
      type: 'object',
      required: ['start_time'],
      additionalProperties: false,
      properties: {
        start_time: {
          type: 'string',
          minLength: 1,
          maxLength: 64,
          pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2})?([Zz]|[+-]\\d{2}:\\d{2})$',
          description: 'ISO 8601 instant with an offset',
        },
        assignment: {
          anyOf: [
            { type: 'string', enum: ['single'] },
            { type: 'string', enum: ['collective'] },
          ],
        },
        mode: { type: 'string', enum: ['standard', 'poll'] },
        duration_minutes: { type: 'integer', minimum: 5, maximum: 720, default: 30 },
        principal_ids: { type: 'array', minItems: 2, maxItems: 5, items: { type: 'string' } },
      },
    });
    expect(compact).toEqual({
      type: 'object',
      required: ['start_time'],
      properties: {
        start_time: { type: 'string', format: 'date-time' },
        assignment: { type: 'string', enum: ['single', 'collective'] },
        mode: { type: 'string', enum: ['standard', 'poll'] },
        duration_minutes: { type: 'integer', minimum: 5, maximum: 720, default: 30 },
        principal_ids: { type: 'array', minItems: 2, maxItems: 5, items: { type: 'string' } },
      },
    });
  });
});

describe('compactInput of nested objects', () => {
  it('does not require a field with a default, and drops closed objects and key lengths', () => {
    const compact = compactInput({
      type: 'object',
      required: ['recurrence'],
      additionalProperties: false,
      properties: {
        recurrence: {
          type: 'object',
          required: ['frequency', 'interval'],
          additionalProperties: false,
          properties: {
            frequency: { type: 'string', enum: ['weekly'] },
            interval: { type: 'integer', minimum: 1, maximum: 4, default: 1 },
          },
        },
        metadata: {
          type: 'object',
          propertyNames: { minLength: 1, maxLength: 40 },
          additionalProperties: { type: 'string', maxLength: 500 },
        },
      },
    });
    expect(compact).toEqual({
      type: 'object',
      required: ['recurrence'],
      properties: {
        recurrence: {
          type: 'object',
          required: ['frequency'],
          properties: {
            frequency: { type: 'string', enum: ['weekly'] },
            interval: { type: 'integer', minimum: 1, maximum: 4, default: 1 },
          },
        },
        metadata: { type: 'object', additionalProperties: { type: 'string' } },
      },
    });
  });
});
