/**
 * iCalendar (RFC 5545) → busy intervals, with ical.js doing the parsing and RRULE iteration.
 *
 * Zones: a TZID with a VTIMEZONE in the data uses that definition (ical.js); a TZID without one is
 * read as an IANA (or Windows) zone via luxon; floating times and all-day dates are in `defaultZone`.
 * Recurrence set = DTSTART ∪ RRULE ∪ RDATE − EXDATE, with RECURRENCE-ID overrides replacing the
 * occurrence they name (wherever they moved it). TRANSP:TRANSPARENT and STATUS:CANCELLED are free.
 * Events Kairos wrote itself (X-KAIROS-MEETING, or a UID ending in `@kairos`; events.ts) are skipped.
 */
import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { type Clock, systemClock } from '../../../platform/clock.js';
import { networkError, ProviderError, parseRetryAfter } from './errors.js';
import { codeForStatus } from './http.js';
import { ICAL_KAIROS_PROPERTY, KAIROS_UID_SUFFIX } from './events.js';
import { type Interval, normalizedCopy } from '../../../lib/intervals.js';
import { DAY, SECOND } from '../../../lib/time.js';
import { assertWindow, type HttpFetch, clipTitled, type TitledInterval } from './types.js';
import { resolveZoneName } from './zones.js';

type Time = InstanceType<typeof ICAL.Time>;
type Component = InstanceType<typeof ICAL.Component>;
type Property = InstanceType<typeof ICAL.Property>;
type Recur = InstanceType<typeof ICAL.Recur>;
type Timezone = InstanceType<typeof ICAL.Timezone>;

/** Iterations of one RRULE after fast-forwarding; bounds pathological rules (FREQ=SECONDLY ...). */
export const MAX_RULE_ITERATIONS = 20_000;
/** Occurrences emitted for one parse, all events together. */
export const MAX_OCCURRENCES = 50_000;

type Zone = { kind: 'utc' } | { kind: 'vtz'; tz: Timezone } | { kind: 'iana'; name: string };

interface Ctx {
  window: Interval;
  defaultZone: string;
  out: TitledInterval[];
  budget: number;
  /** SUMMARY of the event being expanded. */
  title: string;
}

/**
 * Busy intervals of all VEVENTs in `icsText` (one or more VCALENDARs) within `window`: merged,
 * sorted and clipped. Free events (TRANSP:TRANSPARENT, STATUS:CANCELLED) do not count, and neither
 * do events Kairos wrote itself: a VEVENT carrying X-KAIROS-MEETING or whose UID ends in `@kairos`
 * is skipped (each component on its own, so also expanded instances and overrides), because its
 * meeting is already busy time as a booking. ICS feeds go through here too; skipping there is fine.
 */
export function parseIcsBusy(icsText: string, window: Interval, defaultZone: string): Interval[] {
  return normalizedCopy(parseIcsEvents(icsText, window, defaultZone));
}

/**
 * The busy occurrences behind parseIcsBusy, each with its event's SUMMARY (`title`, '' without one):
 * clipped to the window, sorted, not merged. For readers allowed to see event details.
 */
export function parseIcsEvents(icsText: string, window: Interval, defaultZone: string): TitledInterval[] {
  assertWindow(window);
  const zoneName = resolveZoneName(defaultZone);
  if (!zoneName) throw new RangeError(`unknown time zone: ${defaultZone}`);
  const ctx: Ctx = { window, defaultZone: zoneName, out: [], budget: MAX_OCCURRENCES, title: '' };
  for (const vcal of parseCalendars(icsText)) {
    const byUid = new Map<string, { master?: Component; overrides: Component[] }>();
    let anon = 0;
    for (const ev of vcal.getAllSubcomponents('vevent')) {
      if (isKairosEvent(ev)) continue;
      const uidValue = ev.getFirstPropertyValue('uid');
      const uid = typeof uidValue === 'string' && uidValue !== '' ? uidValue : `\u0000${anon++}`;
      const group = byUid.get(uid) ?? { overrides: [] };
      byUid.set(uid, group);
      if (ev.hasProperty('recurrence-id')) group.overrides.push(ev);
      // A second master with the same UID (broken feeds) is treated as a separate event.
      else if (group.master) byUid.set(`${uid}\u0000${anon++}`, { master: ev, overrides: [] });
      else group.master = ev;
    }
    for (const { master, overrides } of byUid.values()) addEvent(ctx, master, overrides);
  }
  return clipTitled(ctx.out, window);
}

function summaryOf(ev: Component): string {
  const v = ev.getFirstPropertyValue('summary');
  return typeof v === 'string' ? v.slice(0, 500) : '';
}

