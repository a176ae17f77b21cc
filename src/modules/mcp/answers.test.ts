/**
 * Times in MCP answers (docs/mcp.md#answers): shown in a zone with their offset, equal to luxon's own
 * conversion across two years of DST changes in zones with half- and quarter-hour offsets; inputs
 * without an offset are named.
 */
import { DateTime, IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { isoInZone } from '../../lib/time.js';
import { inZone, offsetless } from './answers.js';

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
        // Whole seconds here: luxon's form without its `.000` (answers.ts writes milliseconds only
        // when there are any).
        const theirs = DateTime.fromMillis(ms, { zone }).toISO({ suppressMilliseconds: true }) as string;
        const expected = theirs.endsWith('+00:00') ? `${theirs.slice(0, -6)}Z` : theirs;
        if (ours !== expected || Date.parse(ours) !== ms) mismatches.push(`${zone} ${ours} ≠ ${expected}`);
      }
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it('rewrites instants anywhere in an answer and leaves dates, ids and other text alone', () => {
    const out = inZone(
      {
        slots: [{ start: '2026-06-10T14:00:00.000Z', end: '2026-06-10T14:30:00.250Z' }],
        date: '2026-06-10',
        id: 'booking_1',
        n: 3,
      },
      'Europe/Paris',
    );
    expect(out).toEqual({
      slots: [{ start: '2026-06-10T16:00:00+02:00', end: '2026-06-10T16:30:00.250+02:00' }],
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

/** The way times were formatted before (a Date per instant, the offset per quarter hour): the reference. */
function perInstant(ms: number, zone: string): string {
  const quarter = 15 * 60_000;
  const off = IANAZone.create(zone).offset(Math.floor(ms / quarter) * quarter);
  // Milliseconds only when there are any (lib/time.ts isoInZone).
  const local = new Date(ms + off * 60_000)
    .toISOString()
    .slice(0, -1)
    .replace(/\.000$/, '');
  if (off === 0) return `${local}Z`;
  const abs = Math.abs(off);
  return `${local}${off < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

describe('times formatted per offset period', () => {
  const cases: [string, number][] = [
    ['Europe/Berlin', Date.UTC(2026, 9, 25, 1, 0)], // 03:00 CEST → 02:00 CET
    ['America/New_York', Date.UTC(2026, 10, 1, 6, 0)], // 02:00 EDT → 01:00 EST
    ['Europe/Berlin', Date.UTC(2026, 2, 29, 1, 0)], // 02:00 CET → 03:00 CEST
    ['America/New_York', Date.UTC(2026, 2, 8, 7, 0)], // 02:00 EST → 03:00 EDT
    ['Australia/Lord_Howe', Date.UTC(2026, 3, 4, 15, 0)], // a half-hour change
  ];

  it('writes the same strings as the per-instant way, minute by minute across DST changes', () => {
    const mismatches: string[] = [];
    for (const [zone, change] of cases) {
      for (let ms = change - 36 * 3_600_000; ms <= change + 36 * 3_600_000; ms += 60_000 + 7) {
        for (const t of [ms, Math.floor(ms / 60_000) * 60_000]) {
          const ours = isoInZone(t, zone);
          if (ours !== perInstant(t, zone)) mismatches.push(`${zone} ${t}: ${ours} ≠ ${perInstant(t, zone)}`);
        }
      }
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it('rewrites the API’s UTC instants in an answer as the per-instant way does, across a change', () => {
    for (const [zone, change] of cases.slice(0, 2)) {
      const slots = [];
      for (let ms = change - 6 * 3_600_000; ms < change + 6 * 3_600_000; ms += 30 * 60_000) {
        slots.push({ start: new Date(ms).toISOString(), end: new Date(ms + 1_800_000).toISOString() });
      }
      const out = inZone({ slots, busy_as_of: null }, zone) as { slots: { start: string; end: string }[] };
      expect(out.slots).toEqual(
        slots.map((s) => ({
          start: perInstant(Date.parse(s.start), zone),
          end: perInstant(Date.parse(s.end), zone),
        })),
      );
      expect(new Set(out.slots.map((s) => s.start.slice(-6))).size).toBe(2);
    }
  });

  it('reads every instant shape the slow way would, and leaves the rest alone', () => {
    const values = [
      '2026-02-30T10:00:00.000Z',
      '2026-13-01T10:00:00.000Z',
      '0050-01-01T10:00:00.000Z',
      '1969-12-31T23:30:00.000Z',
      '2026-06-10T14:00:00Z',
      '2026-06-10T14:00:00.000+02:00',
      '2026-06-10T24:00:00.000Z',
      'a026-06-10T14:00:00.000Z',
    ];
    for (const v of values) {
      const ms = Date.parse(v);
      const expected = Number.isNaN(ms) ? v : perInstant(ms, 'Europe/Berlin');
      expect(inZone(v, 'Europe/Berlin'), v).toBe(expected);
    }
  });
});
