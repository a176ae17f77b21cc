/**
 * Google Calendar API v3 events: writing Kairos's own events (insert, patch, delete, all with
 * sendUpdates=none) and reading busy time from events.list, which — unlike freeBusy — lets Kairos
 * skip the events it wrote itself (marked with `extendedProperties.private[KAIROS_PROPERTY]`).
 */
import { DateTime, IANAZone } from 'luxon';
import { isRecord, ProviderError, str } from './errors.js';
import { type EventSpec, KAIROS_PROPERTY, type WrittenEvent } from './events.js';
import { type GoogleApiConfig, googleRequest as request } from './google.js';
import { nextPageTokenUrl, readPages } from './http.js';
import type { Interval } from '../../../lib/intervals.js';
import { isoUtcShort } from '../../../lib/time.js';
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

const CONCURRENCY = 3;
/** events.list's largest page. */
const PAGE_SIZE = 2500;
const MAX_PAGES = 100;
/** Only what the busy computation reads (Google partial-response syntax). */
const LIST_FIELDS =
  'timeZone,nextPageToken,items(id,status,transparency,start,end,attendees(self,responseStatus),extendedProperties/private)';
const LIST_FIELDS_TITLED = LIST_FIELDS.replace('items(id,', 'items(id,summary,');

export interface GoogleEventsBusyQuery {
  calendarIds: readonly string[];
  timeMin: number;
  timeMax: number;
  /** Also answer every busy occurrence with its summary (`events`). */
  withTitles?: boolean;
}

/**
 * Inserts the event with the client-set id `spec.ref`. When Google answers 409 `duplicate` (the id
 * exists: a retried insert whose first answer was lost, or an event deleted earlier), the existing
 * event is patched to the spec and confirmed instead, so a retry never makes a second event.
 */
export async function googleInsertEvent(
  cfg: GoogleApiConfig,
  fetch: HttpFetch,
  accessToken: string,
  calendarId: string,
  spec: EventSpec,
): Promise<WrittenEvent> {
  const url = `${eventsUrl(cfg, calendarId)}?sendUpdates=none`;
  try {
    const json = await request(cfg, fetch, url, accessToken, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: spec.ref, ...eventBody(spec, false) }),
    });
    return written(json, spec.ref);
  } catch (err) {
    if (err instanceof ProviderError && err.status === 409 && err.reason === 'duplicate') {
      return googlePatchEvent(cfg, fetch, accessToken, calendarId, spec.ref, spec);
    }
    throw err;
  }
}

/**
 * Brings an existing event to the spec (and back to `confirmed`). A missing event throws
 * ProviderError `bad_request` with reason `notFound` (404) or `deleted` (410); insert it then.
 */
export async function googlePatchEvent(
  cfg: GoogleApiConfig,
  fetch: HttpFetch,
  accessToken: string,
  calendarId: string,
  eventId: string,
  spec: EventSpec,
): Promise<WrittenEvent> {
  const url = `${eventUrl(cfg, calendarId, eventId)}?sendUpdates=none`;
  const json = await request(cfg, fetch, url, accessToken, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(eventBody(spec, true)),
  });
  return written(json, eventId);
}

/** Deletes the event; one that is already gone (404, 410) counts as deleted. */
export async function googleDeleteEvent(
  cfg: GoogleApiConfig,
  fetch: HttpFetch,
  accessToken: string,
  calendarId: string,
  eventId: string,
): Promise<void> {
  const url = `${eventUrl(cfg, calendarId, eventId)}?sendUpdates=none`;
  try {
    await request(cfg, fetch, url, accessToken, { method: 'DELETE' });
  } catch (err) {
    if (err instanceof ProviderError && (err.status === 404 || err.status === 410)) return;
    throw err;
  }
}

/**
 * Busy time from events.list: events that are not cancelled, not transparent ("free"), not declined
 * by the calendar's owner and not written by Kairos. All-day events are busy from midnight to
 * midnight in the calendar's time zone. A calendar answering 404, or 403 other than a rate limit,
 * is reported in `errors` while the others still count; other failures throw.
 */
export async function googleEventsBusy(
  cfg: GoogleApiConfig,
  fetch: HttpFetch,
  accessToken: string,
  q: GoogleEventsBusyQuery,
): Promise<BusyResult> {
  const window = { start: q.timeMin, end: q.timeMax };
  assertWindow(window);
  const ids = [...new Set(q.calendarIds)];
  if (ids.length === 0) return { busy: [], errors: [] };
  const results = await mapLimit(ids, CONCURRENCY, async (id): Promise<TitledInterval[] | CalendarError> => {
    try {
      return await calendarBusy(cfg, fetch, accessToken, id, window, q.withTitles === true);
    } catch (err) {
      if (
        err instanceof ProviderError &&
        (err.status === 404 || (err.status === 403 && err.code !== 'rate_limited'))
      ) {
        return { calendarId: id, reason: err.reason ?? (err.status === 404 ? 'notFound' : 'forbidden') };
      }
      throw err;
    }
  });
  return busyResultOf(results, window, q.withTitles === true);
}

