import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { type Interval, normalize } from './intervals.js';
import { DEFAULT_SCHEDULE, type Schedule, WEEKDAYS, type WeeklyRule, workingIntervals } from './schedule.js';
import {
  bookableRange,
  computeSlots,
  firstSlot,
  mutualSlots,
  type PrincipalAvailability,
  type SlotInput,
  slotInterval,
  slotRange,
} from './slots.js';
import { DAY, HOUR, MINUTE } from './time.js';

const t = (iso: string): number => Date.parse(iso);
const span = (startIso: string, endIso: string): Interval => ({ start: t(startIso), end: t(endIso) });
const local = (ms: number, zone: string): string =>
  DateTime.fromMillis(ms, { zone }).toFormat('yyyy-MM-dd HH:mm');

/** A slot input for `schedule` over `window`, with no busy time, notice or buffers; now = window start. */
function input(schedule: Schedule, window: Interval, extra: Partial<SlotInput> = {}): SlotInput {
  return {
    window,
    durationMs: 30 * MINUTE,
    working: workingIntervals(schedule, window),
    busy: [],
    bufferBeforeMs: 0,
    bufferAfterMs: 0,
    nowMs: window.start,
    minimumNoticeMs: 0,
    maxDaysAhead: 60,
    alignTimezone: schedule.timezone,
    ...extra,
  };
}

const withRules = (timezone: string, weekly: WeeklyRule[]): Schedule => ({
  ...DEFAULT_SCHEDULE(timezone),
  weekly,
});
const allDay = (day: WeeklyRule['day']): WeeklyRule => ({ day, start: '00:00', end: '24:00' });

