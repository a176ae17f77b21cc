/** Google Calendar API v3: free/busy and the calendar list, over an injected fetch. */
import type { Clock } from '../../../platform/clock.js';
import { isRecord, ProviderError, str } from './errors.js';
import { answerError, fanOutBusy, jsonApi, nextPageTokenUrl, readPages } from './http.js';
import type { Interval } from '../../../lib/intervals.js';
import { DAY, isoUtcShort } from '../../../lib/time.js';
import { assertWindow, type BusyResult, type CalendarError, type HttpFetch, trimBase } from './types.js';

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
export const GOOGLE_MAX_WINDOW_MS = 89 * DAY;

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
  return fanOutBusy(
    window,
    ids,
    { maxWindowMs: GOOGLE_MAX_WINDOW_MS, perCall: GOOGLE_MAX_CALENDARS_PER_CALL },
    (w, group) => freeBusyCall(cfg, fetch, url, accessToken, w, group),
  );
}

async function freeBusyCall(
  cfg: GoogleApiConfig,
  fetch: HttpFetch,
  url: string,
  accessToken: string,
  w: Interval,
  ids: readonly string[],
): Promise<BusyResult> {
  const body = {
    timeMin: isoUtcShort(w.start),
    timeMax: isoUtcShort(w.end),
    items: ids.map((id) => ({ id })),
  };
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
  const first = new URL(`${trimBase(cfg.apiUrl)}/users/me/calendarList`);
  first.searchParams.set('maxResults', '250');
  first.searchParams.set('showHidden', 'false');
  const out: GoogleCalendar[] = [];
  const complete = await readPages(first.toString(), 100, async (url) => {
    const json = await googleRequest(cfg, fetch, url, accessToken, { method: 'GET' });
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
    return nextPageTokenUrl(url, json);
  });
  if (!complete) throw new ProviderError('unavailable', 200, 'calendarList paging did not end');
  return out;
}

/** Google error body: {error: {code, message, errors: [{domain, reason, message}], status}}. */
export function googleError(res: Response, json: unknown, nowMs: number): ProviderError {
  const err = isRecord(json) && isRecord(json.error) ? json.error : undefined;
  const first: unknown = err && Array.isArray(err.errors) ? err.errors[0] : undefined;
  const reason = (isRecord(first) && str(first.reason)) || (err && str(err.status)) || undefined;
  const message = (err && str(err.message)) || `Google Calendar API answered ${res.status}`;
  const rateLimited = res.status === 403 && reason !== undefined && RATE_REASONS.has(reason);
  return answerError(res, nowMs, { message, reason, rateLimited });
}

/** One Calendar API call (any method; a 204 without a body resolves to undefined). */
export const googleRequest = jsonApi<GoogleApiConfig>('Google Calendar', googleError);
