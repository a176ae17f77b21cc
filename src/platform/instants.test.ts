import { describe, expect, it } from 'vitest';
import { ISO_INSTANT_PATTERN, isIsoInstant } from './validation.js';

describe('instants a request may carry (docs/api.md#conventions)', () => {
  it('accepts ISO 8601 with a time and an offset, seconds and fractions optional, T and Z in either case', () => {
    for (const v of ['2054-06-10T14:00Z', '2054-06-10t14:00:05z', '2052-02-29T23:59:59.123456789+05:30']) {
      expect(isIsoInstant(v), v).toBe(true);
    }
  });

  it('refuses a day the month does not have, which Date.parse would roll into the next month', () => {
    expect(Number.isNaN(Date.parse('2054-02-30T00:00Z'))).toBe(false);
    for (const v of ['2054-02-29T00:00Z', '2054-02-30T00:00Z', '2054-04-31T10:00Z']) {
      expect(isIsoInstant(v), v).toBe(false);
    }
  });

  it('refuses months, days, hours, minutes, seconds and offsets out of range in the pattern itself', () => {
    const pattern = new RegExp(ISO_INSTANT_PATTERN);
    for (const v of [
      '0000-00-00T00:00Z',
      '2054-13-01T00:00Z',
      '2054-01-32T00:00Z',
      '2054-01-01T24:00Z',
      '2054-01-01T10:60Z',
      '2054-01-01T10:00:60Z',
      '2054-01-01T10:00+24:00',
      '2054-01-01T10:00',
    ]) {
      expect(pattern.test(v), v).toBe(false);
      expect(isIsoInstant(v), v).toBe(false);
    }
  });
});