describe('computeSlots basics', () => {
  const utc = DEFAULT_SCHEDULE('UTC');
  const monday = span('2026-06-01T00:00Z', '2026-06-02T00:00Z');

  it('fills a 09:00-17:00 day with 30-minute slots every 15 minutes', () => {
    const slots = computeSlots(input(utc, monday));
    expect(slots).toHaveLength(31);
    expect(slots[0]).toEqual(span('2026-06-01T09:00Z', '2026-06-01T09:30Z'));
    expect(slots[1]).toEqual(span('2026-06-01T09:15Z', '2026-06-01T09:45Z'));
    expect(slots[30]).toEqual(span('2026-06-01T16:30Z', '2026-06-01T17:00Z'));
  });

  it('defaults the interval to min(duration, 15 min) and validates it', () => {
    expect(slotInterval({ durationMs: 10 * MINUTE })).toBe(10 * MINUTE);
    expect(slotInterval({ durationMs: 60 * MINUTE })).toBe(15 * MINUTE);
    expect(slotInterval({ durationMs: 60 * MINUTE, intervalMs: 60 * MINUTE })).toBe(60 * MINUTE);
    expect(() => slotInterval({ durationMs: 0 })).toThrow(RangeError);
    expect(() => slotInterval({ durationMs: 30 * MINUTE, intervalMs: -1 })).toThrow(RangeError);
  });

  it('keeps busy time plus buffers clear: no end within bufferBefore, no start within bufferAfter', () => {
    const busy = [span('2026-06-01T10:00Z', '2026-06-01T11:00Z')];
    const slots = computeSlots(
      input(utc, monday, { busy, bufferBeforeMs: 15 * MINUTE, bufferAfterMs: 30 * MINUTE }),
    );
    const starts = slots.map((s) => new Date(s.start).toISOString().slice(11, 16));
    expect(starts.slice(0, 4)).toEqual(['09:00', '09:15', '11:30', '11:45']);
  });

  it('respects minimum notice and max days ahead', () => {
    const week = span('2026-06-01T00:00Z', '2026-06-08T00:00Z');
    const nowMs = t('2026-06-01T08:00Z');
    const slots = computeSlots(
      input(utc, week, {
        nowMs,
        minimumNoticeMs: 2 * HOUR + 5 * MINUTE,
        maxDaysAhead: 2,
        intervalMs: 30 * MINUTE,
      }),
    );
    expect(slots[0]).toEqual(span('2026-06-01T10:30Z', '2026-06-01T11:00Z'));
    expect(slots.at(-1)).toEqual(span('2026-06-02T16:30Z', '2026-06-02T17:00Z'));
    const later = computeSlots(input(utc, week, { nowMs: t('2026-06-01T10:00Z'), maxDaysAhead: 2 }));
    expect(later.at(-1)).toEqual(span('2026-06-03T10:00Z', '2026-06-03T10:30Z'));
  });

  it('treats every boundary exactly, to the millisecond', () => {
    const at = (iso: string) => t(`2026-06-01T${iso}Z`);
    const starts = (extra: Partial<SlotInput>) =>
      computeSlots(input(utc, monday, { intervalMs: 30 * MINUTE, ...extra })).map((s) => s.start);
    // Notice: a slot may start exactly at now + notice, not a millisecond earlier.
    expect(starts({ nowMs: at('08:00'), minimumNoticeMs: 2 * HOUR })[0]).toBe(at('10:00'));
    expect(starts({ nowMs: at('08:00') + 1, minimumNoticeMs: 2 * HOUR })[0]).toBe(at('10:30'));
    // Horizon: a slot may start exactly at now + max days, not a millisecond later.
    const nowMs = at('10:00') - DAY;
    expect(starts({ nowMs, maxDaysAhead: 1 }).at(-1)).toBe(at('10:00'));
    expect(starts({ nowMs: nowMs - 1, maxDaysAhead: 1 }).at(-1)).toBe(at('09:30'));
    // Buffers: touching the padded busy block is fine, overlapping it by 1 ms is not.
    const busy = (s: string, e: string, shift = 0) => [{ start: at(s) + shift, end: at(e) + shift }];
    expect(starts({ busy: busy('12:00', '12:30'), bufferAfterMs: 30 * MINUTE })).toContain(at('13:00'));
    expect(starts({ busy: busy('12:00', '12:30', 1), bufferAfterMs: 30 * MINUTE })).not.toContain(
      at('13:00'),
    );
    expect(starts({ busy: busy('12:00', '12:30', 1), bufferAfterMs: 30 * MINUTE })).toContain(at('13:30'));
    expect(starts({ busy: busy('12:00', '12:30'), bufferBeforeMs: 30 * MINUTE })).toContain(at('11:00'));
    expect(starts({ busy: busy('12:00', '12:30', -1), bufferBeforeMs: 30 * MINUTE })).not.toContain(
      at('11:00'),
    );
    // A free interval starting just past a grid point waits for the next grid point.
    expect(starts({ busy: [{ start: at('08:00'), end: at('10:00') + 500 }] })[0]).toBe(at('10:30'));
  });

  it('keeps slots fully inside the window', () => {
    const window = span('2026-06-01T09:10Z', '2026-06-01T10:20Z');
    const slots = computeSlots(input(utc, window));
    expect(slots).toEqual([
      span('2026-06-01T09:15Z', '2026-06-01T09:45Z'),
      span('2026-06-01T09:30Z', '2026-06-01T10:00Z'),
      span('2026-06-01T09:45Z', '2026-06-01T10:15Z'),
    ]);
  });

  it('joins adjacent working intervals and accepts unsorted, overlapping busy time', () => {
    const working = [
      span('2026-06-01T12:00Z', '2026-06-01T13:00Z'),
      span('2026-06-01T11:00Z', '2026-06-01T12:00Z'),
    ];
    const busy = [
      span('2026-06-01T12:30Z', '2026-06-01T12:45Z'),
      span('2026-06-01T11:00Z', '2026-06-01T11:20Z'),
      span('2026-06-01T11:10Z', '2026-06-01T11:30Z'),
    ];
    const slots = computeSlots({ ...input(utc, monday), working, busy, durationMs: 60 * MINUTE });
    expect(slots).toEqual([span('2026-06-01T11:30Z', '2026-06-01T12:30Z')]);
    const shorter = computeSlots({ ...input(utc, monday), working, busy, intervalMs: 15 * MINUTE });
    expect(shorter.map((s) => new Date(s.start).toISOString().slice(11, 16))).toEqual([
      '11:30',
      '11:45',
      '12:00',
    ]);
  });

  it('firstSlot returns the first slot, or null', () => {
    const i = input(utc, span('2026-06-06T00:00Z', '2026-06-10T00:00Z'));
    expect(firstSlot(i)).toEqual(span('2026-06-08T09:00Z', '2026-06-08T09:30Z'));
    expect(firstSlot(input(utc, span('2026-06-06T00:00Z', '2026-06-07T00:00Z')))).toBeNull();
    expect(computeSlots({ ...i, limit: 3 })).toEqual(computeSlots(i).slice(0, 3));
  });
});

