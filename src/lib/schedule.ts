/**
 * Working-hours schedules (docs/api.md#hosts-and-schedules) and the time-zone arithmetic behind them.
 *
 * Local wall-clock times are resolved to instants like Temporal's 'compatible' disambiguation: a time
 * that does not exist (spring-forward gap) is shifted forward by the length of the gap, as luxon does;
 * a time that occurs twice (fall-back) takes the earlier instant. Unlike luxon's `fromObject`, whose
 * choice for repeated times depends on the current date, this is deterministic.
 */
import { IANAZone } from 'luxon';
import { clip, type Interval, normalize } from './intervals.js';
import { DAY, MINUTE } from './time.js';

/** A day of the week as used in weekly rules. */
export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

/** A local time range on one day; 'HH:MM', end may be '24:00' (end of day). */
export interface LocalTimeRange {
  start: string;
  end: string;
}

/** A recurring weekly working-hours rule. */
export interface WeeklyRule extends LocalTimeRange {
  day: Weekday;
}

/** Replaces the weekly rules on one local date: other hours, or none. */
export type ScheduleOverride =
  | { date: string; intervals: LocalTimeRange[] }
  | { date: string; unavailable: true };

/** A principal's working-hours schedule. */
export interface Schedule {
  timezone: string;
  weekly: WeeklyRule[];
  overrides: ScheduleOverride[];
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  minimum_notice_minutes: number;
  max_days_ahead: number;
}

/** Result of validateSchedule: field paths (e.g. 'weekly.0.start') mapped to messages. */
export type ScheduleValidation =
  | { ok: true; schedule: Schedule }
  | { ok: false; errors: Record<string, string> };

/** Weekdays in ISO order (Monday first). */
export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** Upper bounds enforced by validateSchedule. */
export const SCHEDULE_LIMITS = {
  maxWeeklyRules: 100,
  maxOverrides: 1000,
  maxIntervalsPerOverride: 48,
  maxBufferMinutes: 1440,
  maxNoticeMinutes: 525_600,
  maxDaysAhead: 365,
} as const;

/** Probe distance for offset spans; tzdata 2000-2045 has no two transitions within 4 days of each other. */
const SPAN_STEP = 3 * DAY;
/** Spans remembered per zone before the cache starts afresh. */
const MAX_SPANS = 256;
const CLOCK = /^([01]\d|2[0-3]):([0-5]\d)$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The default schedule: Monday to Friday 09:00-17:00 in `timezone`, no buffers or notice, 60 days. */
export function DEFAULT_SCHEDULE(timezone: string): Schedule {
  return {
    timezone,
    weekly: WEEKDAYS.slice(0, 5).map((day) => ({ day, start: '09:00', end: '17:00' })),
    overrides: [],
    buffer_before_minutes: 0,
    buffer_after_minutes: 0,
    minimum_notice_minutes: 0,
    max_days_ahead: 60,
  };
}

/** Minutes after midnight of 'HH:MM' ('24:00' allowed when `allowEndOfDay`), or null when malformed. */
export function parseClock(value: string, allowEndOfDay = false): number | null {
  if (allowEndOfDay && value === '24:00') return 1440;
  const m = CLOCK.exec(value);
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
}

/** Days since the epoch of a 'YYYY-MM-DD' calendar date, or null when malformed or not a real date. */
export function parseDate(value: string): number | null {
  const m = DATE.exec(value);
  if (!m) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return ms / DAY;
}

/** Concrete UTC working intervals of `schedule` inside `window`, normalized. DST-correct. */
export function workingIntervals(schedule: Schedule, window: Interval): Interval[] {
  if (!(window.start < window.end)) return [];
  const zone = schedule.timezone;
  const byWeekday = rulesByWeekday(schedule.weekly);
  const overrides = overridesByDay(schedule.overrides);
  // Start a day early so that a rule shifted across midnight by a transition is not missed.
  const firstDay = Math.floor(toWall(zone, window.start) / DAY) - 1;
  const lastDay = Math.floor(toWall(zone, window.end - 1) / DAY);
  const out: Interval[] = [];
  for (let day = firstDay; day <= lastDay; day++) {
    const override = overrides.get(day);
    const ranges = override === undefined ? byWeekday[(((day + 3) % 7) + 7) % 7]! : override;
    const dayWall = day * DAY;
    for (let i = 0; i < ranges.length; i += 2) {
      const start = wallToInstant(zone, dayWall + ranges[i]! * MINUTE);
      const end = wallToInstant(zone, dayWall + ranges[i + 1]! * MINUTE);
      if (start < end && end > window.start && start < window.end) out.push({ start, end });
    }
  }
  return clip(normalize(out), window);
}

