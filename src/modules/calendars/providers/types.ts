/** Shared types and helpers for the calendar provider clients. No database, no global state. */

import { clip, type Interval, normalizedCopy } from '../../../lib/intervals.js';

/**
 * The HTTP function every client uses. Callers inject it (production passes an SSRF-guarded fetch
 * with timeouts; tests pass globalThis.fetch), so nothing here reaches the network on its own.
 */
export type HttpFetch = (url: string, init?: RequestInit) => Promise<Response>;

/** A busy occurrence with its event's title (readers allowed to see details). */
export interface TitledInterval extends Interval {
  title: string;
}

/** A calendar that could not be read while the others could (unknown id, no access, ...). */
export interface CalendarError {
  calendarId: string;
  reason: string;
}

/** Busy time for a set of calendars: merged, sorted, non-overlapping and clipped to the window. */
export interface BusyResult {
  busy: Interval[];
  errors: CalendarError[];
  /** With `withTitles`: every busy occurrence with its title (clipped, unmerged). */
  events?: TitledInterval[];
}

/** Titled occurrences clipped to the window (empty ones dropped), sorted by start; never merged. */
export function clipTitled(events: readonly TitledInterval[], window: Interval): TitledInterval[] {
  const out: TitledInterval[] = [];
  for (const x of events) {
    const start = Math.max(x.start, window.start);
    const end = Math.min(x.end, window.end);
    if (end > start) out.push({ start, end, title: x.title });
  }
  return out.sort((a, b) => a.start - b.start || a.end - b.end);
}

/**
 * One BusyResult from per-calendar answers (a calendar's busy occurrences, or its error): merged and
 * clipped busy time, the errors, and with `withTitles` the titled occurrences themselves.
 */
export function busyResultOf(
  perCalendar: readonly (TitledInterval[] | CalendarError)[],
  window: Interval,
  withTitles: boolean,
): BusyResult {
  const busy: TitledInterval[] = [];
  const errors: CalendarError[] = [];
  for (const r of perCalendar) {
    if (Array.isArray(r)) busy.push(...r);
    else errors.push(r);
  }
  const result: BusyResult = { busy: clip(normalizedCopy(busy), window), errors };
  if (withTitles) result.events = clipTitled(busy, window);
  return result;
}

/** Splits [start, end) into consecutive pieces no longer than maxMs. */
export function splitWindow(window: Interval, maxMs: number): Interval[] {
  if (!(maxMs > 0)) throw new RangeError('maxMs must be positive');
  const out: Interval[] = [];
  for (let s = window.start; s < window.end; s += maxMs) {
    out.push({ start: s, end: Math.min(s + maxMs, window.end) });
  }
  return out;
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  if (!(size > 0)) throw new RangeError('size must be positive');
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Runs tasks with at most `limit` in flight; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, () => worker()));
  return results;
}

export function assertWindow(window: Interval): void {
  if (!Number.isFinite(window.start) || !Number.isFinite(window.end) || window.end <= window.start) {
    throw new RangeError('window must have finite start < end (epoch ms)');
  }
}

/** Fails fast on a non-absolute or non-http(s) base URL taken from configuration. */
export function trimBase(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new TypeError(`unsupported URL scheme: ${parsed.protocol}`);
  }
  return url.replace(/\/+$/, '');
}
