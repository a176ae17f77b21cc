import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { Interval } from './intervals.js';
import {
  DEFAULT_SCHEDULE,
  localDayBounds,
  type Schedule,
  toWall,
  validateSchedule,
  WEEKDAYS,
  type WeeklyRule,
  wallToInstant,
  workingIntervals,
  zoneOffset,
} from './schedule.js';
import { DAY, HOUR } from './time.js';

const t = (iso: string): number => Date.parse(iso);
const span = (startIso: string, endIso: string): Interval => ({ start: t(startIso), end: t(endIso) });
const hours = (x: Interval): number => (x.end - x.start) / HOUR;

/** A schedule with the given weekly rules and nothing else. */
function withRules(timezone: string, weekly: WeeklyRule[], overrides: Schedule['overrides'] = []): Schedule {
  return { ...DEFAULT_SCHEDULE(timezone), weekly, overrides };
}

/** Working intervals of one local calendar date (window = that local day, generously padded). */
function onDate(schedule: Schedule, date: string): Interval[] {
  const start = DateTime.fromISO(date, { zone: schedule.timezone }).toMillis();
  return workingIntervals(schedule, { start: start - DAY, end: start + 2 * DAY }).filter((x) => {
    const local = DateTime.fromMillis(x.start, { zone: schedule.timezone }).toISODate();
    return local === date;
  });
}

const allDay = (day: WeeklyRule['day']): WeeklyRule => ({ day, start: '00:00', end: '24:00' });
const nineToFive = (day: WeeklyRule['day']): WeeklyRule => ({ day, start: '09:00', end: '17:00' });

