/**
 * Time units and ISO-8601 renderings: the one home for them. Every duration in the code base is epoch
 * milliseconds; every instant on the wire is an ISO-8601 UTC string, except where an answer is asked
 * for with a zone's offsets (`isoInZone`: the MCP tools' answers, docs/mcp.md#answers).
 */
import { IANAZone } from 'luxon';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** An instant as `Date#toISOString` writes it ('2026-06-01T09:00:00.000Z'). */
export function iso(d: Date | string | number): string {
  return new Date(d).toISOString();
}

/** `iso` that passes `null` through (nullable columns). */
export function isoOrNull(d: Date | string | null): string | null {
  return d === null ? null : new Date(d).toISOString();
}

/** Years 0000-9999, where toISOString has the 24-character form. */
const ISO_MAX = Date.UTC(10000, 0, 1);
const PAD2 = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
/** 'HH:MM:00.000Z' for every minute of a day. */
const MINUTES = Array.from({ length: 1440 }, (_, m) => `${PAD2[Math.floor(m / 60)]}:${PAD2[m % 60]}:00.000Z`);
let isoDay = Number.NaN;
let isoDayPrefix = '';

/** `new Date(ms).toISOString()`, several times faster for whole minutes on the same UTC day. */
export function isoUtc(ms: number): string {
  if (!(ms >= 0 && ms < ISO_MAX) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY);
  if (day !== isoDay) {
    isoDay = day;
    isoDayPrefix = new Date(day * DAY).toISOString().slice(0, 11);
  }
  const r = ms - day * DAY;
  if (r % MINUTE === 0) return isoDayPrefix + MINUTES[r / MINUTE]!;
  return new Date(ms).toISOString();
}

/** RFC 3339 UTC without the milliseconds when they are zero ('2026-06-01T09:00:00Z'): what calendar APIs are sent. */
export function isoUtcShort(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

const QUARTER_MS = 15 * 60_000;
/** 10000-01-01T00:00:00Z: past it (and before 1970) `toISOString` writes other shapes; those take the slow way. */
const FAST_END_MS = 253_402_300_800_000;

/** A zone's offsets: per UTC day when the day has one offset throughout, else per quarter hour. */
interface ZoneOffsets {
  zone: IANAZone;
  /** UTC day → the day's one offset (minutes), or NaN when it changes within the day. */
  days: Map<number, number>;
  quarters: Map<number, number>;
  /** The day looked up last and its offset: an answer's times come in order, mostly the same day. */
  lastDay: number;
  lastOffset: number;
}
const offsets = new Map<string, ZoneOffsets>();

function zoneOffsets(zone: string): ZoneOffsets {
  let z = offsets.get(zone);
  if (!z || z.days.size + z.quarters.size > 50_000) {
    z = {
      zone: IANAZone.create(zone),
      days: new Map(),
      quarters: new Map(),
      lastDay: Number.NaN,
      lastOffset: 0,
    };
    offsets.set(zone, z);
  }
  return z;
}

/**
 * The zone's UTC offset (minutes) at `ms`, as the zone has it at the start of `ms`'s quarter hour
 * (every zone's offset changes only at a quarter hour). Worked out once per UTC day: a day whose
 * first and last quarters have the same offset has it throughout (no zone changes twice within a
 * day and back); a day with a change in it (a DST change) is worked out per quarter.
 */
export function offsetAt(zone: string, ms: number): number {
  const z = zoneOffsets(zone);
  const day = Math.floor(ms / DAY);
  if (day === z.lastDay) return z.lastOffset;
  let off = z.days.get(day);
  if (off === undefined) {
    const first = z.zone.offset(day * DAY);
    off = first === z.zone.offset(day * DAY + DAY - QUARTER_MS) ? first : Number.NaN;
    z.days.set(day, off);
  }
  if (!Number.isNaN(off)) {
    z.lastDay = day;
    z.lastOffset = off;
    return off;
  }
  const q = Math.floor(ms / QUARTER_MS);
  let qOff = z.quarters.get(q);
  if (qOff === undefined) {
    qOff = z.zone.offset(q * QUARTER_MS);
    z.quarters.set(q, qOff);
  }
  return qOff;
}

const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
/** Local day number → `YYYY-MM-DD` (an answer's times fall on few days). */
const dates = new Map<number, string>();
/** Offset (minutes) → `Z` or `±hh:mm`. */
const suffixes = new Map<number, string>();

function dateOf(day: number): string {
  let d = dates.get(day);
  if (d === undefined) {
    d = new Date(day * DAY).toISOString().slice(0, 10);
    if (dates.size > 20_000) dates.clear();
    dates.set(day, d);
  }
  return d;
}

function suffixOf(off: number): string {
  let s = suffixes.get(off);
  if (s === undefined) {
    const abs = Math.abs(off);
    s =
      off === 0
        ? 'Z'
        : `${off < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
    suffixes.set(off, s);
  }
  return s;
}

/** The per-instant way (`Date#toISOString` on the shifted instant), for odd cases. */
function isoInZoneSlow(ms: number, off: number): string {
  const local = new Date(ms + off * 60_000)
    .toISOString()
    .slice(0, -1)
    .replace(/\.000$/, '');
  if (off === 0) return `${local}Z`;
  const abs = Math.abs(off);
  return `${local}${off < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/**
 * `ms` as ISO 8601 with the zone's offset there (`2026-06-10T16:00:00+02:00`), with milliseconds only
 * when there are any (`…:00.250+02:00`): shorter for an agent to read, and a month of slots is a
 * tenth fewer bytes.
 */
export function isoInZone(ms: number, zone: string): string {
  const off = offsetAt(zone, ms);
  const local = ms + off * 60_000;
  // Whole milliseconds and minutes between 1970 and 9999: the date from a per-day table, the time
  // by arithmetic (the same string `toISOString` writes, without a Date per instant).
  if (!(local >= 0 && local < FAST_END_MS && Number.isInteger(local) && Number.isInteger(off))) {
    return isoInZoneSlow(ms, off);
  }
  const day = Math.floor(local / DAY);
  let rest = local - day * DAY;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const millis = rest - s * 1000;
  return `${dateOf(day)}T${TWO_DIGITS[h]}:${TWO_DIGITS[m]}:${TWO_DIGITS[s]}${millis === 0 ? '' : `.${THREE_DIGITS[millis]}`}${suffixOf(off)}`;
}
