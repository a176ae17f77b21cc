/** Microsoft Graph v1.0: getSchedule (free/busy) and the calendar list, over an injected fetch. */
import { DateTime } from 'luxon';
import type { Clock } from '../../../platform/clock.js';
import { isRecord, ProviderError, str } from './errors.js';
import { answerError, fanOutBusy, graphNextLink, jsonApi, readPages } from './http.js';
import type { Interval } from '../../../lib/intervals.js';
import { DAY } from '../../../lib/time.js';
import { assertWindow, type BusyResult, type CalendarError, type HttpFetch, trimBase } from './types.js';
import { resolveZoneName } from './zones.js';

export { ProviderError } from './errors.js';

export interface GraphConfig {
  /** https://graph.microsoft.com/v1.0 in production. */
  graphUrl: string;
  clock?: Pick<Clock, 'nowMs'>;
}

export const GRAPH_URL = 'https://graph.microsoft.com/v1.0';
/** getSchedule: the window must be shorter than 42 days ... */
export const GRAPH_MAX_WINDOW_MS = 41 * DAY;
/** ... and at most 20 schedules (mailboxes) per call. */
export const GRAPH_MAX_SCHEDULES_PER_CALL = 20;

export interface MicrosoftScheduleQuery {
  /** SMTP addresses (the user's own, or others' they may see); not calendar ids. */
  schedules: readonly string[];
  start: number;
  end: number;
  /** Minutes per availabilityView slot, 5–1440 (Graph's bounds). Only affects the summary string. */
  availabilityViewInterval?: number;
}

export interface MicrosoftCalendar {
  id: string;
  name: string;
  isDefault: boolean;
  /** Mailbox address of the owner: what getSchedule takes. */
  ownerEmail?: string;
  canEdit?: boolean;
}

/** scheduleItem statuses that block time. `free` and `unknown` do not. */
const BUSY_STATUSES = new Set(['busy', 'oof', 'tentative', 'workingelsewhere']);

export async function microsoftFreeBusy(
  cfg: GraphConfig,
  fetch: HttpFetch,
  accessToken: string,
  q: MicrosoftScheduleQuery,
): Promise<BusyResult> {
  const window = { start: q.start, end: q.end };
  assertWindow(window);
  const schedules = [...new Set(q.schedules)];
  if (schedules.length === 0) return { busy: [], errors: [] };
  const interval = Math.min(1440, Math.max(5, Math.round(q.availabilityViewInterval ?? 30)));
  const url = `${trimBase(cfg.graphUrl)}/me/calendar/getSchedule`;
  return fanOutBusy(
    window,
    schedules,
    { maxWindowMs: GRAPH_MAX_WINDOW_MS, perCall: GRAPH_MAX_SCHEDULES_PER_CALL },
    (w, group) => scheduleCall(cfg, fetch, url, accessToken, w, group, interval),
  );
}

async function scheduleCall(
  cfg: GraphConfig,
  fetch: HttpFetch,
  url: string,
  accessToken: string,
  w: Interval,
  schedules: readonly string[],
  interval: number,
): Promise<BusyResult> {
  const body = {
    schedules,
    startTime: { dateTime: graphDateTime(w.start), timeZone: 'UTC' },
    endTime: { dateTime: graphDateTime(w.end), timeZone: 'UTC' },
    availabilityViewInterval: interval,
  };
  const json = await graphRequest(cfg, fetch, url, accessToken, {
    method: 'POST',
    headers: { 'content-type': 'application/json', prefer: 'outlook.timezone="UTC"' },
    body: JSON.stringify(body),
  });
  const value = isRecord(json) && Array.isArray(json.value) ? json.value : [];
  const busy: Interval[] = [];
  const errors: CalendarError[] = [];
  const seen = new Set<string>();
  for (const info of value) {
    if (!isRecord(info)) continue;
    const id = str(info.scheduleId) ?? '';
    seen.add(id.toLowerCase());
    if (isRecord(info.error)) {
      const reason = str(info.error.responseCode) ?? str(info.error.message) ?? 'unknown';
      errors.push({ calendarId: id, reason });
      continue;
    }
    for (const item of Array.isArray(info.scheduleItems) ? info.scheduleItems : []) {
      if (!isRecord(item)) continue;
      const status = (str(item.status) ?? 'busy').toLowerCase();
      if (!BUSY_STATUSES.has(status)) continue;
      const start = parseGraphDateTime(item.start);
      const end = parseGraphDateTime(item.end);
      if (start !== undefined && end !== undefined && end > start) busy.push({ start, end });
    }
  }
  for (const s of schedules) {
    if (!seen.has(s.toLowerCase())) errors.push({ calendarId: s, reason: 'missing' });
  }
  return { busy, errors };
}