function parseCalendars(text: string): Component[] {
  let jcal: unknown;
  try {
    jcal = ICAL.parse(text);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    throw new ProviderError('bad_request', 0, `invalid iCalendar data: ${msg}`, { cause: err });
  }
  // One VCALENDAR parses to a jCal array ['vcalendar', props, comps]; several to an array of those.
  const roots: unknown[] = Array.isArray(jcal) && typeof jcal[0] === 'string' ? [jcal] : [jcal].flat();
  const out: Component[] = [];
  for (const root of roots) {
    if (!Array.isArray(root)) continue;
    const comp = new ICAL.Component(root);
    if (comp.name === 'vcalendar') out.push(comp);
  }
  if (out.length === 0) throw new ProviderError('bad_request', 0, 'invalid iCalendar data: no VCALENDAR');
  return out;
}

/** Written by Kairos (events.ts): its meeting is busy time through the booking already. */
function isKairosEvent(ev: Component): boolean {
  if (ev.hasProperty(ICAL_KAIROS_PROPERTY.toLowerCase())) return true;
  const uid = ev.getFirstPropertyValue('uid');
  return typeof uid === 'string' && uid.trim().toLowerCase().endsWith(KAIROS_UID_SUFFIX);
}

function isFree(ev: Component): boolean {
  const transp = ev.getFirstPropertyValue('transp');
  const status = ev.getFirstPropertyValue('status');
  return (
    (typeof transp === 'string' && transp.toUpperCase() === 'TRANSPARENT') ||
    (typeof status === 'string' && status.toUpperCase() === 'CANCELLED')
  );
}

function timeOf(prop: Property | null): Time | undefined {
  const v = prop?.getFirstValue();
  return v instanceof ICAL.Time ? v : undefined;
}

/** The zone a DATE-TIME property value is written in. */
function zoneOf(ctx: Ctx, prop: Property, t: Time): Zone {
  if (t.isDate) return { kind: 'iana', name: ctx.defaultZone };
  if (t.zone === ICAL.Timezone.utcTimezone || t.zone?.tzid === 'UTC') return { kind: 'utc' };
  const param = prop.getParameter('tzid');
  const tzid = typeof param === 'string' ? param : undefined;
  if (tzid) {
    // ical.js found a VTIMEZONE for this TZID in the same VCALENDAR.
    if (t.zone && t.zone !== ICAL.Timezone.localTimezone && t.zone.tzid === tzid) {
      return { kind: 'vtz', tz: t.zone };
    }
    const name = resolveZoneName(tzid);
    if (name) return name === 'UTC' ? { kind: 'utc' } : { kind: 'iana', name };
  }
  return { kind: 'iana', name: ctx.defaultZone };
}

/** Wall-clock fields of `t` read in zone `z` → epoch ms. */
function toMs(t: Time, z: Zone): number {
  if (z.kind === 'utc') {
    return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
  }
  if (z.kind === 'vtz') {
    const c = ICAL.Time.fromData(
      { year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second },
      z.tz,
    );
    return c.toUnixTime() * 1000;
  }
  const dt = DateTime.fromObject(
    { year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second },
    { zone: z.name },
  );
  return dt.toMillis();
}

/** Epoch ms → a floating ical.js time holding the wall clock of zone `z` (for UNTIL comparisons). */
function wallOf(ms: number, z: Zone): Time {
  const name = z.kind === 'iana' ? z.name : 'UTC';
  const d = DateTime.fromMillis(ms, { zone: name });
  return ICAL.Time.fromData(
    { year: d.year, month: d.month, day: d.day, hour: d.hour, minute: d.minute, second: d.second },
    ICAL.Timezone.localTimezone,
  );
}

/** How each occurrence's end is derived from its start. */
type Span = { kind: 'exact'; ms: number } | { kind: 'nominal'; days: number; ms: number } | { kind: 'none' };

function spanOf(ctx: Ctx, ev: Component, start: Time, startZone: Zone): Span {
  const endProp = ev.getFirstProperty('dtend');
  const end = timeOf(endProp);
  if (end && endProp) {
    if (start.isDate) {
      const days = Math.round(
        (Date.UTC(end.year, end.month - 1, end.day) - Date.UTC(start.year, start.month - 1, start.day)) / DAY,
      );
      return days > 0 ? { kind: 'nominal', days, ms: 0 } : { kind: 'nominal', days: 1, ms: 0 };
    }
    const ms = toMs(end, zoneOf(ctx, endProp, end)) - toMs(start, startZone);
    return ms > 0 ? { kind: 'exact', ms } : { kind: 'none' };
  }
  const dur = ev.getFirstPropertyValue('duration');
  if (dur instanceof ICAL.Duration) {
    const sign = dur.isNegative ? -1 : 1;
    const days = sign * (dur.weeks * 7 + dur.days);
    const ms = sign * (dur.hours * 3600 + dur.minutes * 60 + dur.seconds) * SECOND;
    if (days < 0 || ms < 0 || (days === 0 && ms === 0)) return { kind: 'none' };
    return days > 0 ? { kind: 'nominal', days, ms } : { kind: 'exact', ms };
  }
  // RFC 5545 3.6.1: no DTEND/DURATION → a DATE lasts one day, a DATE-TIME is an instant (not busy).
  return start.isDate ? { kind: 'nominal', days: 1, ms: 0 } : { kind: 'none' };
}