describe('computeSlots grid alignment', () => {
  it('aligns to :00/:15/:30/:45 local time in a +05:45 zone', () => {
    const s = DEFAULT_SCHEDULE('Asia/Kathmandu');
    const slots = computeSlots(input(s, span('2026-06-01T00:00Z', '2026-06-02T00:00Z')));
    expect(local(slots[0]!.start, s.timezone)).toBe('2026-06-01 09:00');
    expect(slots[0]!.start).toBe(t('2026-06-01T03:15Z'));
    const minutes = new Set(slots.map((x) => DateTime.fromMillis(x.start, { zone: s.timezone }).minute));
    expect([...minutes].sort((a, b) => a - b)).toEqual([0, 15, 30, 45]);
  });

  it('counts a 45-minute step from local midnight (New York)', () => {
    const s = DEFAULT_SCHEDULE('America/New_York');
    const slots = computeSlots(
      input(s, span('2026-06-01T00:00Z', '2026-06-02T00:00Z'), { intervalMs: 45 * MINUTE }),
    );
    expect(slots.slice(0, 4).map((x) => local(x.start, s.timezone).slice(11))).toEqual([
      '09:00',
      '09:45',
      '10:30',
      '11:15',
    ]);
  });

  it('drops the last step of a day when it does not fit before midnight, so slots never overlap', () => {
    const s = withRules('UTC', WEEKDAYS.map(allDay));
    const slots = computeSlots(
      input(s, span('2026-06-01T00:00Z', '2026-06-03T00:00Z'), {
        durationMs: 50 * MINUTE,
        intervalMs: 50 * MINUTE,
      }),
    );
    expect(slots).toHaveLength(56);
    expect(slots[27]).toEqual(span('2026-06-01T22:30Z', '2026-06-01T23:20Z'));
    expect(slots[28]).toEqual(span('2026-06-02T00:00Z', '2026-06-02T00:50Z'));
  });

  it('does not depend on the window start for the same instants', () => {
    const s = DEFAULT_SCHEDULE('Asia/Kolkata');
    const a = computeSlots(
      input(s, span('2026-06-01T00:00Z', '2026-06-03T00:00Z'), { intervalMs: 20 * MINUTE }),
    );
    const b = computeSlots(
      input(s, span('2026-06-01T05:07Z', '2026-06-03T00:00Z'), { intervalMs: 20 * MINUTE }),
    );
    expect(b).toEqual(a.filter((x) => x.start >= t('2026-06-01T05:07Z')));
  });
});

