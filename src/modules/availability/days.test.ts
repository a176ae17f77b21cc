import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Interval, normalize } from '../../lib/intervals.js';
import {
  DEFAULT_SCHEDULE,
  type Schedule,
  WEEKDAYS,
  type WeeklyRule,
  workingIntervals,
} from '../../lib/schedule.js';
import { computeSlots, slotRange } from '../../lib/slots.js';
import { type DayQuestion, DaySlots } from './days.js';
import { slotsBytes, slotsFrame } from './present.js';
import { DAY, HOUR, MINUTE } from '../../lib/time.js';

const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Lord_Howe'];
/** Days around the 2026 DST changes of those zones, and ordinary ones. */
const DAYS = [
  '2026-03-07',
  '2026-03-08',
  '2026-03-28',
  '2026-03-29',
  '2026-04-05',
  '2026-06-10',
  '2026-10-25',
  '2026-11-01',
];
const HEAD = { principal_id: 'p', duration_minutes: 30, timezone: 'UTC', stale: false, busy_as_of: null };
const everywhere = (intervals: readonly Interval[]) => ({ intervals, start: -Infinity, end: Infinity });

let keys = 0;

/** 30-minute slots of the default schedule (weekdays 09:00-17:00 UTC), no buffers, no bookings. */
function weekdayHours(key: string, calendar = everywhere([])): DayQuestion {
  return {
    key,
    schedule: DEFAULT_SCHEDULE('UTC'),
    calendar,
    booking: everywhere([]),
    bufferBeforeMs: 0,
    bufferAfterMs: 0,
    durationMs: 30 * MINUTE,
    intervalMs: undefined,
    alignTimezone: 'UTC',
  };
}

/** One principal state and the questions asked of it. */
const stateArb = fc
  .record({
    zone: fc.constantFrom(...ZONES),
    day: fc.constantFrom(...DAYS),
    hours: fc.constantFrom<WeeklyRule[]>(
      WEEKDAYS.map((day) => ({ day, start: '09:00', end: '17:00' })),
      WEEKDAYS.map((day) => ({ day, start: '00:00', end: '24:00' })),
      // Around local midnight, and inside the hours a DST change skips or repeats.
      [
        { day: 'mon', start: '22:00', end: '24:00' },
        { day: 'tue', start: '00:00', end: '03:30' },
        { day: 'sat', start: '01:00', end: '04:00' },
        { day: 'sun', start: '01:30', end: '02:45' },
      ],
    ),
    busy: fc.array(fc.tuple(fc.integer({ min: -200, max: 1500 }), fc.integer({ min: 1, max: 40 })), {
      maxLength: 40,
    }),
    occupied: fc.array(fc.tuple(fc.integer({ min: -200, max: 1500 }), fc.integer({ min: 1, max: 20 })), {
      maxLength: 10,
    }),
    durationMin: fc.constantFrom(10, 25, 30, 45, 60, 90, 480),
    intervalMin: fc.option(fc.constantFrom(5, 15, 20, 35, 45, 70, 90), { nil: undefined }),
    before: fc.integer({ min: 0, max: 6 }).map((q) => q * 10),
    after: fc.integer({ min: 0, max: 6 }).map((q) => q * 10),
    questions: fc.array(
      fc.record({
        startMin: fc.integer({ min: -24 * 60, max: 5 * 24 * 60 }),
        lengthHours: fc.integer({ min: 1, max: 96 }),
        nowMin: fc.integer({ min: -24 * 60, max: 3 * 24 * 60 }),
        noticeMin: fc.constantFrom(0, 15, 120, 1440),
        maxDaysAhead: fc.integer({ min: 0, max: 6 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map((c) => {
    const base = Date.parse(`${c.day}T00:00:00Z`);
    const at = (fives: number) => base + fives * 5 * MINUTE;
    const list = (xs: [number, number][]) =>
      normalize(xs.map(([s, n]) => ({ start: at(s), end: at(s + n) })));
    const schedule: Schedule = { ...DEFAULT_SCHEDULE(c.zone), weekly: c.hours };
    return { ...c, base, schedule, busy: list(c.busy), occupied: list(c.occupied) };
  });

describe('slots remembered by day', () => {
  it('answer every question with the same bytes as computing its slots directly', () => {
    const days = new DaySlots(1 << 20);
    fc.assert(
      fc.property(stateArb, (s) => {
        const key = `state ${keys++}`;
        const q: DayQuestion = {
          key,
          schedule: s.schedule,
          calendar: everywhere(s.busy),
          booking: everywhere(s.occupied),
          bufferBeforeMs: s.before * MINUTE,
          bufferAfterMs: s.after * MINUTE,
          durationMs: s.durationMin * MINUTE,
          intervalMs: s.intervalMin === undefined ? undefined : s.intervalMin * MINUTE,
          alignTimezone: s.zone,
        };
        for (const x of s.questions) {
          const window = {
            start: s.base + x.startMin * MINUTE,
            end: s.base + x.startMin * MINUTE + x.lengthHours * HOUR,
          };
          const constraints = {
            bufferBeforeMs: q.bufferBeforeMs,
            bufferAfterMs: q.bufferAfterMs,
            minimumNoticeMs: x.noticeMin * MINUTE,
            maxDaysAhead: x.maxDaysAhead,
          };
          const query = {
            window,
            nowMs: s.base + x.nowMin * MINUTE,
            durationMs: q.durationMs,
            intervalMs: q.intervalMs,
            alignTimezone: s.zone,
          };
          const direct = slotsBytes({
            ...HEAD,
            group_by_day: false,
            slots: computeSlots({
              ...constraints,
              ...query,
              working: workingIntervals(s.schedule, window),
              busy: s.busy,
              occupied: s.occupied,
            }),
          }).toString();
          const range = slotRange(constraints, query);
          const remembered = days.answer(q, range, slotsFrame(HEAD));
          expect(remembered?.toString()).toBe(direct);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('answers null when a day it needs lies outside what the busy lists know, and keeps nothing for it', () => {
    const days = new DaySlots(1 << 20);
    const base = Date.parse('2026-06-10T00:00:00Z');
    const q = weekdayHours('partial', { intervals: [], start: base - DAY, end: base + 3 * DAY });
    const inside = days.answer(q, { start: base, end: base + 2 * DAY }, slotsFrame(HEAD));
    expect(JSON.parse(inside!.toString()).slots).toHaveLength(62);
    const held = days.stats.bytes;
    // The third day's slots reach past the calendar's end by their duration: not known completely.
    expect(days.answer(q, { start: base, end: base + 3 * DAY }, slotsFrame(HEAD))).toBeNull();
    expect(days.stats.bytes).toBe(held);
  });

  it('stays within its byte budget, dropping the least recently used principal states', () => {
    const days = new DaySlots(20_000);
    const base = Date.parse('2026-06-10T00:00:00Z');
    for (let i = 0; i < 10; i++) {
      expect(
        days.answer(weekdayHours(`p${i}`), { start: base, end: base + 7 * DAY }, slotsFrame(HEAD)),
      ).not.toBeNull();
      expect(days.stats.bytes).toBeLessThanOrEqual(20_000);
    }
    expect(days.stats.states).toBeLessThan(10);
  });
});
