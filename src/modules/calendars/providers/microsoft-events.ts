/**
 * Microsoft Graph v1.0 calendar write-through (docs/design.md#calendar-write-through) and the
 * event-based busy read that goes with it, over an injected fetch:
 *
 *   POST   /me/calendars/{calendarId}/events      create (transactionId = ref guards client retries)
 *   PATCH  /me/events/{id}                        update
 *   DELETE /me/events/{id}                        delete (404: already gone, counts as done)
 *   GET    /me/calendars/{calendarId}/calendarView busy time from events, skipping Kairos's own
 *
 * Events are written without `attendees`: Graph would then mail its own invitations from the host's
 * mailbox, and Kairos sends the invitation itself. The guests are listed in the body text instead.
 * Busy time comes from calendarView rather than getSchedule because only events carry the Kairos
 * marker (GRAPH_KAIROS_PROPERTY_ID), so the meetings Kairos wrote are not counted twice.
 */
import { isRecord, ProviderError, str } from './errors.js';
import { type EventSpec, GRAPH_KAIROS_PROPERTY_ID, type WrittenEvent } from './events.js';
import { graphNextLink, readPages } from './http.js';
import {
  type GraphConfig,
  graphDateTime,
  graphRequest as graphCall,
  parseGraphDateTime,
} from './microsoft.js';
import type { Interval } from '../../../lib/intervals.js';
import {
  assertWindow,
  type BusyResult,
  busyResultOf,
  type CalendarError,
  type HttpFetch,
  mapLimit,
  type TitledInterval,
  trimBase,
} from './types.js';

export interface GraphEventsBusyQuery {
  /** Graph calendar ids of the signed-in user (from /me/calendars), not mailbox addresses. */
  calendarIds: readonly string[];
  start: number;
  end: number;
  /** Also answer every busy occurrence with its subject (`events`). */
  withTitles?: boolean;
}

const CONCURRENCY = 3;
/** calendarView page size asked for; Graph answers 10 per page without $top. */
const PAGE_SIZE = 250;
/** Pages followed per calendar before the read counts as failed. */
const MAX_PAGES = 100;
/** showAs values that block time. `free` and `unknown` do not. */
const BUSY_SHOW_AS = new Set(['busy', 'oof', 'tentative', 'workingelsewhere']);
/** Answers that concern one calendar only: it goes into `errors` while the others count. */
const PER_CALENDAR_STATUS = new Set([403, 404]);

/** Creates the event in `calendarId`. A retry with the same spec.ref does not make a second event. */
export async function graphCreateEvent(
  cfg: GraphConfig,
  fetch: HttpFetch,
  accessToken: string,
  calendarId: string,
  spec: EventSpec,
): Promise<WrittenEvent> {
  const url = `${trimBase(cfg.graphUrl)}/me/calendars/${encodeURIComponent(calendarId)}/events`;
  const json = await graphCall(cfg, fetch, url, accessToken, {
    method: 'POST',
    headers: { 'content-type': 'application/json', prefer: 'outlook.timezone="UTC"' },
    body: JSON.stringify({ ...eventBody(spec, false), transactionId: spec.ref }),
  });
  return writtenEvent(json, undefined);
}

/** Rewrites the event's fields from `spec`. A missing event throws bad_request (reason ErrorItemNotFound). */
export async function graphUpdateEvent(
  cfg: GraphConfig,
  fetch: HttpFetch,
  accessToken: string,
  eventId: string,
  spec: EventSpec,
): Promise<WrittenEvent> {
  const url = `${trimBase(cfg.graphUrl)}/me/events/${encodeURIComponent(eventId)}`;
  const json = await graphCall(cfg, fetch, url, accessToken, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', prefer: 'outlook.timezone="UTC"' },
    body: JSON.stringify(eventBody(spec, true)),
  });
  return writtenEvent(json, eventId);
}

/** Deletes the event; an event that is already gone (404) counts as deleted. */
export async function graphDeleteEvent(
  cfg: GraphConfig,
  fetch: HttpFetch,
  accessToken: string,
  eventId: string,
): Promise<void> {
  const url = `${trimBase(cfg.graphUrl)}/me/events/${encodeURIComponent(eventId)}`;
  try {
    await graphCall(cfg, fetch, url, accessToken, { method: 'DELETE' });
  } catch (err) {
    if (err instanceof ProviderError && err.status === 404) return;
    throw err;
  }
}

/**
 * Busy time of the user's calendars from their events: not cancelled, showAs busy / oof / tentative /
 * workingElsewhere, and not written by Kairos (no GRAPH_KAIROS_PROPERTY_ID property). A calendar
 * answering 403 / 404 (or whose paging does not end) goes into `errors`; 401, 429 and 5xx throw.
 */