describe('computeSlots across DST', () => {
  it('America/New_York 2026-03-08: a 09:00-17:00 day gives 8 real hours of slots', () => {
    const s = withRules('America/New_York', [{ day: 'sun', start: '09:00', end: '17:00' }]);
    const slots = computeSlots(
      input(s, span('2026-03-08T00:00Z', '2026-03-09T12:00Z'), { durationMs: HOUR, intervalMs: HOUR }),
    );
    expect(slots).toHaveLength(8);
    expect(slots[0]).toEqual(span('2026-03-08T13:00Z', '2026-03-08T14:00Z'));
    expect(slots.map((x) => local(x.start, s.timezone).slice(11))).toEqual(
      ['09', '10', '11', '12', '13', '14', '15', '16'].map((h) => `${h}:00`),
    );
  });

  it('America/New_York: the spring-forward day has 23 hourly slots, the fall-back day 25', () => {
    const s = withRules('America/New_York', [allDay('sun')]);
    const spring = computeSlots(
      input(s, span('2026-03-08T00:00Z', '2026-03-10T00:00Z'), { durationMs: HOUR, intervalMs: HOUR }),
    );
    expect(spring).toHaveLength(23);
    expect(spring.map((x) => local(x.start, s.timezone).slice(11, 13)).slice(0, 4)).toEqual([
      '00',
      '01',
      '03',
      '04',
    ]);
    const fall = computeSlots(
      input(s, span('2026-11-01T00:00Z', '2026-11-03T00:00Z'), { durationMs: HOUR, intervalMs: HOUR }),
    );
    expect(fall).toHaveLength(25);
    expect(fall.map((x) => local(x.start, s.timezone).slice(11, 13)).slice(0, 4)).toEqual([
      '00',
      '01',
      '01',
      '02',
    ]);
  });

  it('Europe/London: working hours stay 09:00-17:00 local on both change days', () => {
    const s = withRules('Europe/London', [{ day: 'sun', start: '09:00', end: '17:00' }]);
    for (const [date, first] of [
      ['2026-03-29', '2026-03-29T08:00Z'],
      ['2026-10-25', '2026-10-25T09:00Z'],
    ] as const) {
      const start = t(`${date}T00:00Z`) - 2 * HOUR;
      const slots = computeSlots(
        input(s, { start, end: start + DAY + 4 * HOUR }, { intervalMs: 30 * MINUTE }),
      );
      expect(slots).toHaveLength(16);
      expect(slots[0]!.start).toBe(t(first));
      expect(local(slots.at(-1)!.end, s.timezone)).toBe(`${date} 17:00`);
    }
  });

  it('Australia/Sydney (reversed seasons) and Australia/Lord_Howe (30-minute shift)', () => {
    const syd = withRules('Australia/Sydney', [allDay('sun')]);
    const apr = computeSlots(
      input(syd, span('2026-04-04T00:00Z', '2026-04-06T00:00Z'), { durationMs: HOUR, intervalMs: HOUR }),
    );
    expect(apr).toHaveLength(25);
    const oct = computeSlots(
      input(syd, span('2026-10-03T00:00Z', '2026-10-05T00:00Z'), { durationMs: HOUR, intervalMs: HOUR }),
    );
    expect(oct).toHaveLength(23);
    const lh = withRules('Australia/Lord_Howe', [{ day: 'mon', start: '09:00', end: '12:00' }]);
    const after = computeSlots(
      input(lh, span('2026-10-04T00:00Z', '2026-10-06T00:00Z'), { durationMs: HOUR, intervalMs: HOUR }),
    );
    expect(after.map((x) => local(x.start, lh.timezone))).toEqual([
      '2026-10-05 09:00',
      '2026-10-05 10:00',
      '2026-10-05 11:00',
    ]);
  });

  it('America/St_Johns and Australia/Adelaide keep a half-hour-offset day on the local grid', () => {
    for (const zone of ['America/St_Johns', 'Australia/Adelaide']) {
      const s = DEFAULT_SCHEDULE(zone);
      const slots = computeSlots(input(s, span('2026-03-01T00:00Z', '2026-03-15T00:00Z')));
      expect(slots.length).toBe(10 * 31);
      for (const x of slots) expect(DateTime.fromMillis(x.start, { zone }).minute % 15).toBe(0);
    }
  });
});

