/**
 * Times in MCP answers (docs/mcp.md#answers): shown in a zone with their offset, equal to luxon's own
 * conversion across two years of DST changes in zones with half- and quarter-hour offsets; inputs
 * without an offset are named.
 */
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { inZone, isoInZone, offsetless } from './answers.js';

const ZONES = [
  'UTC',
  'Europe/Paris',
  'America/New_York',
  'America/St_Johns',
  'Asia/Kathmandu',
  'Asia/Kolkata',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
];

describe('times in answers', () => {
  it('shows every instant with the offset the zone has then, as luxon does, across DST changes', () => {
    const mismatches: string[] = [];
    for (const zone of ZONES) {
      for (let ms = Date.UTC(2025, 0, 1); ms < Date.UTC(2027, 0, 1); ms += 71 * 60_000 + 13_000) {
        const ours = isoInZone(ms, zone);
        const theirs = DateTime.fromMillis(ms, { zone }).toISO() as string;
        const expected = theirs.endsWith('+00:00') ? `${theirs.slice(0, -6)}Z` : theirs;
        if (ours !== expected || Date.parse(ours) !== ms) mismatches.push(`${zone} ${ours} ≠ ${expected}`);
      }
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it('rewrites instants anywhere in an answer and leaves dates, ids and other text alone', () => {
    const out = inZone(
      { slots: [{ start: '2026-06-10T14:00:00.000Z' }], date: '2026-06-10', id: 'booking_1', n: 3 },
      'Europe/Paris',
    );
    expect(out).toEqual({
      slots: [{ start: '2026-06-10T16:00:00.000+02:00' }],
      date: '2026-06-10',
      id: 'booking_1',
      n: 3,
    });
  });

  it('names each input time without an offset and accepts those with one', () => {
    const errors = offsetless(
      { from: '2026-06-10T09:00:00', to: '2026-06-10T17:00:00+02:00', after: '2026-06-10 09:00', x: 'y' },
      ['from', 'to', 'after'],
    );
    expect(Object.keys(errors)).toEqual(['from', 'after']);
    expect(errors.from).toMatch(/no UTC offset/);
  });
});