async function calendarBusy(
  cfg: GoogleApiConfig,
  fetch: HttpFetch,
  accessToken: string,
  calendarId: string,
  window: Interval,
  withTitles: boolean,
): Promise<TitledInterval[]> {
  const busy: TitledInterval[] = [];
  const first = new URL(eventsUrl(cfg, calendarId));
  first.searchParams.set('timeMin', isoUtcShort(window.start));
  first.searchParams.set('timeMax', isoUtcShort(window.end));
  first.searchParams.set('singleEvents', 'true');
  first.searchParams.set('maxResults', String(PAGE_SIZE));
  first.searchParams.set('showDeleted', 'false');
  first.searchParams.set('fields', withTitles ? LIST_FIELDS_TITLED : LIST_FIELDS);
  const complete = await readPages(first.toString(), MAX_PAGES, async (url) => {
    const json = await request(cfg, fetch, url, accessToken, { method: 'GET' });
    const zone = calendarZone(isRecord(json) ? str(json.timeZone) : undefined);
    const items = isRecord(json) && Array.isArray(json.items) ? json.items : [];
    for (const it of items) {
      const interval = isRecord(it) && busyInterval(it, zone);
      if (interval) busy.push(interval);
    }
    return nextPageTokenUrl(url, json);
  });
  if (!complete) {
    throw new ProviderError('unavailable', 200, `events paging did not end for calendar ${calendarId}`);
  }
  return busy;
}

/** The event's busy interval, or undefined when it does not block time (or is unreadable). */
function busyInterval(ev: Record<string, unknown>, zone: string): TitledInterval | undefined {
  if (ev.status === 'cancelled' || ev.transparency === 'transparent') return undefined;
  const ext = isRecord(ev.extendedProperties) ? ev.extendedProperties : undefined;
  if (ext && isRecord(ext.private) && ext.private[KAIROS_PROPERTY] !== undefined) return undefined;
  const attendees = Array.isArray(ev.attendees) ? ev.attendees : [];
  const self: unknown = attendees.find((a) => isRecord(a) && a.self === true);
  if (isRecord(self) && self.responseStatus === 'declined') return undefined;
  const start = instant(ev.start, zone);
  const end = instant(ev.end, zone);
  if (start === undefined || end === undefined || end <= start) return undefined;
  return { start, end, title: (str(ev.summary) ?? '').slice(0, 500) };
}

/** `{dateTime}` (RFC 3339 with offset) or `{date}` (midnight in the calendar's zone) → epoch ms. */
function instant(t: unknown, zone: string): number | undefined {
  if (!isRecord(t)) return undefined;
  const dateTime = str(t.dateTime);
  if (dateTime !== undefined) {
    const ms = Date.parse(dateTime);
    return Number.isFinite(ms) ? ms : undefined;
  }
  const date = str(t.date);
  if (date === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const dt = DateTime.fromISO(date, { zone });
  return dt.isValid ? dt.toMillis() : undefined;
}

function calendarZone(tz: string | undefined): string {
  return tz && IANAZone.isValidZone(tz) ? tz : 'UTC';
}

/**
 * The event fields Kairos owns. Inserts omit null text fields; patches send them as empty strings
 * so a description or location removed from the meeting does not linger in the calendar.
 */
function eventBody(spec: EventSpec, patch: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { summary: spec.title };
  if (spec.description !== null || patch) body.description = spec.description ?? '';
  if (spec.location !== null || patch) body.location = spec.location ?? '';
  body.start = { dateTime: isoUtcShort(spec.start), timeZone: spec.timeZone };
  body.end = { dateTime: isoUtcShort(spec.end), timeZone: spec.timeZone };
  body.attendees = spec.attendees.map((a) =>
    a.name === null ? { email: a.email } : { email: a.email, displayName: a.name },
  );
  body.extendedProperties = { private: { [KAIROS_PROPERTY]: spec.meetingKey } };
  body.reminders = { useDefault: true };
  body.status = 'confirmed';
  return body;
}

function written(json: unknown, fallbackId: string): WrittenEvent {
  const rec = isRecord(json) ? json : {};
  return { id: str(rec.id) ?? fallbackId, etag: str(rec.etag) ?? null };
}

function eventsUrl(cfg: GoogleApiConfig, calendarId: string): string {
  return `${trimBase(cfg.apiUrl)}/calendars/${encodeURIComponent(calendarId)}/events`;
}

function eventUrl(cfg: GoogleApiConfig, calendarId: string, eventId: string): string {
  return `${eventsUrl(cfg, calendarId)}/${encodeURIComponent(eventId)}`;
}
