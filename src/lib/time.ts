/**
 * Time units and ISO-8601 renderings: the one home for them. Every duration in the code base is epoch
 * milliseconds; every instant on the wire is an ISO-8601 UTC string.
 */

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
