import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE, type Schedule, workingIntervals } from '../../lib/schedule.js';
import { workingFor } from './rules.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

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