describe('DEFAULT_SCHEDULE', () => {
  it('is Monday to Friday 09:00-17:00 with no buffers, no notice, 60 days ahead', () => {
    const s = DEFAULT_SCHEDULE('Europe/Paris');
    expect(s.timezone).toBe('Europe/Paris');
    expect(s.weekly).toEqual(['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => nineToFive(day as 'mon')));
    expect(s.overrides).toEqual([]);
    expect([s.buffer_before_minutes, s.buffer_after_minutes, s.minimum_notice_minutes]).toEqual([0, 0, 0]);
    expect(s.max_days_ahead).toBe(60);
    expect(validateSchedule(s).ok).toBe(true);
  });

  it('yields five 8-hour days per week in New York (EST)', () => {
    const week = workingIntervals(DEFAULT_SCHEDULE('America/New_York'), span('2026-02-01', '2026-02-08'));
    expect(week).toEqual([
      span('2026-02-02T14:00Z', '2026-02-02T22:00Z'),
      span('2026-02-03T14:00Z', '2026-02-03T22:00Z'),
      span('2026-02-04T14:00Z', '2026-02-04T22:00Z'),
      span('2026-02-05T14:00Z', '2026-02-05T22:00Z'),
      span('2026-02-06T14:00Z', '2026-02-06T22:00Z'),
    ]);
  });
});

describe('workingIntervals across DST in America/New_York', () => {
  const zone = 'America/New_York';

  it('spring-forward day 2026-03-08: 09:00-17:00 is 8 real hours, the whole day is 23', () => {
    expect(onDate(withRules(zone, [nineToFive('sun')]), '2026-03-08')).toEqual([
      span('2026-03-08T13:00Z', '2026-03-08T21:00Z'),
    ]);
    const [day] = onDate(withRules(zone, [allDay('sun')]), '2026-03-08');
    expect(day).toEqual(span('2026-03-08T05:00Z', '2026-03-09T04:00Z'));
    expect(hours(day!)).toBe(23);
  });

  it('shifts a local time inside the gap forward, like luxon', () => {
    const [x] = onDate(withRules(zone, [{ day: 'sun', start: '02:30', end: '04:00' }]), '2026-03-08');
    expect(x).toEqual(span('2026-03-08T07:30Z', '2026-03-08T08:00Z'));
    const luxon = DateTime.fromObject({ year: 2026, month: 3, day: 8, hour: 2, minute: 30 }, { zone });
    expect(x!.start).toBe(luxon.toMillis());
  });

  it('fall-back day 2026-11-01: 00:00-05:00 covers 6 real hours; a repeated time takes the first', () => {
    const [x] = onDate(withRules(zone, [{ day: 'sun', start: '00:00', end: '05:00' }]), '2026-11-01');
    expect(x).toEqual(span('2026-11-01T04:00Z', '2026-11-01T10:00Z'));
    expect(hours(x!)).toBe(6);
    const [y] = onDate(withRules(zone, [{ day: 'sun', start: '01:30', end: '02:00' }]), '2026-11-01');
    expect(y).toEqual(span('2026-11-01T05:30Z', '2026-11-01T07:00Z'));
  });

  it('the Monday after each change is 09:00-17:00 in the new offset', () => {
    const s = DEFAULT_SCHEDULE(zone);
    expect(onDate(s, '2026-03-09')).toEqual([span('2026-03-09T13:00Z', '2026-03-09T21:00Z')]);
    expect(onDate(s, '2026-11-02')).toEqual([span('2026-11-02T14:00Z', '2026-11-02T22:00Z')]);
    expect(onDate(s, '2026-03-06')).toEqual([span('2026-03-06T14:00Z', '2026-03-06T22:00Z')]);
  });
});

describe('workingIntervals across DST in Europe/London', () => {
  const zone = 'Europe/London';

  it('spring-forward 2026-03-29: local 09:00-17:00 is 08:00Z-16:00Z; the day is 23 hours', () => {
    expect(onDate(withRules(zone, [nineToFive('sun')]), '2026-03-29')).toEqual([
      span('2026-03-29T08:00Z', '2026-03-29T16:00Z'),
    ]);
    expect(onDate(withRules(zone, [nineToFive('sat')]), '2026-03-28')).toEqual([
      span('2026-03-28T09:00Z', '2026-03-28T17:00Z'),
    ]);
    expect(onDate(withRules(zone, [allDay('sun')]), '2026-03-29')).toEqual([
      span('2026-03-29T00:00Z', '2026-03-29T23:00Z'),
    ]);
    const [gap] = onDate(withRules(zone, [{ day: 'sun', start: '01:30', end: '03:00' }]), '2026-03-29');
    expect(gap).toEqual(span('2026-03-29T01:30Z', '2026-03-29T02:00Z'));
  });

  it('fall-back 2026-10-25: local 09:00-17:00 is 09:00Z-17:00Z; the day is 25 hours', () => {
    expect(onDate(withRules(zone, [nineToFive('sun')]), '2026-10-25')).toEqual([
      span('2026-10-25T09:00Z', '2026-10-25T17:00Z'),
    ]);
    expect(onDate(withRules(zone, [nineToFive('sat')]), '2026-10-24')).toEqual([
      span('2026-10-24T08:00Z', '2026-10-24T16:00Z'),
    ]);
    const [day] = onDate(withRules(zone, [allDay('sun')]), '2026-10-25');
    expect(day).toEqual(span('2026-10-24T23:00Z', '2026-10-26T00:00Z'));
    expect(hours(day!)).toBe(25);
  });
});

describe('workingIntervals in the southern hemisphere and in offset zones', () => {
  it('Australia/Sydney: fall-back in April (25 h), spring-forward in October (23 h)', () => {
    const zone = 'Australia/Sydney';
    const [apr] = onDate(withRules(zone, [allDay('sun')]), '2026-04-05');
    expect(apr).toEqual(span('2026-04-04T13:00Z', '2026-04-05T14:00Z'));
    expect(onDate(withRules(zone, [nineToFive('sun')]), '2026-04-05')).toEqual([
      span('2026-04-04T23:00Z', '2026-04-05T07:00Z'),
    ]);
    const [oct] = onDate(withRules(zone, [allDay('sun')]), '2026-10-04');
    expect(oct).toEqual(span('2026-10-03T14:00Z', '2026-10-04T13:00Z'));
    expect(onDate(withRules(zone, [nineToFive('sun')]), '2026-10-04')).toEqual([
      span('2026-10-03T22:00Z', '2026-10-04T06:00Z'),
    ]);
  });

  it('Asia/Kolkata (+05:30, no DST) and Asia/Kathmandu (+05:45)', () => {
    expect(onDate(DEFAULT_SCHEDULE('Asia/Kolkata'), '2026-06-01')).toEqual([
      span('2026-06-01T03:30Z', '2026-06-01T11:30Z'),
    ]);
    expect(onDate(DEFAULT_SCHEDULE('Asia/Kathmandu'), '2026-06-01')).toEqual([
      span('2026-06-01T03:15Z', '2026-06-01T11:15Z'),
    ]);
  });

  it('Australia/Adelaide (+09:30 / +10:30)', () => {
    const zone = 'Australia/Adelaide';
    expect(onDate(DEFAULT_SCHEDULE(zone), '2026-06-01')).toEqual([
      span('2026-05-31T23:30Z', '2026-06-01T07:30Z'),
    ]);
    expect(onDate(DEFAULT_SCHEDULE(zone), '2026-10-05')).toEqual([
      span('2026-10-04T22:30Z', '2026-10-05T06:30Z'),
    ]);
    expect(hours(onDate(withRules(zone, [allDay('sun')]), '2026-10-04')[0]!)).toBe(23);
  });

  it('America/St_Johns (-03:30 / -02:30)', () => {
    const zone = 'America/St_Johns';
    expect(onDate(withRules(zone, [nineToFive('sat')]), '2026-03-07')).toEqual([
      span('2026-03-07T12:30Z', '2026-03-07T20:30Z'),
    ]);
    expect(onDate(withRules(zone, [nineToFive('sun')]), '2026-03-08')).toEqual([
      span('2026-03-08T11:30Z', '2026-03-08T19:30Z'),
    ]);
    expect(hours(onDate(withRules(zone, [allDay('sun')]), '2026-11-01')[0]!)).toBe(25);
  });
});

describe('workingIntervals rules and overrides', () => {
  it('merges several and overlapping rules on one day, with 24:00 meaning end of day', () => {
    const s = withRules('UTC', [
      { day: 'mon', start: '08:00', end: '10:00' },
      { day: 'mon', start: '09:30', end: '12:00' },
      { day: 'mon', start: '13:00', end: '14:00' },
      { day: 'mon', start: '22:00', end: '24:00' },
      { day: 'tue', start: '00:00', end: '01:00' },
    ]);
    expect(workingIntervals(s, span('2026-06-01', '2026-06-03'))).toEqual([
      span('2026-06-01T08:00Z', '2026-06-01T12:00Z'),
      span('2026-06-01T13:00Z', '2026-06-01T14:00Z'),
      span('2026-06-01T22:00Z', '2026-06-02T01:00Z'),
    ]);
  });

  it('clips to the window', () => {
    const s = DEFAULT_SCHEDULE('UTC');
    expect(workingIntervals(s, span('2026-06-01T12:00Z', '2026-06-02T10:00Z'))).toEqual([
      span('2026-06-01T12:00Z', '2026-06-01T17:00Z'),
      span('2026-06-02T09:00Z', '2026-06-02T10:00Z'),
    ]);
    expect(workingIntervals(s, span('2026-06-01T12:00Z', '2026-06-01T12:00Z'))).toEqual([]);
  });

  it('applies overrides on the local date of the principal, not the UTC date', () => {
    const zone = 'Australia/Sydney';
    const s: Schedule = {
      ...DEFAULT_SCHEDULE(zone),
      overrides: [
        { date: '2026-06-01', intervals: [{ start: '08:00', end: '09:00' }] },
        { date: '2026-06-02', unavailable: true },
        { date: '2026-06-06', intervals: [{ start: '10:00', end: '12:00' }] },
      ],
    };
    const window = span('2026-05-31T14:00Z', '2026-06-06T14:00Z'); // Mon 1 June to Sat 6 June, local
    expect(workingIntervals(s, window)).toEqual([
      span('2026-05-31T22:00Z', '2026-05-31T23:00Z'),
      span('2026-06-02T23:00Z', '2026-06-03T07:00Z'),
      span('2026-06-03T23:00Z', '2026-06-04T07:00Z'),
      span('2026-06-04T23:00Z', '2026-06-05T07:00Z'),
      span('2026-06-06T00:00Z', '2026-06-06T02:00Z'),
    ]);
  });

  it('an override with no intervals means unavailable', () => {
    const s: Schedule = { ...DEFAULT_SCHEDULE('UTC'), overrides: [{ date: '2026-06-01', intervals: [] }] };
    expect(workingIntervals(s, span('2026-06-01', '2026-06-02'))).toEqual([]);
  });

  it('property: away from offset changes, an instant is working iff its local wall time is', () => {
    const zones = ['Europe/London', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata', 'Asia/Kathmandu'];
    const extra = ['Australia/Adelaide', 'America/St_Johns', 'Australia/Lord_Howe', 'Pacific/Chatham', 'UTC'];
    const clock = fc.integer({ min: 0, max: 96 }).map((q) => q * 15);
    const hhmm = (m: number): string =>
      m === 1440
        ? '24:00'
        : `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
    const rule = fc
      .tuple(fc.constantFrom(...WEEKDAYS), clock, clock)
      .filter(([, a, b]) => a !== b && Math.min(a, b) < 1440)
      .map(([day, a, b]) => ({ day, start: hhmm(Math.min(a, b)), end: hhmm(Math.max(a, b)) }));
    fc.assert(
      fc.property(
        fc.constantFrom(...zones, ...extra),
        fc.array(rule, { maxLength: 6 }),
        fc.integer({ min: 0, max: 364 }),
        fc.array(fc.integer({ min: 0, max: 3 * DAY - 1 }), { minLength: 20, maxLength: 20 }),
        (zone, weekly, dayOfYear, offsets) => {
          const start = Date.UTC(2026, 0, 1) + dayOfYear * DAY;
          const window = { start, end: start + 3 * DAY };
          const working = workingIntervals(withRules(zone, weekly), window);
          for (const o of offsets) {
            const at = start + o;
            const near = [at - 3 * HOUR, at + 3 * HOUR].map((x) => DateTime.fromMillis(x, { zone }).offset);
            const local = DateTime.fromMillis(at, { zone });
            if (near[0] !== local.offset || near[1] !== local.offset) continue;
            const minute = local.hour * 60 + local.minute;
            const day = WEEKDAYS[local.weekday - 1];
            const expected = weekly.some((r) => {
              const s = Number(r.start.slice(0, 2)) * 60 + Number(r.start.slice(3));
              const e = Number(r.end.slice(0, 2)) * 60 + Number(r.end.slice(3));
              return r.day === day && s <= minute && minute < e;
            });
            const actual = working.some((x) => x.start <= at && at < x.end);
            expect(actual, `${zone} ${local.toISO()}`).toBe(expected);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('zone arithmetic', () => {
  const zones = [
    'Europe/London',
    'America/New_York',
    'Australia/Sydney',
    'Asia/Kolkata',
    'Asia/Kathmandu',
    'Australia/Adelaide',
    'America/St_Johns',
    'Australia/Lord_Howe',
    'America/Santiago',
    'Africa/Casablanca',
    'Asia/Gaza',
  ];

  it('property: offsets agree with luxon, and wall times round-trip (earliest for repeated ones)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2036, 0, 1) }),
        (zone, at) => {
          expect(zoneOffset(zone, at)).toBe(DateTime.fromMillis(at, { zone }).offset);
          const wall = toWall(zone, at);
          const back = wallToInstant(zone, wall);
          expect(back <= at).toBe(true);
          expect(toWall(zone, back)).toBe(wall);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: cached offsets stay exact under scattered lookups around DST changes', () => {
    const changes = ['2026-03-08T07:00Z', '2026-03-29T01:00Z', '2026-04-04T16:00Z', '2026-10-03T16:00Z'].map(
      t,
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.constantFrom(...changes),
        fc.array(fc.integer({ min: -5 * DAY, max: 5 * DAY }), { minLength: 10, maxLength: 30 }),
        (zone, center, deltas) => {
          for (const d of deltas) {
            expect(zoneOffset(zone, center + d)).toBe(DateTime.fromMillis(center + d, { zone }).offset);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('locates a transition to the millisecond after learning both sides', () => {
    const zone = 'America/Chicago';
    const change = t('2026-11-01T07:00Z');
    expect(zoneOffset(zone, change - 2 * DAY)).toBe(-300);
    expect(zoneOffset(zone, change + DAY)).toBe(-360);
    expect(zoneOffset(zone, change - 1)).toBe(-300);
    expect(zoneOffset(zone, change)).toBe(-360);
  });

  it('localDayBounds finds local midnights', () => {
    expect(localDayBounds('America/New_York', t('2026-03-08T12:00Z'))).toEqual(
      span('2026-03-08T05:00Z', '2026-03-09T04:00Z'),
    );
    expect(localDayBounds('Asia/Kathmandu', t('2026-06-01T00:00Z'))).toEqual(
      span('2026-05-31T18:15Z', '2026-06-01T18:15Z'),
    );
  });
});

describe('validateSchedule', () => {
  const good = (): Record<string, unknown> => ({ ...DEFAULT_SCHEDULE('America/New_York') });

  it('accepts a full schedule with overrides', () => {
    const s = {
      ...good(),
      overrides: [
        { date: '2026-12-25', unavailable: true },
        { date: '2026-12-24', intervals: [{ start: '09:00', end: '12:00' }] },
      ],
      weekly: [{ day: 'sat', start: '20:00', end: '24:00' }],
      buffer_before_minutes: 10,
      buffer_after_minutes: 5,
      minimum_notice_minutes: 120,
      max_days_ahead: 30,
    };
    expect(validateSchedule(s)).toEqual({ ok: true, schedule: s });
  });

  it('reports each bad field under its path', () => {
    const result = validateSchedule({
      timezone: 'Mars/Olympus',
      weekly: [
        { day: 'mon', start: '9:00', end: '17:00' },
        { day: 'funday', start: '10:00', end: '09:00' },
        { day: 'tue', start: '24:00', end: '25:00', extra: 1 },
        'x',
      ],
      overrides: [
        { date: '2026-02-30', unavailable: true },
        { date: '2026-03-01', unavailable: false },
        { date: '2026-03-01', intervals: [{ start: '10:00', end: '10:00' }] },
        { date: '2026-03-02' },
      ],
      buffer_before_minutes: -5,
      buffer_after_minutes: 1.5,
      minimum_notice_minutes: 'soon',
      max_days_ahead: 0,
      colour: 'blue',
    });
    expect(result).toEqual({
      ok: false,
      errors: {
        timezone: 'must be a valid IANA time zone',
        'weekly.0.start': 'must be HH:MM',
        'weekly.1.day': 'must be one of mon, tue, wed, thu, fri, sat, sun',
        'weekly.1.end': 'must be after start',
        'weekly.2.extra': 'unknown field',
        'weekly.2.start': 'must be HH:MM',
        'weekly.2.end': 'must be HH:MM (or 24:00)',
        'weekly.3': 'must be an object',
        'overrides.0.date': 'must be a date YYYY-MM-DD',
        'overrides.1.unavailable': 'must be true',
        'overrides.2.date': 'duplicate date',
        'overrides.2.intervals.0.end': 'must be after start',
        'overrides.3': 'must have exactly one of intervals or unavailable',
        buffer_before_minutes: 'must be an integer from 0 to 1440',
        buffer_after_minutes: 'must be an integer from 0 to 1440',
        minimum_notice_minutes: 'must be an integer from 0 to 525600',
        max_days_ahead: 'must be an integer from 1 to 365',
        colour: 'unknown field',
      },
    });
  });

  it('requires every field and an object', () => {
    expect(validateSchedule(null)).toEqual({ ok: false, errors: { schedule: 'must be an object' } });
    expect(validateSchedule([])).toEqual({ ok: false, errors: { schedule: 'must be an object' } });
    const result = validateSchedule({});
    expect(result.ok).toBe(false);
    if (!result.ok) expect(Object.values(result.errors).every((m) => m === 'is required')).toBe(true);
    if (!result.ok) expect(Object.keys(result.errors)).toHaveLength(7);
  });

  it('rejects wrong container types', () => {
    const result = validateSchedule({ ...good(), weekly: {}, overrides: 'none', timezone: 5 });
    expect(result).toEqual({
      ok: false,
      errors: { weekly: 'must be an array', overrides: 'must be an array', timezone: 'must be a string' },
    });
  });
});
