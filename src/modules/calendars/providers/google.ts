/** Google Calendar API v3: free/busy and the calendar list, over an injected fetch. */
import { type Clock, systemClock } from '../../../platform/clock.js';
import { bearerJsonRequest, codeForStatus, isRecord, parseRetryAfter, ProviderError, str } from './errors.js';
import {
  assertWindow,
  type BusyResult,
  type CalendarError,
  chunk,
  clipIntervals,
  DAY_MS,
  type HttpFetch,
  type Interval,
  isoUtc,
  mapLimit,
  mergeIntervals,
  splitWindow,
  trimBase,
} from './types.js';

export { ProviderError } from './errors.js';

export interface GoogleApiConfig {
  /** https://www.googleapis.com/calendar/v3 in production. */
  apiUrl: string;
  clock?: Pick<Clock, 'nowMs'>;
}

export const GOOGLE_API_URL = 'https://www.googleapis.com/calendar/v3';
/** freeBusy accepts at most 50 calendars per query (calendarExpansionMax). */
export const GOOGLE_MAX_CALENDARS_PER_CALL = 50;
/** freeBusy answers "The requested time range is too long." beyond about 90 days; stay below. */
export const GOOGLE_MAX_WINDOW_MS = 89 * DAY_MS;
const CONCURRENCY = 3;

export interface GoogleFreeBusyQuery {
  calendarIds: readonly string[];
  timeMin: number;
  timeMax: number;
}

export interface GoogleCalendar {
  id: string;
  summary: string;
  primary: boolean;
  timeZone?: string;
  accessRole?: string;
}

/** Rate-limit reasons Google sends with 403 (and 429). */
const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded']);

export async function googleFreeBusy(
  cfg: GoogleApiConfig,
  fetch: HttpFetch,
  accessToken: string,
  q: GoogleFreeBusyQuery,
): Promise<BusyResult> {
  const window = { start: q.timeMin, end: q.timeMax };
  assertWindow(window);
  const ids = [...new Set(q.calendarIds)];
  if (ids.length === 0) return { busy: [], errors: [] };
  const url = `${trimBase(cfg.apiUrl)}/freeBusy`;
  const jobs = splitWindow(window, GOOGLE_MAX_WINDOW_MS).flatMap((w) =>
    chunk(ids, GOOGLE_MAX_CALENDARS_PER_CALL).map((group) => ({ w, group })),
  );
  const busy: Interval[] = [];
  const errors = new Map<string, CalendarError>();
  const results = await mapLimit(jobs, CONCURRENCY, ({ w, group }) =>
    freeBusyCall(cfg, fetch, url, accessToken, w, group),
  );
  for (const r of results) {
    busy.push(...r.busy);
    for (const e of r.errors) if (!errors.has(e.calendarId)) errors.set(e.calendarId, e);
  }
  return { busy: mergeIntervals(clipIntervals(busy, window)), errors: [...errors.values()] };
}

async function freeBusyCall(
  cfg: GoogleApiConfig,
  fetch: HttpFetch,
  url: string,
  accessToken: string,
  w: Interval,
  ids: readonly string[],
): Promise<BusyResult> {
  const body = { timeMin: isoUtc(w.start), timeMax: isoUtc(w.end), items: ids.map((id) => ({ id })) };
  const json = await googleRequest(cfg, fetch, url, accessToken, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const calendars = isRecord(json) && isRecord(json.calendars) ? json.calendars : {};
  const busy: Interval[] = [];
  const errors: CalendarError[] = [];
  for (const id of ids) {
    const entry = calendars[id];
    if (!isRecord(entry)) {
      errors.push({ calendarId: id, reason: 'missing' });
      continue;
    }
    if (Array.isArray(entry.errors) && entry.errors.length > 0) {
      const first: unknown = entry.errors[0];
      errors.push({ calendarId: id, reason: (isRecord(first) && str(first.reason)) || 'unknown' });
      continue;
    }
    for (const b of Array.isArray(entry.busy) ? entry.busy : []) {
      if (!isRecord(b)) continue;
      const start = Date.parse(str(b.start) ?? '');
      const end = Date.parse(str(b.end) ?? '');
      if (Number.isFinite(start) && Number.isFinite(end) && end > start) busy.push({ start, end });
    }
  }
  return { busy, errors };
}

export async function googleListCalendars(
  cfg: GoogleApiConfig,
  fetch: HttpFetch,
  accessToken: string,
): Promise<GoogleCalendar[]> {
  const base = `${trimBase(cfg.apiUrl)}/users/me/calendarList`;
  const out: GoogleCalendar[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < 100; page++) {
    const url = new URL(base);
    url.searchParams.set('maxResults', '250');
    url.searchParams.set('showHidden', 'false');
    if (pageToken) url.searchParams.set('pageToken', pageToken);
    const json = await googleRequest(cfg, fetch, url.toString(), accessToken, { method: 'GET' });
    const items = isRecord(json) && Array.isArray(json.items) ? json.items : [];
    for (const it of items) {
      if (!isRecord(it) || typeof it.id !== 'string') continue;
      const cal: GoogleCalendar = {
        id: it.id,
        summary: str(it.summaryOverride) ?? str(it.summary) ?? it.id,
        primary: it.primary === true,
      };
      const tz = str(it.timeZone);
      if (tz) cal.timeZone = tz;
      const role = str(it.accessRole);
      if (role) cal.accessRole = role;
      out.push(cal);
    }
    pageToken = isRecord(json) ? str(json.nextPageToken) : undefined;
    if (!pageToken) return out;
  }
  throw new ProviderError('unavailable', 200, 'calendarList paging did not end');
}

function googleRequest(
  cfg: GoogleApiConfig,
  fetch: HttpFetch,
  url: string,
  accessToken: string,
  init: RequestInit & { headers?: Record<string, string> },
): Promise<unknown> {
  return bearerJsonRequest(fetch, url, accessToken, init, 'Google Calendar', (res, json) =>
    googleError(res, json, (cfg.clock ?? systemClock).nowMs()),
  );
}

/** Google error body: {error: {code, message, errors: [{domain, reason, message}], status}}. */
export function googleError(res: Response, json: unknown, nowMs: number): ProviderError {
  const err = isRecord(json) && isRecord(json.error) ? json.error : undefined;
  const first: unknown = err && Array.isArray(err.errors) ? err.errors[0] : undefined;
  const reason = (isRecord(first) && str(first.reason)) || (err && str(err.status)) || undefined;
  const message = (err && str(err.message)) || `Google Calendar API answered ${res.status}`;
  const rateLimited = res.status === 403 && reason !== undefined && RATE_REASONS.has(reason);
  const code = codeForStatus(res.status, rateLimited);
  const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), nowMs);
  const opts: { retryAfterMs?: number; reason?: string } = {};
  if (retryAfterMs !== undefined) opts.retryAfterMs = retryAfterMs;
  if (reason !== undefined) opts.reason = reason;
  return new ProviderError(code, res.status, message, opts);
}
