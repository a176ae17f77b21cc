/**
 * The pure rules of availability's use cases (service.ts): a host's booking constraints under a link's
 * limits, the window to ask busy sources about, remembered working hours, and the checks of query
 * parameters beyond the schemas. No I/O.
 */
import type { Static } from '@sinclair/typebox';
import { clip, type Interval } from '../../lib/intervals.js';
import { type Schedule, workingIntervals } from '../../lib/schedule.js';
import { isUuid } from '../../platform/ids.js';
import { isTimeZone, type Problems } from '../../platform/validation.js';
import type { PrincipalProfile } from '../principals/api.js';
import type { BookingLimits, TitledInterval, WholeBusy } from './api.js';
import { MAX_DURATION_MINUTES, MIN_DURATION_MINUTES, type MutualQuery, type SlotsQuery } from './schemas.js';
import { DAY, MINUTE } from '../../lib/time.js';

/** The principal asked about: `business_id`, or its alias `principal_id` (one is required). */
export type TargetParams = Pick<Static<typeof SlotsQuery>, 'business_id' | 'principal_id'>;

export const NO_BUSY: readonly Interval[] = Object.freeze([]);

/** The whole list of a kind no source knows anything of: no busy time, known everywhere. */
export const EVERYWHERE_FREE: WholeBusy = Object.freeze({
  intervals: NO_BUSY,
  start: Number.NEGATIVE_INFINITY,
  end: Number.POSITIVE_INFINITY,
});

/** The host's constraints under a link's limits. */
export function constraintsWith(p: PrincipalProfile, limits: BookingLimits) {
  const c = profileConstraints(p, 0);
  if (limits.minimumNoticeMinutes != null) c.minimumNoticeMs = limits.minimumNoticeMinutes * MINUTE;
  if (limits.maxDaysAhead != null) c.maxDaysAhead = limits.maxDaysAhead;
  return c;
}

/** The schedule's booking constraints; `extraBufferMs` widens both buffers (the `buffer` parameter). */
export function profileConstraints(p: PrincipalProfile, extraBufferMs: number) {
  const s = p.schedule;
  return {
    bufferBeforeMs: Math.max(s.buffer_before_minutes * MINUTE, extraBufferMs),
    bufferAfterMs: Math.max(s.buffer_after_minutes * MINUTE, extraBufferMs),
    minimumNoticeMs: s.minimum_notice_minutes * MINUTE,
    maxDaysAhead: s.max_days_ahead,
  };
}

/**
 * The window to ask busy sources about: `range` (the bookable part of `window`, or less), widened by
 * the buffers so that a busy block just outside still pushes slots away. The whole window when range is
 * empty (the sources are still asked, so that 404 and 503 do not depend on the clock).
 */
export function queryWindow(
  c: ReturnType<typeof profileConstraints>,
  range: Interval,
  window: Interval,
): Interval {
  const base = range.start < range.end ? range : window;
  // Calendar busy time reaches a slot through [start - after, end + before), booking occupancy through
  // [start - before, end + after) (lib/slots.ts): ask for the wider of the two on each side.
  const pad = Math.max(c.bufferBeforeMs, c.bufferAfterMs);
  return { start: base.start - pad, end: base.end + pad };
}

const WORKING_MEMO_SIZE = 4;
/** Working hours are computed for windows widened to whole spans of this length (UTC), then clipped. */
const WORKING_SPAN = 7 * DAY;
const workingMemo = new WeakMap<Schedule, { start: number; end: number; working: Interval[] }[]>();

/**
 * workingIntervals, from the last few wide windows of each schedule object: the window widened to
 * whole weeks, whose working hours clipped to the window are the window's own (the hours of a window
 * depend only on the days it meets). So questions whose window moves by minutes — "from now" on a
 * booking page, or any new question — share one computation instead of converting 30 local days
 * each time. Cached profiles share their schedule objects between requests and are replaced when the
 * schedule changes, which drops their entries here too. Callers never mutate results.
 */
export function workingFor(schedule: Schedule, window: Interval): Interval[] {
  if (!(window.start < window.end)) return [];
  let entries = workingMemo.get(schedule);
  if (!entries) {
    entries = [];
    workingMemo.set(schedule, entries);
  }
  const start = Math.floor(window.start / WORKING_SPAN) * WORKING_SPAN;
  const end = Math.ceil(window.end / WORKING_SPAN) * WORKING_SPAN;
  let wide: Interval[] | undefined;
  for (const e of entries) if (e.start === start && e.end === end) wide = e.working;
  if (wide === undefined) {
    wide = workingIntervals(schedule, { start, end });
    if (entries.length >= WORKING_MEMO_SIZE) entries.shift();
    entries.push({ start, end, working: wide });
  }
  return start === window.start && end === window.end ? wide : clip(wide, window);
}

