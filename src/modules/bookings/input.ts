/**
 * Checks of booking input that the route schemas (schemas.ts, which own every static limit: lengths,
 * e-mail and zone formats, metadata, the duration's range) cannot make: instants parsed to ms, end after
 * start, a duration the link offers, answers to a link's questions, and what a creating request asks
 * for as the write path takes it. Problems are collected per field (platform/validation.ts `Problems`)
 * and thrown together as one 400.
 */
import type { Static } from '@sinclair/typebox';
import type { Interval } from '../../lib/intervals.js';
import type { RecurrenceRule } from '../../lib/recurrence.js';
import { MINUTE } from '../../lib/time.js';
import { instant, isStrictEmailAddress, type Problems } from '../../platform/validation.js';
import type { BookingLink, LinkQuestion } from '../booking-links/api.js';
import { BOOKING_LIMITS, type PublicCreateBody } from './schemas.js';

export const DEFAULT_DURATION_MINUTES = 30;
const PHONE = /^\+?[0-9 ().-]{5,32}$/;

/** An ISO 8601 instant with an offset (or Z), in ms (platform/validation.ts). */
export { instant };

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
  // duration_minutes is in range by the schema; an end_time's distance is known only here.
  if (end !== undefined && !wholeBookingMinutes(minutes, p)) return undefined;
  if (link && !link.durations.includes(minutes)) {
    p.add(field, `this booking link offers ${link.durations.join(', ')} minutes`);
    return undefined;
  }
  return { start, end: start + minutes * MINUTE };
}

/**
 * Whether `minutes` (an end_time's distance from start_time) is a booking's length: whole, within the
 * schema's duration range; records an end_time problem otherwise.
 */
export function wholeBookingMinutes(minutes: number, p: Problems): boolean {
  const { minMinutes, maxMinutes } = BOOKING_LIMITS;
  if (Number.isInteger(minutes) && minutes >= minMinutes && minutes <= maxMinutes) return true;
  p.add('end_time', `the booking must last a whole number of minutes from ${minMinutes} to ${maxMinutes}`);
  return false;
}

/**
 * What a creating request asks for, after the surface-specific parts (who, which link): the slot, the
 * customer and what they wrote, trimmed (the schema limited their lengths), and the answers to the
 * link's questions.
 */
export function bookingFields(body: Static<typeof PublicCreateBody>, link: BookingLink | null, p: Problems) {
  const slot = interval(body, link, p);
  const customer = {
    email: body.customer_email.trim(),
    name: body.customer_name.trim(),
    timezone: body.customer_timezone ?? null,
  };
  const notes = body.notes?.trim() || null;
  const metadata: Record<string, string> = body.metadata ?? {};
  const given = link
    ? answers(body.answers, link.questions, p)
    : (() => {
        if (body.answers !== undefined && Object.keys(body.answers).length > 0) {
          p.add('answers', 'are only taken for bookings through a booking link');
        }
        return {};
      })();
  return {
    slot: slot as Interval,
    customer,
    notes,
    metadata,
    answers: given,
    guests: guestsOf(body.guests, customer.email, p),
  };
}

/**
 * The guests' addresses, trimmed and lowercased: each a valid address, distinct, not the customer's
 * (the schema limited how many and how long).
 */
export function guestsOf(given: readonly string[] | undefined, customerEmail: string, p: Problems): string[] {
  const out: string[] = [];
  const customer = customerEmail.trim().toLowerCase();
  for (const [i, raw] of (given ?? []).entries()) {
    const g = raw.trim().toLowerCase();
    if (!isStrictEmailAddress(g)) p.add(`guests.${i}`, 'must be a valid e-mail address');
    else if (g === customer) p.add(`guests.${i}`, 'is the customer’s own address');
    else if (out.includes(g)) p.add(`guests.${i}`, 'is given twice');
    else out.push(g);
  }
  return out;
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
    if (q.type === 'email' && !isStrictEmailAddress(s)) p.add(field, 'must be a valid e-mail address');
    else if (q.type === 'phone' && !PHONE.test(s)) p.add(field, 'must be a phone number');
    else if (q.type === 'select' && !(q.options ?? []).includes(s)) {
      p.add(field, `must be one of: ${(q.options ?? []).join(', ')}`);
    } else if ((q.type === 'text' || q.type === 'phone') && s.length > 500) {
      p.add(field, 'must be at most 500 characters');
    } else out[q.id] = s;
  }
  return out;
}

/**
 * A series' rule (docs/api.md#recurring-series), or null without `recurrence`: refused on a priced or
 * seated link, and on the public surface (`publicLink`) beyond what the link allows. Its zone: the
 * given one, else the customer's, else the first host's.
 */
export function recurrenceOf(
  body: Pick<Static<typeof PublicCreateBody>, 'recurrence' | 'customer_timezone'>,
  link: BookingLink | null,
  p: Problems,
  publicLink: boolean,
): (Omit<RecurrenceRule, 'timezone'> & { timezone: string | null }) | null {
  const r = body.recurrence;
  if (!r) return null;
  if (link?.priceAmount != null) p.add('recurrence', 'a priced booking link cannot book a series');
  else if (link?.seats) p.add('recurrence', 'a seated booking link cannot book a series');
  else if (publicLink && !link?.recurrence) {
    p.add('recurrence', 'this booking link does not offer recurring bookings');
  } else if (publicLink && link?.recurrence) {
    if (!link.recurrence.frequencies.includes(r.frequency)) {
      p.add('recurrence.frequency', `this booking link offers ${link.recurrence.frequencies.join(', ')}`);
    }
    if (r.count > link.recurrence.max_count) {
      p.add('recurrence.count', `this booking link allows at most ${link.recurrence.max_count} occurrences`);
    }
  }
  return {
    frequency: r.frequency,
    interval: r.interval ?? 1,
    count: r.count,
    timezone: r.timezone ?? body.customer_timezone ?? null,
  };
}
