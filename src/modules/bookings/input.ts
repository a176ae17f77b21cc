/**
 * Checks of booking input beyond the JSON schemas (docs/api.md#bookings): instants with offsets, end
 * after start, durations, e-mail (the strict variant: anonymous bookers type these), names, metadata
 * limits, answers to a link's questions. Problems are collected per field (platform/validation.ts
 * `Problems`) and thrown together as one 400.
 */
import { isIsoInstant, isStrictEmailAddress, isTimeZone, type Problems } from '../../platform/validation.js';
import type { BookingLink, LinkQuestion } from '../booking-links/api.js';
import { MINUTE } from '../../lib/time.js';

export const MIN_BOOKING_MINUTES = 5;
export const MAX_BOOKING_MINUTES = 1440;
export const DEFAULT_DURATION_MINUTES = 30;
export const METADATA_MAX_KEYS = 50;
export const METADATA_KEY_MAX = 40;
export const METADATA_VALUE_MAX = 500;
const PHONE = /^\+?[0-9 ().-]{5,32}$/;

/** An ISO 8601 instant with an offset (or Z), in ms; records a problem otherwise. */
export function instant(value: string | undefined, field: string, p: Problems): number | undefined {
  if (value === undefined) return undefined;
  const ms = isIsoInstant(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    p.add(field, 'must be an ISO 8601 timestamp with an offset, e.g. 2054-06-10T14:00:00Z');
    return undefined;
  }
  return ms;
}

export function email(value: string, field: string, p: Problems): string {
  const v = value.trim();
  if (v.length > 320 || !isStrictEmailAddress(v)) p.add(field, 'must be a valid e-mail address');
  return v;
}

export function text(value: string, field: string, p: Problems, max: number, required = true): string {
  const v = value.trim();
  if (required && v === '') p.add(field, 'must not be empty');
  if (v.length > max) p.add(field, `must be at most ${max} characters`);
  return v;
}

export function zone(value: string | undefined, field: string, p: Problems): string | null {
  if (value === undefined) return null;
  if (!isTimeZone(value)) p.add(field, 'must be a valid IANA time zone');
  return value;
}

export function metadata(value: Record<string, unknown> | undefined, p: Problems): Record<string, string> {
  if (value === undefined) return {};
  const keys = Object.keys(value);
  if (keys.length > METADATA_MAX_KEYS) p.add('metadata', `must have at most ${METADATA_MAX_KEYS} keys`);
  const out: Record<string, string> = {};
  for (const k of keys) {
    const v = value[k];
    if (k.length === 0 || k.length > METADATA_KEY_MAX) {
      p.add(`metadata.${k.slice(0, 60)}`, `keys must be 1 to ${METADATA_KEY_MAX} characters`);
    } else if (typeof v !== 'string') {
      p.add(`metadata.${k}`, 'must be a string');
    } else if (v.length > METADATA_VALUE_MAX) {
      p.add(`metadata.${k}`, `must be at most ${METADATA_VALUE_MAX} characters`);
    } else out[k] = v;
  }
  return out;
}

/**
 * The booked interval from start_time and end_time or duration_minutes (default: the link's default
 * duration, else 30). A link admits only the durations it offers.
 */
export function interval(
  body: { start_time: string; end_time?: string; duration_minutes?: number },
  link: BookingLink | null,
  p: Problems,
): { start: number; end: number } | undefined {
  const start = instant(body.start_time, 'start_time', p);
  const end = instant(body.end_time, 'end_time', p);
  if (body.end_time !== undefined && body.duration_minutes !== undefined) {
    p.add('end_time', 'give end_time or duration_minutes, not both');
    return undefined;
  }
  if (start === undefined || (body.end_time !== undefined && end === undefined)) return undefined;
  let minutes: number;
  if (end !== undefined) {
    if (end <= start) {
      p.add('end_time', 'must be after start_time');
      return undefined;
    }
    minutes = (end - start) / MINUTE;
  } else {
    minutes = body.duration_minutes ?? link?.defaultDuration ?? DEFAULT_DURATION_MINUTES;
  }
  const field = end !== undefined ? 'end_time' : 'duration_minutes';
  if (!(Number.isInteger(minutes) && minutes >= MIN_BOOKING_MINUTES && minutes <= MAX_BOOKING_MINUTES)) {
    p.add(
      field,
      `the booking must last a whole number of minutes from ${MIN_BOOKING_MINUTES} to ${MAX_BOOKING_MINUTES}`,
    );
    return undefined;
  }
  if (link && !link.durations.includes(minutes)) {
    p.add(field, `this booking link offers ${link.durations.join(', ')} minutes`);
    return undefined;
  }
  return { start, end: start + minutes * MINUTE };
}

/** Answers to a link's questions: required ones present, each of its type, no unknown ones. */
export function answers(
  value: Record<string, unknown> | undefined,
  questions: readonly LinkQuestion[],
  p: Problems,
): Record<string, string | boolean> {
  const given = value ?? {};
  const out: Record<string, string | boolean> = {};
  const byId = new Map(questions.map((q) => [q.id, q]));
  for (const k of Object.keys(given)) {
    if (!byId.has(k)) p.add(`answers.${k.slice(0, 60)}`, 'is not a question of this booking link');
  }
  for (const q of questions) {
    const field = `answers.${q.id}`;
    const v = given[q.id];
    const blank = v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
    if (blank) {
      if (q.required) p.add(field, 'is required');
      continue;
    }
    if (q.type === 'checkbox') {
      if (typeof v !== 'boolean') p.add(field, 'must be true or false');
      else if (q.required && v !== true) p.add(field, 'must be checked');
      else out[q.id] = v;
      continue;
    }
    if (typeof v !== 'string') {
      p.add(field, 'must be a string');
      continue;
    }
    const s = v.trim();
    if (s.length > 5000) p.add(field, 'must be at most 5000 characters');
    else if (q.type === 'email' && !isStrictEmailAddress(s)) p.add(field, 'must be a valid e-mail address');
    else if (q.type === 'phone' && !PHONE.test(s)) p.add(field, 'must be a phone number');
    else if (q.type === 'select' && !(q.options ?? []).includes(s)) {
      p.add(field, `must be one of: ${(q.options ?? []).join(', ')}`);
    } else if ((q.type === 'text' || q.type === 'phone') && s.length > 500) {
      p.add(field, 'must be at most 500 characters');
    } else out[q.id] = s;
  }
  return out;
}
