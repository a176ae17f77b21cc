import { describe, expect, it } from 'vitest';
import { occurrences, rrule } from './recurrence.js';

const H = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('occurrences', () => {
  it('keeps a weekly 09:00 Europe/Berlin at 09:00 local across both 2027 DST changes', () => {
    const first = Date.parse('2027-03-16T08:00:00Z'); // Tue 09:00 CET
    const got = occurrences(
      { start: first, end: first + H },
      {
        frequency: 'weekly',
        interval: 1,
        count: 34,
        timezone: 'Europe/Berlin',
      },
    );
    expect(got).toHaveLength(34);
    expect(iso(got[1]!.start)).toBe('2027-03-23T08:00:00.000Z'); // still CET
    expect(iso(got[2]!.start)).toBe('2027-03-30T07:00:00.000Z'); // CEST after 28 March
    expect(iso(got[32]!.start)).toBe('2027-10-26T07:00:00.000Z'); // still CEST
    expect(iso(got[33]!.start)).toBe('2027-11-02T08:00:00.000Z'); // CET after 31 October
    for (const o of got) {
      const local = new Intl.DateTimeFormat('en-GB', {
        timeZone: 'Europe/Berlin',
        hour: '2-digit',
        minute: '2-digit',
        weekday: 'short',
      }).format(o.start);
      expect(local).toBe('Tue 09:00');
      expect(o.end - o.start).toBe(H);
    }
  });

  it('adds local days for a daily rule with an interval', () => {
    const first = Date.parse('2027-01-01T15:30:00Z');
    const got = occurrences(
      { start: first, end: first + H },
      {
        frequency: 'daily',
        interval: 3,
        count: 3,
        timezone: 'UTC',
      },
    );
    expect(got.map((o) => iso(o.start))).toEqual([
      '2027-01-01T15:30:00.000Z',
      '2027-01-04T15:30:00.000Z',
      '2027-01-07T15:30:00.000Z',
    ]);
  });

  it('skips months without the day, as RFC 5545 does', () => {
    const first = Date.parse('2027-01-31T10:00:00Z');
    const got = occurrences(
      { start: first, end: first + H },
      {
        frequency: 'monthly',
        interval: 1,
        count: 4,
        timezone: 'UTC',
      },
    );
    expect(got.map((o) => iso(o.start).slice(0, 10))).toEqual([
      '2027-01-31',
      '2027-03-31',
      '2027-05-31',
      '2027-07-31',
    ]);
  });

  it('moves a time inside a spring-forward gap forward by the gap', () => {
    // 02:30 local in Berlin: 28 March 2027 has no 02:30.
    const first = Date.parse('2027-03-21T01:30:00Z'); // Sun 02:30 CET
    const got = occurrences(
      { start: first, end: first + H },
      {
        frequency: 'weekly',
        interval: 1,
        count: 2,
        timezone: 'Europe/Berlin',
      },
    );
    expect(iso(got[1]!.start)).toBe('2027-03-28T01:30:00.000Z'); // 03:30 CEST
  });
});

describe('rrule', () => {
  it('writes FREQ, INTERVAL and COUNT', () => {
    expect(rrule({ frequency: 'weekly', interval: 2, count: 10 })).toBe('FREQ=WEEKLY;INTERVAL=2;COUNT=10');
  });
});