describe('mutualSlots', () => {
  const window = span('2026-06-01T00:00Z', '2026-06-02T00:00Z');
  const principal = (
    schedule: Schedule,
    extra: Partial<PrincipalAvailability> = {},
  ): PrincipalAvailability => ({
    working: workingIntervals(schedule, window),
    busy: [],
    bufferBeforeMs: 0,
    bufferAfterMs: 0,
    minimumNoticeMs: 0,
    maxDaysAhead: 60,
    ...extra,
  });

  it('finds the overlap of London and New York working days', () => {
    const london = principal(DEFAULT_SCHEDULE('Europe/London'));
    const ny = principal(DEFAULT_SCHEDULE('America/New_York'), {
      busy: [span('2026-06-01T13:30Z', '2026-06-01T14:00Z')],
    });
    const query = { window, durationMs: 30 * MINUTE, nowMs: window.start, alignTimezone: 'Europe/London' };
    const slots = mutualSlots([london, ny], query);
    expect(slots.map((x) => new Date(x.start).toISOString().slice(11, 16))).toEqual([
      '13:00',
      '14:00',
      '14:15',
      '14:30',
      '14:45',
      '15:00',
      '15:15',
      '15:30',
    ]);
    expect(mutualSlots([london, ny], { ...query, limit: 2 })).toHaveLength(2);
    expect(mutualSlots([], query)).toEqual([]);
  });

  it("applies each principal's own notice", () => {
    const a = principal(DEFAULT_SCHEDULE('UTC'));
    const b = principal(DEFAULT_SCHEDULE('UTC'), { minimumNoticeMs: 16 * HOUR });
    const query = { window, durationMs: 30 * MINUTE, nowMs: window.start, alignTimezone: 'UTC' };
    const slots = mutualSlots([a, b], query);
    expect(slots[0]).toEqual(span('2026-06-01T16:00Z', '2026-06-01T16:30Z'));
    expect(slots).toHaveLength(3);
  });
});

// ---------------------------------------------------------------------------------------------------
// Property tests

const ZONES = [
  'Europe/London',
  'America/New_York',
  'Australia/Sydney',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Adelaide',
  'America/St_Johns',
];
/** Days of 2026 around the DST changes of the zones above, plus ordinary ones. */
const DAYS = [
  '03-07',
  '03-08',
  '03-28',
  '03-29',
  '04-04',
  '04-05',
  '06-10',
  '10-03',
  '10-04',
  '10-24',
  '10-25',
];

