import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoUtc } from '../../lib/time.js';
import { inZone } from '../mcp/answers.js';
import { presentSlots, type SlotsResult, slotsJson } from './present.js';

describe('isoUtc', () => {
  it('equals Date#toISOString', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        expect(isoUtc(ms)).toBe(new Date(ms).toISOString());
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5_000_000 }), (minutes) => {
        const ms = minutes * 60_000;
        expect(isoUtc(ms)).toBe(new Date(ms).toISOString());
      }),
    );
  });
});

describe('slotsJson', () => {
  it('is the JSON text of the plain rendering, with and without group_by_day', () => {
    // Whole-minute starts (remembered texts, asked again below) and arbitrary milliseconds.
    const start = fc.oneof(
      fc.integer({ min: 28_333_334, max: 31_666_666 }).map((m) => m * 60_000),
      fc.integer({ min: 1.7e12, max: 1.9e12 }),
    );
    const slot = fc
      .tuple(start, fc.integer({ min: 1, max: 720 }))
      .map(([start, minutes]) => ({ start, end: start + minutes * 60_000 }));
    fc.assert(
      fc.property(
        fc.array(slot, { maxLength: 40 }),
        fc.constantFrom('UTC', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Europe/Berlin'),
        fc.boolean(),
        fc.option(fc.integer({ min: 1.7e12, max: 1.9e12 })),
        (slots, timezone, groupByDay, asOf) => {
          slots.sort((a, b) => a.start - b.start);
          const r: SlotsResult = {
            principal_id: '01900000-0000-7000-8000-000000000000',
            duration_minutes: 30,
            timezone,
            stale: asOf !== null,
            busy_as_of: asOf === null ? null : new Date(asOf).toISOString(),
            group_by_day: groupByDay,
            slots,
          };
          const text = slotsJson(r);
          expect(JSON.parse(text)).toEqual(presentSlots(r));
          expect(slotsJson(r)).toBe(text);
          // With the zone's offsets: the very text the MCP tools wrote by rewriting the UTC answer.
          const zoned = slotsJson(r, timezone);
          expect(zoned).toBe(JSON.stringify({ ...(inZone(JSON.parse(text), timezone) as object), timezone }));
          expect(slotsJson(r, timezone)).toBe(zoned);
          expect(slotsJson(r)).toBe(text);
        },
      ),
    );
  });
});