function endOf(t: Time, zone: Zone, startMs: number, span: Span): number {
  if (span.kind === 'exact') return startMs + span.ms;
  if (span.kind === 'none') return startMs;
  const e = t.clone();
  e.adjust(span.days, 0, 0, 0);
  return toMs(e, zone) + span.ms;
}

/** Longest plausible length of one occurrence, to look back before the window for overlaps. */
function spanUpperBound(span: Span): number {
  if (span.kind === 'exact') return span.ms;
  if (span.kind === 'nominal') return span.days * DAY + span.ms + 2 * 3_600_000;
  return 0;
}

function emit(ctx: Ctx, start: number, end: number): void {
  if (end <= start || end <= ctx.window.start || start >= ctx.window.end) return;
  if (ctx.budget <= 0) return;
  ctx.budget--;
  ctx.out.push({ start, end, title: ctx.title });
}

function addEvent(ctx: Ctx, master: Component | undefined, overrides: Component[]): void {
  // Overrides first: each replaces the master occurrence whose start equals its RECURRENCE-ID.
  const replaced = new Set<number>();
  for (const ov of overrides) {
    const ridProp = ov.getFirstProperty('recurrence-id');
    const rid = timeOf(ridProp);
    if (rid && ridProp) replaced.add(toMs(rid, zoneOf(ctx, ridProp, rid)));
    ctx.title = summaryOf(ov);
    if (!isFree(ov)) addSingle(ctx, ov);
  }
  if (!master || isFree(master)) return;
  ctx.title = summaryOf(master);
  const startProp = master.getFirstProperty('dtstart');
  const dtstart = timeOf(startProp);
  if (!dtstart || !startProp) return;
  const zone = zoneOf(ctx, startProp, dtstart);
  const span = spanOf(ctx, master, dtstart, zone);
  if (span.kind === 'none') return;
  const hasRecurrence = master.hasProperty('rrule') || master.hasProperty('rdate');
  if (!hasRecurrence) {
    const s = toMs(dtstart, zone);
    if (!replaced.has(s)) emit(ctx, s, endOf(dtstart, zone, s, span));
    return;
  }
  const excluded = exdates(ctx, master, dtstart, zone);
  const lookback = ctx.window.start - spanUpperBound(span);
  const seen = new Set<number>();
  const occurrence = (t: Time, tZone: Zone, explicitEnd?: number): void => {
    const s = toMs(t, tZone);
    if (seen.has(s)) return;
    seen.add(s);
    if (replaced.has(s) || excluded.ms.has(s)) return;
    if (!t.isDate && excluded.days.has(dayKey(t))) return;
    emit(ctx, s, explicitEnd ?? endOf(t, tZone, s, span));
  };
  // DTSTART is always the first instance (RFC 5545 3.8.5.3), even when the rule would not produce it.
  occurrence(dtstart, zone);
  for (const prop of master.getAllProperties('rrule')) {
    for (const value of prop.getValues()) {
      if (value instanceof ICAL.Recur) expandRule(ctx, value, dtstart, zone, lookback, occurrence);
    }
  }
  for (const prop of master.getAllProperties('rdate')) {
    for (const value of prop.getValues()) {
      if (value instanceof ICAL.Time) {
        occurrence(value, zoneOf(ctx, prop, value));
      } else if (value instanceof ICAL.Period) {
        const z = zoneOf(ctx, prop, value.start);
        occurrence(value.start, z, toMs(value.getEnd(), z));
      }
    }
  }
}

function addSingle(ctx: Ctx, ev: Component): void {
  const startProp = ev.getFirstProperty('dtstart');
  const start = timeOf(startProp);
  if (!start || !startProp) return;
  const zone = zoneOf(ctx, startProp, start);
  const span = spanOf(ctx, ev, start, zone);
  const s = toMs(start, zone);
  emit(ctx, s, endOf(start, zone, s, span));
}

function dayKey(t: Time): string {
  return `${t.year}-${t.month}-${t.day}`;
}

function exdates(ctx: Ctx, ev: Component, dtstart: Time, zone: Zone): { ms: Set<number>; days: Set<string> } {
  const ms = new Set<number>();
  const days = new Set<string>();
  for (const prop of ev.getAllProperties('exdate')) {
    for (const value of prop.getValues()) {
      if (!(value instanceof ICAL.Time)) continue;
      // A DATE exdate on a DATE-TIME series (seen in the wild) removes that local day's instance.
      if (value.isDate && !dtstart.isDate) days.add(dayKey(value));
      else ms.add(toMs(value, value.isDate ? zone : zoneOf(ctx, prop, value)));
    }
  }
  return { ms, days };
}