/** Checks an untrusted schedule body; every problem is reported under its field path. */
export function validateSchedule(input: unknown): ScheduleValidation {
  const errors: Record<string, string> = {};
  if (!isRecord(input)) return { ok: false, errors: { schedule: 'must be an object' } };
  const allowed = [
    'timezone',
    'weekly',
    'overrides',
    'buffer_before_minutes',
    'buffer_after_minutes',
    'minimum_notice_minutes',
    'max_days_ahead',
  ];
  rejectUnknown(input, allowed, '', errors);

  const tz = input.timezone;
  if (tz === undefined) errors.timezone = 'is required';
  else if (typeof tz !== 'string') errors.timezone = 'must be a string';
  else if (!IANAZone.isValidZone(tz)) errors.timezone = 'must be a valid IANA time zone';

  validateWeekly(input.weekly, errors);
  validateOverrides(input.overrides, errors);
  const L = SCHEDULE_LIMITS;
  checkInteger(input, 'buffer_before_minutes', 0, L.maxBufferMinutes, errors);
  checkInteger(input, 'buffer_after_minutes', 0, L.maxBufferMinutes, errors);
  checkInteger(input, 'minimum_notice_minutes', 0, L.maxNoticeMinutes, errors);
  checkInteger(input, 'max_days_ahead', 1, L.maxDaysAhead, errors);

  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, schedule: input as unknown as Schedule };
}

/** Offset of `zone` from UTC in minutes at instant `ts` (throws RangeError for an unknown zone). */
export function zoneOffset(zone: string, ts: number): number {
  return offsetCache(zone).at(ts);
}

/** Local wall-clock time of instant `ts` in `zone`, as milliseconds with the wall fields read as UTC. */
export function toWall(zone: string, ts: number): number {
  return ts + zoneOffset(zone, ts) * MINUTE;
}

/** The instant of a wall-clock time in `zone`: gaps shift forward, repeated times take the earlier. */
export function wallToInstant(zone: string, wallMs: number): number {
  const cache = offsetCache(zone);
  const before = cache.at(wallMs - DAY);
  const after = cache.at(wallMs + DAY);
  if (before === after) return wallMs - before * MINUTE;
  const t1 = wallMs - before * MINUTE;
  const t2 = wallMs - after * MINUTE;
  const ok1 = cache.at(t1) === before;
  const ok2 = cache.at(t2) === after;
  if (ok1 && ok2) return Math.min(t1, t2);
  if (ok1) return t1;
  if (ok2) return t2;
  // In a gap: read the wall time with the offset in force before it, which lands after the gap.
  return t1;
}

/** Start of the local day containing instant `ts` in `zone`, and the start of the next one. */
export function localDayBounds(zone: string, ts: number): Interval {
  const dayWall = Math.floor(toWall(zone, ts) / DAY) * DAY;
  return { start: wallToInstant(zone, dayWall), end: wallToInstant(zone, dayWall + DAY) };
}

/** A span of instants [start, end] (inclusive) over which a zone's offset is constant. */
interface OffsetSpan {
  start: number;
  end: number;
  offset: number;
}

/**
 * Offsets of one zone: an Intl formatter plus the sorted, disjoint spans learnt so far. Two probes
 * SPAN_STEP apart with equal offsets are taken to bound a constant span; two spans of different offsets
 * less than SPAN_STEP apart are split at the exact transition by bisection. Repeated queries over the
 * same dates therefore cost a binary search, and a cold 30-day walk costs about two Intl calls per 3 days.
 */
class OffsetCache {
  private readonly dtf: Intl.DateTimeFormat;
  private readonly spans: OffsetSpan[] = [];
  private last: OffsetSpan | undefined;