export async function microsoftListCalendars(
  cfg: GraphConfig,
  fetch: HttpFetch,
  accessToken: string,
): Promise<MicrosoftCalendar[]> {
  const base = trimBase(cfg.graphUrl);
  const out: MicrosoftCalendar[] = [];
  const first = `${base}/me/calendars?$select=id,name,isDefaultCalendar,canEdit,owner&$top=100`;
  const complete = await readPages(first, 100, async (url) => {
    const json = await graphRequest(cfg, fetch, url, accessToken, { method: 'GET' });
    const value = isRecord(json) && Array.isArray(json.value) ? json.value : [];
    for (const c of value) {
      if (!isRecord(c) || typeof c.id !== 'string') continue;
      const cal: MicrosoftCalendar = {
        id: c.id,
        name: str(c.name) ?? c.id,
        isDefault: c.isDefaultCalendar === true,
      };
      const owner = isRecord(c.owner) ? str(c.owner.address) : undefined;
      if (owner) cal.ownerEmail = owner;
      if (typeof c.canEdit === 'boolean') cal.canEdit = c.canEdit;
      out.push(cal);
    }
    // A link away from the configured Graph origin ends the list: the bearer token would go with it.
    const next = graphNextLink(json, base);
    return next === 'foreign' ? undefined : next;
  });
  if (!complete) throw new ProviderError('unavailable', 200, 'calendars paging did not end');
  return out;
}

/** Graph error body: {error: {code, message, innerError}}; throttling: 429 (or 503) + Retry-After. */
export function graphError(res: Response, json: unknown, nowMs: number): ProviderError {
  const err = isRecord(json) && isRecord(json.error) ? json.error : undefined;
  const reason = err ? str(err.code) : undefined;
  const message = (err && str(err.message)) || `Microsoft Graph answered ${res.status}`;
  return answerError(res, nowMs, { message, reason });
}

/** One Graph call (any method; a 204 without a body resolves to undefined). */
export const graphRequest = jsonApi<GraphConfig>('Microsoft Graph', graphError);

/** Graph's dateTimeTimeZone.dateTime: local wall time without offset, e.g. 2054-06-01T09:00:00.0000000. */
export function graphDateTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}.0000000`;
}

const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?$/;

/** Parses {dateTime, timeZone} into epoch ms; undefined when unreadable. */
export function parseGraphDateTime(v: unknown): number | undefined {
  if (!isRecord(v)) return undefined;
  const dateTime = str(v.dateTime);
  if (!dateTime) return undefined;
  const m = LOCAL_RE.exec(dateTime);
  if (!m) {
    // Already carries an offset or Z.
    const t = Date.parse(dateTime);
    return Number.isFinite(t) ? t : undefined;
  }
  const [, y, mo, d, h, mi, s, frac] = m;
  const ms = frac ? Math.round(Number(`0.${frac}`) * 1000) : 0;
  const parts = {
    year: Number(y),
    month: Number(mo),
    day: Number(d),
    hour: Number(h),
    minute: Number(mi),
    second: Number(s ?? 0),
    millisecond: Math.min(ms, 999),
  };
  // Unknown zone name: UTC is what we asked for (Prefer: outlook.timezone), so it is the best guess.
  const zone = resolveZoneName(str(v.timeZone) ?? 'UTC') ?? 'UTC';
  return DateTime.fromObject(parts, { zone }).toMillis();
}