const clock = fc.integer({ min: 0, max: 48 }).map((h) => h * 30);
const hhmm = (m: number): string =>
  m === 1440 ? '24:00' : `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
const rule = fc
  .tuple(fc.constantFrom(...WEEKDAYS), clock, clock)
  .filter(([, a, b]) => a !== b && Math.min(a, b) < 1440)
  .map(([day, a, b]): WeeklyRule => ({ day, start: hhmm(Math.min(a, b)), end: hhmm(Math.max(a, b)) }));

interface Case {
  input: SlotInput;
  schedule: Schedule;
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    zone: fc.constantFrom(...ZONES),
    day: fc.constantFrom(...DAYS),
    startShift: fc.integer({ min: -12 * 12, max: 12 * 12 }),
    lengthHours: fc.integer({ min: 1, max: 72 }),
    weekly: fc.oneof(
      fc.array(rule, { minLength: 1, maxLength: 10 }),
      rule.map((r) => WEEKDAYS.map((day) => ({ ...r, day }))),
      fc.constant(WEEKDAYS.map(allDay)),
    ),
    busy: fc.array(
      fc.tuple(
        fc.integer({ min: -18 * 12, max: 84 * 12 }),
        fc.integer({ min: -2, max: 48 }),
        fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5 * MINUTE })),
      ),
      { maxLength: 12 },
    ),
    durationMin: fc.constantFrom(10, 15, 25, 30, 45, 60, 90),
    intervalMin: fc.option(fc.constantFrom(5, 10, 15, 20, 30, 35, 45, 50, 60, 70, 90), { nil: undefined }),
    before: fc.integer({ min: 0, max: 12 }).map((q) => q * 5),
    after: fc.integer({ min: 0, max: 12 }).map((q) => q * 5),
    nowShift: fc.integer({ min: -24 * 4, max: 12 * 4 }).map((q) => q * 15),
    nowJitter: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 15 * MINUTE })),
    noticeMin: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 0, max: 12 * 4 }).map((q) => q * 15),
    ),
    maxDaysAhead: fc.integer({ min: 0, max: 5 }),
  })
  .map((c) => {
    const base = t(`2026-${c.day}T00:00Z`);
    const start = base + c.startShift * 5 * MINUTE;
    const window = { start, end: start + c.lengthHours * HOUR };
    const schedule = withRules(c.zone, c.weekly);
    return {
      schedule,
      input: {
        window,
        durationMs: c.durationMin * MINUTE,
        intervalMs: c.intervalMin === undefined ? undefined : c.intervalMin * MINUTE,
        working: workingIntervals(schedule, window),
        busy: c.busy.map(([s, len, jitter]) => ({
          start: base + s * 5 * MINUTE + jitter,
          end: base + (s + len) * 5 * MINUTE + jitter,
        })),
        bufferBeforeMs: c.before * MINUTE,
        bufferAfterMs: c.after * MINUTE,
        nowMs: base + c.nowShift * MINUTE - c.nowJitter,
        minimumNoticeMs: c.noticeMin * MINUTE,
        maxDaysAhead: c.maxDaysAhead,
        alignTimezone: c.zone,
      },
    };
  });

/** Brute-force oracle: every grid point of every local day, tested against every rule directly. */
function oracle(i: SlotInput): Interval[] {
  const step = slotInterval(i);
  const working = normalize(i.working);
  const out: Interval[] = [];
  let day = DateTime.fromMillis(i.window.start, { zone: i.alignTimezone }).startOf('day');
  while (day.toMillis() < i.window.end) {
    const next = day.plus({ days: 1 }).startOf('day');
    for (let k = 0; ; k++) {
      const g = day.toMillis() + k * step;
      if (g >= next.toMillis() || (k > 0 && g + step > next.toMillis())) break;
      if (acceptable(i, working, g)) out.push({ start: g, end: g + i.durationMs });
    }
    day = next;
  }
  return out;
}

/** Whether a slot starting at `g` satisfies every rule, checked naively. */
function acceptable(i: SlotInput, working: readonly Interval[], g: number): boolean {
  const end = g + i.durationMs;
  if (g < i.window.start || end > i.window.end) return false;
  if (g < i.nowMs + i.minimumNoticeMs || g > i.nowMs + i.maxDaysAhead * DAY) return false;
  if (!working.some((w) => w.start <= g && end <= w.end)) return false;
  return i.busy.every(
    (b) => b.start >= b.end || end <= b.start - i.bufferBeforeMs || g >= b.end + i.bufferAfterMs,
  );
}

/** Minute ranges of the weekly rules, merged, per weekday (0 = Monday). */
function ruleMinutes(schedule: Schedule): Interval[][] {
  const minutes = (v: string) => Number(v.slice(0, 2)) * 60 + Number(v.slice(3));
  return WEEKDAYS.map((day) =>
    normalize(
      schedule.weekly
        .filter((r) => r.day === day)
        .map((r) => ({ start: minutes(r.start), end: minutes(r.end) })),
    ),
  );
}

/** Whether the wall-clock minutes of `slot` lie inside the weekly rules (for a slot without a DST change). */
function insideRule(byDay: Interval[][], zone: string, slot: Interval): boolean {
  const a = DateTime.fromMillis(slot.start, { zone });
  const startMin = a.hour * 60 + a.minute;
  const endMin = startMin + Math.round((slot.end - slot.start) / MINUTE);
  const covers = (day: number, s: number, e: number) => byDay[day]!.some((r) => r.start <= s && e <= r.end);
  if (endMin <= 1440) return covers(a.weekday - 1, startMin, endMin);
  return covers(a.weekday - 1, startMin, 1440) && covers(a.weekday % 7, 0, endMin - 1440);
}

describe('computeSlots properties', () => {
  it('matches a brute-force oracle', () => {
    fc.assert(
      fc.property(caseArb, ({ input: i }) => {
        expect(computeSlots(i)).toEqual(oracle(i));
      }),
      { numRuns: 100 },
    );
  });

  it('slots depend on the window and the clock only through slotRange', () => {
    fc.assert(
      fc.property(caseArb, ({ input: i }) => {
        const range = slotRange(i, i);
        const bookable = bookableRange(i, i.window, i.nowMs, i.durationMs);
        expect(range.start).toBeLessThanOrEqual(range.end);
        if (range.start < range.end) {
          expect(range.start).toBeGreaterThanOrEqual(bookable.start);
          expect(range.end).toBeLessThanOrEqual(bookable.end);
        }
        // Any window and clock with this slotRange bound the slots to it alone; here: the range itself.
        expect(computeSlots({ ...i, window: range })).toEqual(computeSlots(i));
        // And it is tight (so that remembered answers are found): always working, never busy, the first
        // slot starts at its start and the last one ends at its end.
        const open = computeSlots({ ...i, working: [i.window], busy: [] });
        if (open.length === 0) expect(range.start).toBe(range.end);
        else expect([open[0]!.start, open.at(-1)!.end]).toEqual([range.start, range.end]);
      }),
      { numRuns: 300 },
    );
  });

  it('every slot: exact duration, clear of busy time plus buffers, within notice and horizon, sorted', () => {
    fc.assert(
      fc.property(caseArb, ({ input: i }) => {
        const slots = computeSlots(i);
        const step = slotInterval(i);
        let prev: Interval | undefined;
        let day: Interval = { start: 0, end: 0 };
        for (const s of slots) {
          expect(s.end - s.start).toBe(i.durationMs);
          expect(s.start >= i.window.start && s.end <= i.window.end).toBe(true);
          expect(s.start >= i.nowMs + i.minimumNoticeMs).toBe(true);
          expect(s.start <= i.nowMs + i.maxDaysAhead * DAY).toBe(true);
          for (const b of i.busy) {
            if (b.start >= b.end) continue;
            expect(s.end <= b.start - i.bufferBeforeMs || s.start >= b.end + i.bufferAfterMs).toBe(true);
          }
          if (prev) {
            expect(s.start > prev.start).toBe(true);
            if (step >= i.durationMs) expect(s.start >= prev.end).toBe(true);
          }
          if (!(s.start >= day.start && s.start < day.end)) {
            const d = DateTime.fromMillis(s.start, { zone: i.alignTimezone }).startOf('day');
            day = { start: d.toMillis(), end: d.plus({ days: 1 }).toMillis() };
          }
          expect((s.start - day.start) % step).toBe(0);
          prev = s;
        }
      }),
      { numRuns: 80 },
    );
  });

  it("every slot lies inside the schedule's weekly hours in the principal's zone (wall clock)", () => {
    fc.assert(
      fc.property(caseArb, ({ input: i, schedule }) => {
        const zone = schedule.timezone;
        const byDay = ruleMinutes(schedule);
        for (const s of computeSlots(i)) {
          const offsets = [s.start - HOUR, s.end + HOUR].map((x) => DateTime.fromMillis(x, { zone }).offset);
          if (offsets[0] !== offsets[1]) continue; // a DST change nearby: wall-clock minutes are not linear
          expect(
            insideRule(byDay, zone, s),
            `${local(s.start, zone)} ${JSON.stringify(schedule.weekly)}`,
          ).toBe(true);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('firstSlot and limit agree with the full list', () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 1, max: 5 }), ({ input: i }, n) => {
        const all = computeSlots(i);
        expect(firstSlot(i)).toEqual(all[0] ?? null);
        expect(computeSlots({ ...i, limit: n })).toEqual(all.slice(0, n));
      }),
      { numRuns: 40 },
    );
  });

  it('mutual slots are exactly the slots free for every principal', () => {
    fc.assert(
      fc.property(caseArb, caseArb, ({ input: a }, { input: b }) => {
        const bb: SlotInput = {
          ...b,
          window: a.window,
          durationMs: a.durationMs,
          intervalMs: a.intervalMs,
          nowMs: a.nowMs,
          alignTimezone: a.alignTimezone,
        };
        const mutual = mutualSlots([a, bb], a);
        const inB = new Set(computeSlots(bb).map((s) => s.start));
        expect(mutual).toEqual(computeSlots(a).filter((s) => inB.has(s.start)));
      }),
      { numRuns: 50 },
    );
  });
});