  constructor(zone: string) {
    this.dtf = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  /** Offset in minutes at `ts`. */
  at(ts: number): number {
    const last = this.last;
    if (last !== undefined && ts >= last.start && ts <= last.end) return last.offset;
    const i = this.indexAtOrBefore(ts);
    const span = i >= 0 ? this.spans[i]! : undefined;
    if (span !== undefined && ts <= span.end) {
      this.last = span;
      return span.offset;
    }
    return this.learn(ts, i);
  }

  /** Index of the last span starting at or before `ts`, or -1. */
  private indexAtOrBefore(ts: number): number {
    let lo = 0;
    let hi = this.spans.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.spans[mid]!.start <= ts) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  /** Asks Intl about `ts` (and SPAN_STEP later), records the span, and joins it to its neighbours. */
  private learn(ts: number, before: number): number {
    let i = before;
    if (this.spans.length >= MAX_SPANS) {
      this.spans.length = 0;
      i = -1;
    }
    const offset = this.raw(ts);
    const ahead = ts + SPAN_STEP;
    let span: OffsetSpan = { start: ts, end: this.raw(ahead) === offset ? ahead : ts, offset };
    const k = i + 1;
    this.spans.splice(k, 0, span);
    while (k + 1 < this.spans.length) {
      const right = this.spans[k + 1]!;
      if (right.start - span.end > SPAN_STEP) break;
      if (right.offset === span.offset) {
        if (right.end > span.end) span.end = right.end;
        this.spans.splice(k + 1, 1);
        continue;
      }
      if (span.end >= right.start) span.end = right.start - 1;
      const t = this.transition(span.end, span.offset, right.start);
      span.end = t - 1;
      right.start = t;
      break;
    }
    if (k > 0) {
      const left = this.spans[k - 1]!;
      if (span.start - left.end <= SPAN_STEP) {
        if (left.offset === span.offset) {
          if (span.end > left.end) left.end = span.end;
          this.spans.splice(k, 1);
          span = left;
        } else {
          const t = this.transition(left.end, left.offset, span.start);
          left.end = t - 1;
          span.start = t;
        }
      }
    }
    this.last = span;
    return offset;
  }

  /** First instant in (from, to] whose offset is not `offset` (the offset at `from`), by bisection. */
  private transition(from: number, offset: number, to: number): number {
    let lo = from;
    let hi = to;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (this.raw(mid) === offset) lo = mid;
      else hi = mid;
    }
    return hi;
  }

  /** Offset in minutes at `ts` straight from Intl. */
  private raw(ts: number): number {
    const text = this.dtf.format(ts);
    // en-US with h23: "M/D/YYYY, HH:MM:SS"
    const s1 = text.indexOf('/');
    const s2 = text.indexOf('/', s1 + 1);
    const comma = text.indexOf(',', s2);
    const month = Number(text.slice(0, s1));
    const day = Number(text.slice(s1 + 1, s2));
    const year = Number(text.slice(s2 + 1, comma));
    const hour = Number(text.slice(comma + 2, comma + 4)) % 24;
    const minute = Number(text.slice(comma + 5, comma + 7));
    const second = Number(text.slice(comma + 8, comma + 10));
    const wall = Date.UTC(year, month - 1, day, hour, minute, second);
    const whole = ts - (((ts % 1000) + 1000) % 1000);
    return (wall - whole) / MINUTE;
  }
}

const offsetCaches = new Map<string, OffsetCache>();

/** The shared offset cache of one zone. */
function offsetCache(zone: string): OffsetCache {
  let cache = offsetCaches.get(zone);
  if (cache === undefined) {
    cache = new OffsetCache(zone);
    if (offsetCaches.size >= 1000) offsetCaches.clear();
    offsetCaches.set(zone, cache);
  }
  return cache;
}

/** Weekly rules as flat [startMin, endMin, ...] lists indexed by weekday, 0 = Monday. */
function rulesByWeekday(weekly: readonly WeeklyRule[]): number[][] {
  const out: number[][] = [[], [], [], [], [], [], []];
  for (const rule of weekly) {
    const idx = WEEKDAYS.indexOf(rule.day);
    const start = parseClock(rule.start);
    const end = parseClock(rule.end, true);
    if (idx < 0 || start === null || end === null || end <= start) continue;
    out[idx]!.push(start, end);
  }
  return out;
}

/** Overrides as flat [startMin, endMin, ...] lists keyed by days since the epoch; [] = unavailable. */
function overridesByDay(overrides: readonly ScheduleOverride[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const o of overrides) {
    const day = parseDate(o.date);
    if (day === null) continue;
    const ranges: number[] = [];
    if ('intervals' in o) {
      for (const r of o.intervals) {
        const start = parseClock(r.start);
        const end = parseClock(r.end, true);
        if (start !== null && end !== null && start < end) ranges.push(start, end);
      }
    }
    out.set(day, ranges);
  }
  return out;
}