const FAST_FORWARD_SECONDS: Record<string, number> = {
  SECONDLY: 1,
  MINUTELY: 60,
  HOURLY: 3600,
  DAILY: 86_400,
  WEEKLY: 604_800,
};

function expandRule(
  ctx: Ctx,
  rule: Recur,
  dtstart: Time,
  zone: Zone,
  lookback: number,
  occurrence: (t: Time, z: Zone) => void,
): void {
  const recur = rule.clone();
  // ical.js compares UNTIL against the iterated wall-clock times; for zones it does not know (luxon
  // ones) those are floating, so restate a UTC UNTIL as wall clock in the event's zone.
  if (
    recur.until &&
    zone.kind === 'iana' &&
    !recur.until.isDate &&
    recur.until.zone === ICAL.Timezone.utcTimezone
  ) {
    recur.until = wallOf(recur.until.toUnixTime() * 1000, zone);
  }
  let start = dtstart;
  // Skip whole periods before the window so long-running series stay cheap. Shifting by a multiple
  // of INTERVAL periods keeps the rule's phase; not done with COUNT (it counts from DTSTART) or
  // BYSETPOS. The shift is in wall-clock time, so it is re-checked against the real instant.
  const period = FAST_FORWARD_SECONDS[recur.freq];
  if (period && recur.count === null && !recur.parts.BYSETPOS) {
    const stepSeconds = period * Math.max(1, recur.interval);
    const step = stepSeconds * SECOND;
    const dtMs = toMs(dtstart, zone);
    let k = Math.floor((lookback - step - dtMs) / step);
    for (let tries = 0; k > 0 && tries < 4; tries++) {
      const shifted = dtstart.clone();
      if (period >= 86_400) shifted.adjust((k * stepSeconds) / 86_400, 0, 0, 0);
      else shifted.adjust(0, 0, 0, k * stepSeconds);
      const over = toMs(shifted, zone) - lookback;
      if (over <= 0) {
        start = shifted;
        break;
      }
      // A UTC-offset change between DTSTART and now moved the wall clock: step back and retry.
      k -= Math.ceil(over / step) + 1;
    }
  }
  const it = recur.iterator(start);
  const months = recur.parts.BYMONTH;
  const monthDays = recur.parts.BYMONTHDAY;
  for (let i = 0; i < MAX_RULE_ITERATIONS && ctx.budget > 0; i++) {
    const t = it.next();
    if (!t) return;
    const s = toMs(t, zone);
    if (s >= ctx.window.end) return;
    // ical.js can roll impossible dates over (BYMONTH=2;BYMONTHDAY=30 → 2 March): drop those.
    if (months && !months.includes(t.month)) continue;
    if (monthDays && !matchesMonthDay(t, monthDays)) continue;
    if (s >= lookback) occurrence(t, zone);
  }
}

function matchesMonthDay(t: Time, monthDays: readonly number[]): boolean {
  const last = new Date(Date.UTC(t.year, t.month, 0)).getUTCDate();
  return monthDays.some((d) => (d > 0 ? d === t.day : last + d + 1 === t.day));
}

/** Fetches an ICS feed (webcal:// → https://). The caller's fetch enforces SSRF rules and timeouts. */
export async function fetchIcs(
  fetch: HttpFetch,
  url: string,
  opts: { maxBytes?: number; clock?: Pick<Clock, 'nowMs'> } = {},
): Promise<string> {
  const target = url.replace(/^webcals?:\/\//i, 'https://');
  const maxBytes = opts.maxBytes ?? 10 * 1024 * 1024;
  let res: Response;
  try {
    res = await fetch(target, { method: 'GET', headers: { accept: 'text/calendar, */*;q=0.5' } });
  } catch (err) {
    throw networkError(err, 'ICS feed request failed');
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), (opts.clock ?? systemClock).nowMs());
    // A feed's secret URL refused (403) is a credential refused, as 401 is.
    const code = res.status === 403 ? 'unauthorized' : codeForStatus(res.status, false);
    throw new ProviderError(code, res.status, `ICS feed answered ${res.status}`, {
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  const text = await readLimited(res, maxBytes);
  if (!/^\s*BEGIN:VCALENDAR/i.test(text.replace(/^\uFEFF/, ''))) {
    throw new ProviderError('bad_request', res.status, 'ICS feed did not return iCalendar data');
  }
  return text;
}

async function readLimited(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ProviderError('bad_request', res.status, `ICS feed larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return new TextDecoder('utf-8').decode(Buffer.concat(chunks));
}
