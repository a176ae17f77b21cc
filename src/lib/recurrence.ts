/**
 * Recurring series (docs/api.md#recurring-series; docs/design.md#series-and-seats): the occurrences
 * of a rule, by wall-clock arithmetic in the series' zone, and the RFC 5545 RRULE that says the same
 * to calendar clients. Daily and weekly add local days; monthly keeps the day of the month and skips
 * a month without it (as RFC 5545 does, so the invite and the stored occurrences agree). A local time
 * in a spring-forward gap moves forward by the gap; an ambiguous one takes the first instant.
 */
import type { Interval } from './intervals.js';
import { toWall, wallToInstant } from './schedule.js';
import { DAY } from './time.js';

export type Frequency = 'daily' | 'weekly' | 'monthly';

export interface RecurrenceRule {
  frequency: Frequency;
  /** Every how many days, weeks or months. */
  interval: number;
  /** How many occurrences, the first included. */
  count: number;
  /** The IANA zone whose wall-clock time every occurrence keeps. */
  timezone: string;
}

/** Months looked at before a monthly rule gives up finding `count` dates (the 31st: 7 of 12 months). */
const MAX_MONTHS = 52 * 4 * 2;

/** The occurrences of `rule` from `first` (itself the first), each as long as `first`. */
export function occurrences(first: Interval, rule: RecurrenceRule): Interval[] {
  const length = first.end - first.start;
  const wall = toWall(rule.timezone, first.start);
  const out: Interval[] = [];
  const at = (w: number) => {
    const start = wallToInstant(rule.timezone, w);
    out.push({ start, end: start + length });
  };
  if (rule.frequency !== 'monthly') {
    const step = (rule.frequency === 'daily' ? 1 : 7) * rule.interval * DAY;
    for (let i = 0; i < rule.count; i++) at(wall + i * step);
    return out;
  }
  const d = new Date(wall);
  const day = d.getUTCDate();
  const timeOfDay = wall - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), day);
  for (let m = 0; out.length < rule.count && m <= MAX_MONTHS; m += rule.interval) {
    const date = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + m, day);
    // A month without this day (the 31st in April) rolls into the next month: skipped.
    if (new Date(date).getUTCDate() !== day) continue;
    at(date + timeOfDay);
  }
  return out;
}

/** The RRULE value of `rule` (without the `RRULE:` name). */
export function rrule(rule: Pick<RecurrenceRule, 'frequency' | 'interval' | 'count'>): string {
  return `FREQ=${rule.frequency.toUpperCase()};INTERVAL=${rule.interval};COUNT=${rule.count}`;
}