/** Validates the weekly rules into `errors`. */
function validateWeekly(weekly: unknown, errors: Record<string, string>): void {
  if (weekly === undefined) {
    errors.weekly = 'is required';
    return;
  }
  if (!Array.isArray(weekly)) {
    errors.weekly = 'must be an array';
    return;
  }
  if (weekly.length > SCHEDULE_LIMITS.maxWeeklyRules) {
    errors.weekly = `must have at most ${SCHEDULE_LIMITS.maxWeeklyRules} entries`;
    return;
  }
  weekly.forEach((rule: unknown, i) => {
    const path = `weekly.${i}`;
    if (!isRecord(rule)) {
      errors[path] = 'must be an object';
      return;
    }
    rejectUnknown(rule, ['day', 'start', 'end'], path, errors);
    if (typeof rule.day !== 'string' || !(WEEKDAYS as readonly string[]).includes(rule.day)) {
      errors[`${path}.day`] = `must be one of ${WEEKDAYS.join(', ')}`;
    }
    validateRange(rule, path, errors);
  });
}

/** Validates the date overrides into `errors`. */
function validateOverrides(overrides: unknown, errors: Record<string, string>): void {
  if (overrides === undefined) {
    errors.overrides = 'is required';
    return;
  }
  if (!Array.isArray(overrides)) {
    errors.overrides = 'must be an array';
    return;
  }
  if (overrides.length > SCHEDULE_LIMITS.maxOverrides) {
    errors.overrides = `must have at most ${SCHEDULE_LIMITS.maxOverrides} entries`;
    return;
  }
  const seen = new Set<string>();
  overrides.forEach((o: unknown, i) => {
    const path = `overrides.${i}`;
    if (!isRecord(o)) {
      errors[path] = 'must be an object';
      return;
    }
    rejectUnknown(o, ['date', 'intervals', 'unavailable'], path, errors);
    if (typeof o.date !== 'string' || parseDate(o.date) === null) {
      errors[`${path}.date`] = 'must be a date YYYY-MM-DD';
    } else if (seen.has(o.date)) {
      errors[`${path}.date`] = 'duplicate date';
    } else {
      seen.add(o.date);
    }
    const hasIntervals = o.intervals !== undefined;
    const hasUnavailable = o.unavailable !== undefined;
    if (hasIntervals === hasUnavailable) {
      errors[path] = 'must have exactly one of intervals or unavailable';
      return;
    }
    if (hasUnavailable) {
      if (o.unavailable !== true) errors[`${path}.unavailable`] = 'must be true';
      return;
    }
    if (!Array.isArray(o.intervals)) {
      errors[`${path}.intervals`] = 'must be an array';
      return;
    }
    if (o.intervals.length > SCHEDULE_LIMITS.maxIntervalsPerOverride) {
      errors[`${path}.intervals`] = `must have at most ${SCHEDULE_LIMITS.maxIntervalsPerOverride} entries`;
      return;
    }
    o.intervals.forEach((r: unknown, j) => {
      const rpath = `${path}.intervals.${j}`;
      if (!isRecord(r)) {
        errors[rpath] = 'must be an object';
        return;
      }
      rejectUnknown(r, ['start', 'end'], rpath, errors);
      validateRange(r, rpath, errors);
    });
  });
}

/** Validates `start` and `end` of a local time range into `errors`. */
function validateRange(r: Record<string, unknown>, path: string, errors: Record<string, string>): void {
  const start = typeof r.start === 'string' ? parseClock(r.start) : null;
  const end = typeof r.end === 'string' ? parseClock(r.end, true) : null;
  if (start === null) errors[`${path}.start`] = 'must be HH:MM';
  if (end === null) errors[`${path}.end`] = 'must be HH:MM (or 24:00)';
  if (start !== null && end !== null && end <= start) errors[`${path}.end`] = 'must be after start';
}

/** Records an error unless `input[key]` is an integer in [min, max]. */
function checkInteger(
  input: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
  errors: Record<string, string>,
): void {
  const v = input[key];
  if (v === undefined) errors[key] = 'is required';
  else if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    errors[key] = `must be an integer from ${min} to ${max}`;
  }
}

/** Records 'unknown field' for every key of `obj` not in `allowed`. */
function rejectUnknown(
  obj: Record<string, unknown>,
  allowed: readonly string[],
  path: string,
  errors: Record<string, string>,
): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) errors[path ? `${path}.${key}` : key] = 'unknown field';
  }
}

/** True for a plain non-null, non-array object. */
function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