export async function graphEventsBusy(
  cfg: GraphConfig,
  fetch: HttpFetch,
  accessToken: string,
  q: GraphEventsBusyQuery,
): Promise<BusyResult> {
  const window = { start: q.start, end: q.end };
  assertWindow(window);
  const ids = [...new Set(q.calendarIds)];
  if (ids.length === 0) return { busy: [], errors: [] };
  const results = await mapLimit(ids, CONCURRENCY, (id) =>
    calendarViewBusy(cfg, fetch, accessToken, id, window, q.withTitles === true),
  );
  return busyResultOf(results, window, q.withTitles === true);
}

async function calendarViewBusy(
  cfg: GraphConfig,
  fetch: HttpFetch,
  accessToken: string,
  calendarId: string,
  window: Interval,
  withTitles: boolean,
): Promise<TitledInterval[] | CalendarError> {
  const base = trimBase(cfg.graphUrl);
  const expand = `singleValueExtendedProperties($filter=id eq '${GRAPH_KAIROS_PROPERTY_ID.replace(/'/g, "''")}')`;
  const query = [
    `startDateTime=${encodeURIComponent(new Date(window.start).toISOString())}`,
    `endDateTime=${encodeURIComponent(new Date(window.end).toISOString())}`,
    `$select=${encodeURIComponent(`showAs,start,end,isCancelled,isAllDay${withTitles ? ',subject' : ''}`)}`,
    `$expand=${encodeURIComponent(expand)}`,
    `$top=${PAGE_SIZE}`,
  ].join('&');
  const first = `${base}/me/calendars/${encodeURIComponent(calendarId)}/calendarView?${query}`;
  const busy: TitledInterval[] = [];
  let failed: CalendarError | undefined;
  const complete = await readPages(first, MAX_PAGES, async (url) => {
    let json: unknown;
    try {
      json = await graphCall(cfg, fetch, url, accessToken, {
        method: 'GET',
        headers: { prefer: 'outlook.timezone="UTC"' },
      });
    } catch (err) {
      if (err instanceof ProviderError && PER_CALENDAR_STATUS.has(err.status)) {
        failed = { calendarId, reason: err.reason ?? `http_${err.status}` };
        return undefined;
      }
      throw err;
    }
    const value = isRecord(json) && Array.isArray(json.value) ? json.value : [];
    for (const ev of value) {
      if (!isRecord(ev) || ev.isCancelled === true) continue;
      if (!BUSY_SHOW_AS.has((str(ev.showAs) ?? 'busy').toLowerCase())) continue;
      if (isKairosEvent(ev)) continue;
      const start = parseGraphDateTime(ev.start);
      const end = parseGraphDateTime(ev.end);
      if (start !== undefined && end !== undefined && end > start) {
        busy.push({ start, end, title: (str(ev.subject) ?? '').slice(0, 500) });
      }
    }
    // Only follow links back to the configured Graph origin: the bearer token goes with them.
    const next = graphNextLink(json, base);
    if (next !== 'foreign') return next;
    failed = { calendarId, reason: 'foreign_next_link' };
    return undefined;
  });
  if (failed) return failed;
  return complete ? busy : { calendarId, reason: 'paging_did_not_end' };
}

/** Whether the event carries the Kairos marker (extended property ids compare case-insensitively). */
function isKairosEvent(ev: Record<string, unknown>): boolean {
  const props = ev.singleValueExtendedProperties;
  if (!Array.isArray(props)) return false;
  const want = GRAPH_KAIROS_PROPERTY_ID.toLowerCase();
  return props.some((p) => isRecord(p) && str(p.id)?.toLowerCase() === want);
}

/**
 * The event fields Kairos owns. On update, an absent location is written as empty so a removed
 * location does not linger (PATCH merges).
 */
function eventBody(spec: EventSpec, update: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    subject: spec.title,
    body: { contentType: 'text', content: bodyText(spec) },
    start: { dateTime: graphDateTime(spec.start), timeZone: 'UTC' },
    end: { dateTime: graphDateTime(spec.end), timeZone: 'UTC' },
    showAs: 'busy',
    isReminderOn: true,
    singleValueExtendedProperties: [{ id: GRAPH_KAIROS_PROPERTY_ID, value: spec.meetingKey }],
  };
  if (spec.location) out.location = { displayName: spec.location };
  else if (update) out.location = { displayName: '' };
  return out;
}

/** The description, then the guests one per line (they are not Graph attendees, see the header). */
function bodyText(spec: Pick<EventSpec, 'description' | 'attendees'>): string {
  const parts: string[] = [];
  if (spec.description) parts.push(spec.description);
  if (spec.attendees.length > 0) {
    const guests = spec.attendees.map((a) => (a.name ? `${a.name} <${a.email}>` : a.email));
    parts.push(['Guests:', ...guests].join('\n'));
  }
  return parts.join('\n\n');
}

function writtenEvent(json: unknown, fallbackId: string | undefined): WrittenEvent {
  const id = (isRecord(json) ? str(json.id) : undefined) ?? fallbackId;
  if (!id) throw new ProviderError('unavailable', 200, 'Microsoft Graph answered an event without id');
  return { id, etag: (isRecord(json) ? str(json['@odata.etag']) : undefined) ?? null };
}
