import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE, type Schedule, workingIntervals } from '../../lib/schedule.js';
import { withConsent, workingFor } from './rules.js';
import { DAY, MINUTE } from '../../lib/time.js';

describe('workingFor', () => {
  it('is workingIntervals of the window, whatever wide window it was computed from', () => {
    // One schedule object per zone (as cached profiles share theirs), so the memo is exercised too.
    const schedules: Schedule[] = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'].map(
      (zone) => ({
        ...DEFAULT_SCHEDULE(zone),
        // A whole day (meeting its neighbours' hours) and a day off, around a DST change.
        overrides: [
          { date: '2026-03-09', intervals: [{ start: '00:00', end: '24:00' }] },
          { date: '2026-03-10', unavailable: true as const },
        ],
        weekly: [...DEFAULT_SCHEDULE(zone).weekly, { day: 'sat' as const, start: '20:00', end: '24:00' }],
      }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...schedules),
        fc.integer({ min: 0, max: 90 * 24 * 60 }),
        fc.integer({ min: 1, max: 35 * 24 * 60 }),
        (schedule, offsetMinutes, lengthMinutes) => {
          const start = Date.UTC(2026, 1, 1) + offsetMinutes * MINUTE;
          const window = { start, end: start + lengthMinutes * MINUTE };
          expect(workingFor(schedule, window)).toEqual(workingIntervals(schedule, window));
        },
      ),
      { numRuns: 300 },
    );
    expect(workingFor(schedules[0]!, { start: DAY, end: DAY })).toEqual([]);
  });
});

describe('withConsent', () => {
  const answer = Buffer.from('{"slots":[{"start":"2026-06-10T14:00:00.000Z"}]}');

  it('adds the consent to a remembered answer, the same bytes once made for each consent', () => {
    const a = withConsent(answer, 'cns_a');
    expect(JSON.parse(a.toString())).toEqual({
      slots: [{ start: '2026-06-10T14:00:00.000Z' }],
      consent: { id: 'cns_a' },
    });
    expect(withConsent(answer, 'cns_a')).toBe(a);
    expect(JSON.parse(withConsent(answer, 'cns_b').toString()).consent).toEqual({ id: 'cns_b' });
    expect(withConsent(answer, null)).toBe(answer);
    expect(answer.toString()).toBe('{"slots":[{"start":"2026-06-10T14:00:00.000Z"}]}');
  });

  it('keeps a bounded number of variants per answer, and still answers the ones it let go', () => {
    const first = withConsent(answer, 'cns_0');
    for (let i = 1; i <= 40; i++) withConsent(answer, `cns_${i}`);
    const again = withConsent(answer, 'cns_0');
    expect(again).not.toBe(first);
    expect(again.toString()).toBe(first.toString());
  });
});