/** Parses from/to; records problems and returns undefined when they are not a usable window. */
export function parseWindow(
  from: string,
  to: string,
  maxDays: number,
  problems: Problems,
): Interval | undefined {
  const start = Date.parse(from);
  const end = Date.parse(to);
  if (Number.isNaN(start)) problems.add('from', 'must be an ISO 8601 timestamp with an offset');
  if (Number.isNaN(end)) problems.add('to', 'must be an ISO 8601 timestamp with an offset');
  if (Number.isNaN(start) || Number.isNaN(end)) return undefined;
  if (start >= end) {
    problems.add('to', 'must be after from');
    return undefined;
  }
  if (end - start > maxDays * DAY) {
    problems.add('to', `must be at most ${maxDays} days after from`);
    return undefined;
  }
  return { start, end };
}

/** The principal id from `business_id` or `principal_id`; records a problem when there is none. */
export function resolveTarget(p: TargetParams, problems: Problems): string | undefined {
  if (p.business_id !== undefined && p.principal_id !== undefined && p.business_id !== p.principal_id) {
    problems.add('principal_id', 'must equal business_id when both are given (it is an alias)');
    return undefined;
  }
  const field = p.business_id !== undefined ? 'business_id' : 'principal_id';
  const id = p.business_id ?? p.principal_id;
  if (id === undefined) {
    problems.add('business_id', 'is required (or its alias principal_id)');
    return undefined;
  }
  if (!isUuid(id)) {
    problems.add(field, 'must be a UUID');
    return undefined;
  }
  return id;
}

/** Checks shared by slots, next and mutual (the schema checks types; these are the ranges and zones). */
export function checkCommon(
  p: Pick<Static<typeof MutualQuery>, 'duration_minutes' | 'timezone' | 'slot_interval'>,
  problems: Problems,
): void {
  const d = p.duration_minutes;
  if (!(Number.isInteger(d) && d >= MIN_DURATION_MINUTES && d <= MAX_DURATION_MINUTES)) {
    problems.add(
      'duration_minutes',
      `must be an integer from ${MIN_DURATION_MINUTES} to ${MAX_DURATION_MINUTES}`,
    );
  }
  if (p.timezone !== undefined && !isTimeZone(p.timezone)) {
    problems.add('timezone', 'must be a valid IANA time zone');
  }
  const si = p.slot_interval;
  if (si !== undefined && !(Number.isInteger(si) && si >= 5 && si <= MAX_DURATION_MINUTES)) {
    problems.add('slot_interval', `must be an integer from 5 to ${MAX_DURATION_MINUTES} (minutes)`);
  }
}

/**
 * The consent variants made of each remembered answer, by consent id: a copy per consent read would
 * be a new buffer of the answer's size per request (most of such a read's cost). Kept as long as the
 * answer is; at most CONSENT_VARIANTS per answer (the oldest goes first).
 */
const consentVariants = new WeakMap<Buffer, Map<string, Buffer>>();
const CONSENT_VARIANTS = 16;

/**
 * A remembered slots answer (shared by every caller allowed to read it) with the consent that allowed
 * this caller's read added (`consent`), when one did. The same answer and consent give the same
 * bytes, so a Buffer answer's variant is made once and remembered with it.
 */
export function withConsent(json: Buffer | string, consentId: string | null): Buffer | string {
  if (consentId === null) return json;
  const tail = `,"consent":{"id":${JSON.stringify(consentId)}}}`;
  if (typeof json === 'string') return `${json.slice(0, -1)}${tail}`;
  let variants = consentVariants.get(json);
  const known = variants?.get(consentId);
  if (known !== undefined) return known;
  const made = Buffer.concat([json.subarray(0, json.length - 1), Buffer.from(tail)]);
  if (!variants) {
    variants = new Map();
    consentVariants.set(json, variants);
  } else if (variants.size >= CONSENT_VARIANTS) {
    variants.delete(variants.keys().next().value as string);
  }
  variants.set(consentId, made);
  return made;
}

/** The distinct titles of the events overlapping a block, in start order ('' for untitled events). */
export function titlesIn(events: readonly TitledInterval[], block: Interval): string[] {
  const out: string[] = [];
  for (const e of events) {
    if (e.end > block.start && e.start < block.end && !out.includes(e.title)) out.push(e.title);
  }
  return out;
}
