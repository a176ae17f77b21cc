/**
 * Google emulator: OAuth 2.0 (accounts.google.com / oauth2.googleapis.com) and the Calendar API v3
 * freeBusy, calendarList and events endpoints, with Google's wire formats and limits. Calendars hold
 * events; freeBusy is computed from them (opaque, not cancelled — Kairos's own events included, as
 * Google does).
 *
 *   GET    /o/oauth2/v2/auth                      → 302 redirect_uri?code&state
 *   POST   /token                                 → tokens, {error, error_description} on failure
 *   POST   /revoke                                → 200 {}, or 400 {error: invalid_token} (RFC 7009 style)
 *   POST   /calendar/v3/freeBusy                  → {kind, timeMin, timeMax, calendars: {id: {busy|errors}}}
 *   GET    /calendar/v3/users/me/calendarList     → {kind, items, nextPageToken?}
 *   GET    /calendar/v3/calendars/{cal}/events    → {kind, summary, timeZone, items, nextPageToken?}
 *          (timeMin, timeMax, singleEvents, maxResults, pageToken, showDeleted)
 *   POST   /calendar/v3/calendars/{cal}/events    → the event; 409 duplicate when the client id exists
 *   GET    /calendar/v3/calendars/{cal}/events/{id} → the event (also when cancelled); 404 notFound
 *   PATCH  /calendar/v3/calendars/{cal}/events/{id} → merges the given fields, bumps etag and sequence
 *   DELETE /calendar/v3/calendars/{cal}/events/{id} → 204, status becomes cancelled; again → 410 deleted
 *
 * `{cal}` may be `primary` (the token's user). Writes accept `sendUpdates` (all, externalOnly, none),
 * recorded in `eventWrites`.
 */
import { randomBytes } from 'node:crypto';
import { DateTime, IANAZone } from 'luxon';
import type { OAuthConfig } from '../../src/modules/calendars/providers/oauth.js';
import {
  type EmuRequest,
  type EmuResponse,
  isObject,
  json,
  pageAt,
  pageSize,
  parseJson,
  resetCounts,
  startHttpServer,
  type TimeInput,
  toMs,
} from './http.js';
import {
  apiGate,
  type AuthControls,
  authControls,
  FailureQueue,
  holdApiCalls,
  type OAuthDialect,
  OAuthServer,
} from './oauth-server.js';

export interface GoogleEmulatorOptions {
  clientId?: string;
  clientSecret?: string;
  redirectUris?: readonly string[];
  /** Access-token lifetime, default 3600 s. */
  tokenLifetimeSeconds?: number;
  /** calendarList page size cap (Google's is 250). */
  maxPageSize?: number;
  /** events.list page size cap, default 250 (Google's default page; its maximum is 2500). */
  eventsPageSize?: number;
  /** The default signed-in user; their primary calendar id is this address. */
  user?: string;
  now?: () => number;
}

interface Calendar {
  id: string;
  summary: string;
  owner: string;
  primary: boolean;
  timeZone: string;
  /** By id, in insertion order; deleted events stay with status `cancelled`. */
  events: Map<string, EventResource>;
}

export type EventStatus = 'confirmed' | 'tentative' | 'cancelled';

export interface EventAttendee {
  email: string;
  displayName?: string;
  /** needsAction (default), declined, tentative, accepted. */
  responseStatus?: string;
  optional?: boolean;
  /** Answered as set; otherwise true for the attendee whose email is the calendar's id. */
  self?: boolean;
}

/**
 * One stored event. `start`/`end` are epoch ms; an all-day event holds the UTC midnights of its
 * dates (end exclusive) and is busy from midnight to midnight in the calendar's time zone.
 */
export interface EventResource {
  id: string;
  status: EventStatus;
  summary?: string;
  description?: string;
  location?: string;
  start: number;
  end: number;
  allDay?: boolean;
  /** `start.timeZone` as the client sent it (answered on start and end). */
  timeZone?: string;
  transparency?: 'opaque' | 'transparent';
  attendees: EventAttendee[];
  extendedProperties?: { private?: Record<string, string>; shared?: Record<string, string> };
  /** Default: the calendar itself. */
  organizer?: { email: string; displayName?: string };
  reminders?: unknown;
  /** `"<n>"`, new on every change. */
  etag: string;
  sequence: number;
  created: number;
  updated: number;
}

/** What a test passes to addEvent: any stored field, times as epoch ms, ISO strings or Dates. */
export type EventInput = Partial<Omit<EventResource, 'start' | 'end' | 'etag' | 'created' | 'updated'>> & {
  start: TimeInput;
  end: TimeInput;
};

/** One events write (insert, patch, delete) as the emulator received it. */
export interface EventWrite {
  op: 'insert' | 'patch' | 'delete';
  /** As in the path (`primary` stays `primary`). */
  calendarId: string;
  /** The path's event id, or the insert body's `id` (null when the client let Google choose). */
  eventId: string | null;
  /** The `sendUpdates` query value, null when absent. */
  sendUpdates: string | null;
}

export interface FreeBusyCall {
  timeMin: string;
  timeMax: string;
  ids: string[];
}

/** Google rejects freeBusy ranges beyond about three months. */
export const GOOGLE_EMULATOR_MAX_RANGE_MS = 90 * 86_400_000;
export const GOOGLE_EMULATOR_MAX_CALENDARS = 50;

const dialect: OAuthDialect = {
  tokenError: (error, description) => ({ error, error_description: description }),
  wantsRefreshToken: (q) => q.get('access_type') === 'offline',
  rotateRefreshTokens: false,
  grantedScope: (requested) => requested.split(/\s+/).filter(Boolean).join(' '),
};

export interface GoogleEmulator extends AuthControls {
  url: string;
  /** For the Calendar client config: `${url}/calendar/v3`. */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  oauthConfig(): OAuthConfig;
  oauth: OAuthServer;
  /**
   * Adds a busy block (an opaque confirmed event); creates the calendar (owned by the current user)
   * if needed.
   */
  addBusy(calendarId: string, start: TimeInput, end: TimeInput): void;
  /**
   * Adds an event as is (transparent, declined, all-day with `allDay` and date strings, cancelled,
   * organised by someone else...); creates the calendar if needed. Returns the stored event.
   */
  addEvent(calendarId: string, event: EventInput): EventResource;
  /** Every event of the calendar (`primary` = the current user's), cancelled ones included; copies. */
  events(calendarId: string): EventResource[];
  /**
   * The next n event writes (insert, patch, delete) take effect, but their answer is replaced by
   * 503 backendError: a response lost after the write happened.
   */
  dropNextResponse(n?: number): void;
  addCalendar(
    id: string,
    opts?: { summary?: string; primary?: boolean; owner?: string; timeZone?: string },
  ): void;
  /** Whom the next authorize signs in as (default the `user` option). */
  setUser(email: string): void;
  requests: {
    authorize: number;
    token: number;
    freeBusy: number;
    calendarList: number;
    eventsList: number;
    eventsGet: number;
    eventsInsert: number;
    eventsPatch: number;
    eventsDelete: number;
    apiErrors: number;
  };
  freeBusyCalls: FreeBusyCall[];
  /** Every event write in order, with its `sendUpdates`. */
  eventWrites: EventWrite[];
  /** The `sendUpdates` query value of every event write, in order (null when absent). */
  sendUpdates: (string | null)[];
  reset(): void;
  close(): Promise<void>;
}

function googleApiError(status: number, message: string, reason: string, extra: Record<string, string> = {}) {
  const statusNames: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    409: 'ALREADY_EXISTS',
    410: 'GONE',
    429: 'RESOURCE_EXHAUSTED',
    500: 'INTERNAL',
    503: 'UNAVAILABLE',
  };
  const domain = reason === 'rateLimitExceeded' ? 'usageLimits' : 'global';
  return json(
    status,
    {
      error: {
        code: status,
        message,
        errors: [{ message, domain, reason }],
        status: statusNames[status] ?? 'UNKNOWN',
      },
    },
    extra,
  );
}

function unauthenticated(): EmuResponse {
  return googleApiError(
    401,
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie ' +
      'or other valid authentication credential.',
    'authError',
    { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
  );
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Google's own event ids are base32hex; so must client-chosen ones be. */
const EVENT_ID = /^[a-v0-9]{5,1024}$/;
const BASE32HEX = 'abcdefghijklmnopqrstuv0123456789';

function generateEventId(): string {
  return [...randomBytes(26)].map((b) => BASE32HEX[b % 32]).join('');
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const SEND_UPDATES = new Set(['all', 'externalOnly', 'none']);

/** The instants an event blocks: all-day events from midnight to midnight in the calendar's zone. */
function span(ev: EventResource, cal: Calendar): { start: number; end: number } {
  if (!ev.allDay) return { start: ev.start, end: ev.end };
  const midnight = (ms: number) => DateTime.fromISO(isoDate(ms), { zone: cal.timeZone }).toMillis();
  return { start: midnight(ev.start), end: midnight(ev.end) };
}

type ParsedTime = { ms: number; allDay: boolean; timeZone?: string };

/** An EventDateTime (`{dateTime, timeZone?}` or `{date}`) → epoch ms, or Google's 400 answer. */
function parseEventTime(v: unknown, which: 'start' | 'end'): ParsedTime | EmuResponse {
  if (!isObject(v)) return googleApiError(400, `Missing ${which} time.`, 'required');
  const tz = v.timeZone;
  if (tz !== undefined && (typeof tz !== 'string' || !IANAZone.isValidZone(tz))) {
    return googleApiError(400, `Invalid time zone definition for ${which} time.`, 'timeZoneInvalid');
  }
  const withZone = (p: ParsedTime): ParsedTime => (typeof tz === 'string' ? { ...p, timeZone: tz } : p);
  if (typeof v.dateTime === 'string') {
    if (RFC3339.test(v.dateTime)) return withZone({ ms: Date.parse(v.dateTime), allDay: false });
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(v.dateTime)) {
      if (typeof tz !== 'string') {
        return googleApiError(400, `Missing time zone definition for ${which} time.`, 'required');
      }
      const dt = DateTime.fromISO(v.dateTime, { zone: tz });
      if (dt.isValid) return withZone({ ms: dt.toMillis(), allDay: false });
    }
    return googleApiError(400, `Invalid value for: ${which}.dateTime`, 'invalid');
  }
  if (typeof v.date === 'string') {
    const ms = Date.parse(`${v.date}T00:00:00Z`);
    if (/^\d{4}-\d{2}-\d{2}$/.test(v.date) && Number.isFinite(ms)) return withZone({ ms, allDay: true });
    return googleApiError(400, `Invalid value for: ${which}.date`, 'invalid');
  }
  return googleApiError(400, `Missing ${which} time.`, 'required');
}

function isResponse(v: ParsedTime | EmuResponse): v is EmuResponse {
  return 'status' in v;
}

/**
 * Applies an insert or patch body to `ev` (a copy; the caller stores it only on success). Patch
 * semantics: given fields replace, absent ones stay, null clears, arrays replace, extended
 * properties merge key by key (null deletes a key).
 */
function applyEventFields(
  ev: EventResource,
  b: Record<string, unknown>,
  insert: boolean,
): EmuResponse | undefined {
  for (const k of ['summary', 'description', 'location'] as const) {
    if (!(k in b)) continue;
    const v = b[k];
    if (v === null) delete ev[k];
    else if (typeof v === 'string') ev[k] = v;
    else return googleApiError(400, `Invalid value for: ${k}`, 'invalid');
  }
  if ('status' in b) {
    if (b.status !== 'confirmed' && b.status !== 'tentative' && b.status !== 'cancelled') {
      return googleApiError(400, 'Invalid value for: status', 'invalid');
    }
    ev.status = b.status;
  }
  if ('transparency' in b) {
    if (b.transparency === null) delete ev.transparency;
    else if (b.transparency === 'opaque' || b.transparency === 'transparent')
      ev.transparency = b.transparency;
    else return googleApiError(400, 'Invalid value for: transparency', 'invalid');
  }
  if ('attendees' in b) {
    const list = b.attendees ?? [];
    if (!Array.isArray(list)) return googleApiError(400, 'Invalid value for: attendees', 'invalid');
    const attendees: EventAttendee[] = [];
    for (const a of list) {
      if (!isObject(a) || typeof a.email !== 'string' || !a.email.includes('@')) {
        return googleApiError(400, 'Missing attendee email.', 'required');
      }
      const att: EventAttendee = {
        email: a.email,
        responseStatus: typeof a.responseStatus === 'string' ? a.responseStatus : 'needsAction',
      };
      if (typeof a.displayName === 'string') att.displayName = a.displayName;
      if (a.optional === true) att.optional = true;
      attendees.push(att);
    }
    ev.attendees = attendees;
  }
  if ('extendedProperties' in b) {
    const ext = b.extendedProperties;
    if (ext === null) delete ev.extendedProperties;
    else if (!isObject(ext)) return googleApiError(400, 'Invalid value for: extendedProperties', 'invalid');
    else {
      const merged = { ...ev.extendedProperties };
      for (const scope of ['private', 'shared'] as const) {
        if (!(scope in ext)) continue;
        const given = ext[scope];
        if (given === null) {
          delete merged[scope];
          continue;
        }
        if (!isObject(given))
          return googleApiError(400, `Invalid value for: extendedProperties.${scope}`, 'invalid');
        const props: Record<string, string> = { ...merged[scope] };
        for (const [key, value] of Object.entries(given)) {
          if (value === null) delete props[key];
          else if (typeof value === 'string') props[key] = value;
          else return googleApiError(400, `Invalid value for: extendedProperties.${scope}`, 'invalid');
        }
        merged[scope] = props;
      }
      ev.extendedProperties = merged;
    }
  }
  if ('reminders' in b) ev.reminders = b.reminders;
  if (insert || 'start' in b || 'end' in b) {
    const current = (ms: number): ParsedTime => {
      const p: ParsedTime = { ms, allDay: ev.allDay === true };
      if (ev.timeZone !== undefined) p.timeZone = ev.timeZone;
      return p;
    };
    const start = insert || 'start' in b ? parseEventTime(b.start, 'start') : current(ev.start);
    if (isResponse(start)) return start;
    const end = insert || 'end' in b ? parseEventTime(b.end, 'end') : current(ev.end);
    if (isResponse(end)) return end;
    if (start.allDay !== end.allDay) {
      return googleApiError(
        400,
        'Start and end times must either both be date or both be dateTime.',
        'invalid',
      );
    }
    if (end.ms <= start.ms)
      return googleApiError(400, 'The specified time range is empty.', 'timeRangeEmpty');
    ev.start = start.ms;
    ev.end = end.ms;
    if (start.allDay) ev.allDay = true;
    else delete ev.allDay;
    const tz = start.timeZone ?? end.timeZone;
    if (tz !== undefined) ev.timeZone = tz;
    else if ('start' in b) delete ev.timeZone;
  }
  return undefined;
}

export async function startGoogleEmulator(opts: GoogleEmulatorOptions = {}): Promise<GoogleEmulator> {
  const defaultUser = opts.user ?? 'user@example.com';
  const oauthOpts: ConstructorParameters<typeof OAuthServer>[1] = {
    clientId: opts.clientId ?? 'google-client-id.apps.googleusercontent.com',
    clientSecret: opts.clientSecret ?? 'google-client-secret',
    tokenLifetimeSeconds: opts.tokenLifetimeSeconds ?? 3600,
  };
  if (opts.redirectUris) oauthOpts.redirectUris = opts.redirectUris;
  if (opts.now) oauthOpts.now = opts.now;
  const oauth = new OAuthServer(dialect, oauthOpts);
  oauth.currentUser = defaultUser;
  const maxPageSize = opts.maxPageSize ?? 250;
  const eventsPageSize = Math.max(1, Math.min(opts.eventsPageSize ?? 250, 2500));
  const now = opts.now ?? Date.now;
  const calendars = new Map<string, Calendar>();
  const failures = new FailureQueue();
  const requests = {
    authorize: 0,
    token: 0,
    freeBusy: 0,
    calendarList: 0,
    eventsList: 0,
    eventsGet: 0,
    eventsInsert: 0,
    eventsPatch: 0,
    eventsDelete: 0,
    apiErrors: 0,
  };
  const freeBusyCalls: FreeBusyCall[] = [];
  const eventWrites: EventWrite[] = [];
  const sendUpdates: (string | null)[] = [];
  let etagCounter = 0;
  let dropResponses = 0;
  const nextEtag = () => `"${++etagCounter}"`;

  const addCalendar: GoogleEmulator['addCalendar'] = (id, o = {}) => {
    const owner = o.owner ?? oauth.currentUser;
    const existing = calendars.get(id);
    if (existing) {
      if (o.summary !== undefined) existing.summary = o.summary;
      if (o.primary !== undefined) existing.primary = o.primary;
      if (o.timeZone !== undefined) existing.timeZone = o.timeZone;
      return;
    }
    calendars.set(id, {
      id,
      summary: o.summary ?? id,
      owner,
      primary: o.primary ?? id === owner,
      timeZone: o.timeZone ?? 'UTC',
      events: new Map(),
    });
  };
  addCalendar(defaultUser, { summary: defaultUser, primary: true, owner: defaultUser });

  const gate = apiGate(oauth, failures, requests, {
    unauthorized: () => unauthenticated(),
    /** failNext: 429 and 403 answer Google's rateLimitExceeded body, other statuses a plain API error. */
    failure(status, headers) {
      if (status === 429 || status === 403) {
        return googleApiError(status, 'Rate Limit Exceeded', 'rateLimitExceeded', headers);
      }
      if (status === 401) return unauthenticated();
      if (status >= 500) return googleApiError(status, 'Backend Error', 'backendError', headers);
      return googleApiError(status, 'Bad Request', 'badRequest', headers);
    },
  });

  const freeBusy = (req: EmuRequest, user: string): EmuResponse => {
    requests.freeBusy++;
    const parsed = parseJson(req);
    if (!parsed) return googleApiError(400, 'Parse Error', 'parseError');
    const body = parsed.value;
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (typeof b.timeMin !== 'string') return googleApiError(400, 'Missing timeMin parameter.', 'required');
    if (typeof b.timeMax !== 'string') return googleApiError(400, 'Missing timeMax parameter.', 'required');
    const rfc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
    if (!rfc.test(b.timeMin) || !rfc.test(b.timeMax)) return googleApiError(400, 'Bad Request', 'badRequest');
    const min = Date.parse(b.timeMin);
    const max = Date.parse(b.timeMax);
    if (max <= min) return googleApiError(400, 'The specified time range is empty.', 'timeRangeEmpty');
    if (max - min > GOOGLE_EMULATOR_MAX_RANGE_MS) {
      return googleApiError(400, 'The requested time range is too long.', 'timeRangeTooLong');
    }
    const items = Array.isArray(b.items) ? b.items : [];
    const ids = items.map((it: unknown) =>
      typeof it === 'object' && it !== null && typeof (it as { id?: unknown }).id === 'string'
        ? (it as { id: string }).id
        : '',
    );
    if (ids.length > GOOGLE_EMULATOR_MAX_CALENDARS) {
      return googleApiError(400, 'Too many calendars requested.', 'tooManyCalendarsRequested');
    }
    freeBusyCalls.push({ timeMin: b.timeMin, timeMax: b.timeMax, ids });
    const out: Record<string, unknown> = {};
    for (const id of ids) {
      const cal = calendars.get(id === 'primary' ? user : id);
      if (!cal) {
        out[id] = { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] };
        continue;
      }
      const clipped = [...cal.events.values()]
        .filter((ev) => ev.status !== 'cancelled' && ev.transparency !== 'transparent')
        .map((ev) => span(ev, cal))
        .filter((x) => x.end > min && x.start < max)
        .map((x) => ({ start: Math.max(x.start, min), end: Math.min(x.end, max) }))
        .sort((x, y) => x.start - y.start);
      const merged: { start: number; end: number }[] = [];
      for (const x of clipped) {
        const last = merged[merged.length - 1];
        if (last && x.start <= last.end) last.end = Math.max(last.end, x.end);
        else merged.push({ ...x });
      }
      out[id] = { busy: merged.map((x) => ({ start: rfc3339(x.start), end: rfc3339(x.end) })) };
    }
    return json(200, {
      kind: 'calendar#freeBusy',
      timeMin: rfc3339(min),
      timeMax: rfc3339(max),
      calendars: out,
    });
  };

  const calendarList = (req: EmuRequest, user: string): EmuResponse => {
    requests.calendarList++;
    const mine = [...calendars.values()].filter((c) => c.owner === user);
    const size = pageSize(req.url.searchParams.get('maxResults'), maxPageSize, 100);
    const offset = Number(req.url.searchParams.get('pageToken') ?? '0') || 0;
    const page = pageAt(mine, offset, size);
    const body: Record<string, unknown> = {
      kind: 'calendar#calendarList',
      etag: `"${mine.length}"`,
      items: page.items.map((c) => ({
        kind: 'calendar#calendarListEntry',
        etag: `"${c.id.length}"`,
        id: c.id,
        summary: c.summary,
        timeZone: c.timeZone,
        accessRole: 'owner',
        ...(c.primary ? { primary: true } : {}),
        selected: true,
      })),
    };
    if (page.next !== undefined) body.nextPageToken = String(page.next);
    else body.nextSyncToken = `sync_${mine.length}`;
    return json(200, body);
  };

  const renderEvent = (ev: EventResource, cal: Calendar): Record<string, unknown> => {
    const time = (ms: number): Record<string, string> => {
      if (ev.allDay) return { date: isoDate(ms) };
      const local = DateTime.fromMillis(ms, { zone: cal.timeZone }).toISO({ suppressMilliseconds: true });
      return { dateTime: local ?? rfc3339(ms), ...(ev.timeZone ? { timeZone: ev.timeZone } : {}) };
    };
    const out: Record<string, unknown> = {
      kind: 'calendar#event',
      etag: ev.etag,
      id: ev.id,
      status: ev.status,
      htmlLink: `https://www.google.com/calendar/event?eid=${Buffer.from(`${ev.id} ${cal.id}`).toString('base64url')}`,
      created: new Date(ev.created).toISOString(),
      updated: new Date(ev.updated).toISOString(),
    };
    if (ev.summary !== undefined) out.summary = ev.summary;
    if (ev.description !== undefined) out.description = ev.description;
    if (ev.location !== undefined) out.location = ev.location;
    out.creator = { email: cal.owner };
    out.organizer = ev.organizer
      ? { ...ev.organizer, ...(ev.organizer.email === cal.id ? { self: true } : {}) }
      : { email: cal.id, displayName: cal.summary, self: true };
    out.start = time(ev.start);
    out.end = time(ev.end);
    if (ev.transparency !== undefined) out.transparency = ev.transparency;
    out.iCalUID = `${ev.id}@google.com`;
    out.sequence = ev.sequence;
    if (ev.attendees.length > 0) {
      out.attendees = ev.attendees.map((a) => {
        const self = a.self ?? a.email.toLowerCase() === cal.id.toLowerCase();
        return { ...a, ...(self ? { self: true } : {}) };
      });
    }
    const ext = ev.extendedProperties;
    if (ext && (ext.private !== undefined || ext.shared !== undefined)) out.extendedProperties = ext;
    out.reminders = ev.reminders ?? { useDefault: true };
    out.eventType = 'default';
    return out;
  };

  const recordWrite = (op: EventWrite['op'], calendarId: string, eventId: string | null, req: EmuRequest) => {
    const value = req.url.searchParams.get('sendUpdates');
    eventWrites.push({ op, calendarId, eventId, sendUpdates: value });
    sendUpdates.push(value);
  };

  /** 400 for a sendUpdates value Google does not know; undefined when fine or absent. */
  const badSendUpdates = (req: EmuRequest): EmuResponse | undefined => {
    const v = req.url.searchParams.get('sendUpdates');
    if (v === null || SEND_UPDATES.has(v)) return undefined;
    return googleApiError(400, 'Invalid value for: sendUpdates', 'invalid');
  };

  const parseBody = (req: EmuRequest): { body: Record<string, unknown> } | { error: EmuResponse } => {
    const parsed = parseJson(req);
    return parsed && isObject(parsed.value)
      ? { body: parsed.value }
      : { error: googleApiError(400, 'Parse Error', 'parseError') };
  };

  const listEvents = (req: EmuRequest, cal: Calendar): EmuResponse => {
    const q = req.url.searchParams;
    const bound = (name: 'timeMin' | 'timeMax'): number | EmuResponse | undefined => {
      const v = q.get(name);
      if (v === null) return undefined;
      if (!RFC3339.test(v)) return googleApiError(400, 'Bad Request', 'badRequest');
      return Date.parse(v);
    };
    const min = bound('timeMin');
    if (typeof min === 'object') return min;
    const max = bound('timeMax');
    if (typeof max === 'object') return max;
    if (min !== undefined && max !== undefined && max <= min) {
      return googleApiError(400, 'The specified time range is empty.', 'timeRangeEmpty');
    }
    const maxResults = q.get('maxResults');
    let size = eventsPageSize;
    if (maxResults !== null) {
      if (!/^\d+$/.test(maxResults) || Number(maxResults) < 1) {
        return googleApiError(400, 'Invalid value for: maxResults', 'invalid');
      }
      size = Math.min(size, Number(maxResults));
    }
    const token = q.get('pageToken');
    if (token !== null && !/^\d+$/.test(token)) return googleApiError(400, 'Invalid page token.', 'invalid');
    const offset = token === null ? 0 : Number(token);
    const showDeleted = q.get('showDeleted') === 'true';
    const matching = [...cal.events.values()]
      .filter((ev) => showDeleted || ev.status !== 'cancelled')
      .map((ev) => ({ ev, s: span(ev, cal) }))
      .filter(({ s }) => (min === undefined || s.end > min) && (max === undefined || s.start < max))
      .sort((a, b) => a.s.start - b.s.start || (a.ev.id < b.ev.id ? -1 : a.ev.id > b.ev.id ? 1 : 0));
    const page = pageAt(matching, offset, size);
    const body: Record<string, unknown> = {
      kind: 'calendar#events',
      etag: `"${etagCounter}"`,
      summary: cal.summary,
      updated: new Date(now()).toISOString(),
      timeZone: cal.timeZone,
      accessRole: 'owner',
      defaultReminders: [],
      items: page.items.map(({ ev }) => renderEvent(ev, cal)),
    };
    if (page.next !== undefined) body.nextPageToken = String(page.next);
    else body.nextSyncToken = `sync_${etagCounter}`;
    return json(200, body);
  };

  const insertEvent = (req: EmuRequest, cal: Calendar): EmuResponse => {
    const parsed = parseBody(req);
    if ('error' in parsed) return parsed.error;
    const b = parsed.body;
    let id: string;
    if (b.id === undefined) {
      do id = generateEventId();
      while (cal.events.has(id));
    } else {
      if (typeof b.id !== 'string' || !EVENT_ID.test(b.id)) {
        return googleApiError(400, 'Invalid resource id value.', 'invalid');
      }
      id = b.id;
      if (cal.events.has(id))
        return googleApiError(409, 'The requested identifier already exists.', 'duplicate');
    }
    const at = now();
    const ev: EventResource = {
      id,
      status: 'confirmed',
      start: 0,
      end: 0,
      attendees: [],
      etag: '',
      sequence: 0,
      created: at,
      updated: at,
    };
    const err = applyEventFields(ev, b, true);
    if (err) return err;
    ev.etag = nextEtag();
    cal.events.set(id, ev);
    return json(200, renderEvent(ev, cal));
  };

  const patchEvent = (req: EmuRequest, cal: Calendar, eventId: string): EmuResponse => {
    const existing = cal.events.get(eventId);
    if (!existing) return googleApiError(404, 'Not Found', 'notFound');
    const parsed = parseBody(req);
    if ('error' in parsed) return parsed.error;
    const b = parsed.body;
    const ev = structuredClone(existing);
    const err = applyEventFields(ev, b, false);
    if (err) return err;
    ev.etag = nextEtag();
    ev.sequence++;
    ev.updated = now();
    cal.events.set(eventId, ev);
    return json(200, renderEvent(ev, cal));
  };

  const deleteEvent = (cal: Calendar, eventId: string): EmuResponse => {
    const ev = cal.events.get(eventId);
    if (!ev) return googleApiError(404, 'Not Found', 'notFound');
    if (ev.status === 'cancelled') return googleApiError(410, 'Resource has been deleted', 'deleted');
    ev.status = 'cancelled';
    ev.etag = nextEtag();
    ev.updated = now();
    return { status: 204 };
  };

  const EVENTS_PATH = /^\/calendar\/v3\/calendars\/([^/]+)\/events(?:\/([^/]+))?$/;

  /** The events routes, or undefined when the path is not one of them. */
  const eventsRoute = (req: EmuRequest, user: string): EmuResponse | undefined => {
    const m = EVENTS_PATH.exec(req.url.pathname);
    if (!m) return undefined;
    const collection = m[2] === undefined;
    const op = collection
      ? ({ GET: 'list', POST: 'insert' } as const)[req.method as 'GET' | 'POST']
      : ({ GET: 'get', PATCH: 'patch', DELETE: 'delete' } as const)[req.method as 'GET' | 'PATCH' | 'DELETE'];
    if (op === undefined) return undefined;
    const counter = (
      {
        list: 'eventsList',
        insert: 'eventsInsert',
        get: 'eventsGet',
        patch: 'eventsPatch',
        delete: 'eventsDelete',
      } as const
    )[op];
    requests[counter]++;
    let pathId: string;
    let eventId: string | undefined;
    try {
      pathId = decodeURIComponent(m[1] as string);
      eventId = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
    } catch {
      return googleApiError(400, 'Bad Request', 'badRequest');
    }
    if (op === 'insert' || op === 'patch' || op === 'delete') {
      let bodyId: string | null = null;
      if (op === 'insert') {
        const parsed = parseBody(req);
        if ('body' in parsed && typeof parsed.body.id === 'string') bodyId = parsed.body.id;
      }
      recordWrite(op, pathId, eventId ?? bodyId, req);
      const bad = badSendUpdates(req);
      if (bad) return bad;
    }
    const cal = calendars.get(pathId === 'primary' ? user : pathId);
    if (!cal) return googleApiError(404, 'Not Found', 'notFound');
    if (op === 'list') return listEvents(req, cal);
    if (op === 'get') {
      const ev = cal.events.get(eventId as string);
      return ev ? json(200, renderEvent(ev, cal)) : googleApiError(404, 'Not Found', 'notFound');
    }
    const res =
      op === 'insert'
        ? insertEvent(req, cal)
        : op === 'patch'
          ? patchEvent(req, cal, eventId as string)
          : deleteEvent(cal, eventId as string);
    if (dropResponses > 0) {
      dropResponses--;
      requests.apiErrors++;
      return googleApiError(503, 'Backend Error', 'backendError');
    }
    return res;
  };

  const storeEvent = (calendarId: string, input: EventInput): EventResource => {
    const id = calendarId === 'primary' ? oauth.currentUser : calendarId;
    if (!calendars.has(id)) addCalendar(id);
    const cal = calendars.get(id) as Calendar;
    const start = toMs(input.start);
    const end = toMs(input.end);
    if (end <= start) throw new RangeError('end must be after start');
    const eventId = input.id ?? generateEventId();
    if (cal.events.has(eventId)) throw new Error(`event ${eventId} already exists in ${id}`);
    const at = now();
    const ev: EventResource = {
      ...structuredClone(input),
      id: eventId,
      status: input.status ?? 'confirmed',
      start,
      end,
      attendees: structuredClone(input.attendees ?? []),
      etag: nextEtag(),
      sequence: input.sequence ?? 0,
      created: at,
      updated: at,
    };
    cal.events.set(eventId, ev);
    return structuredClone(ev);
  };

  const server = await startHttpServer((req) => {
    const path = req.url.pathname;
    if (req.method === 'GET' && path === '/o/oauth2/v2/auth') {
      requests.authorize++;
      return oauth.authorize(req.url.searchParams);
    }
    if (req.method === 'POST' && path === '/token') {
      requests.token++;
      return oauth.token(req.body, req.headers);
    }
    if (req.method === 'POST' && path === '/revoke') return oauth.revokeEndpoint(req.body, req.headers);
    if (path.startsWith('/calendar/v3/')) {
      const auth = gate(req.headers.authorization);
      if ('refused' in auth) return auth.refused;
      if (req.method === 'POST' && path === '/calendar/v3/freeBusy') return freeBusy(req, auth.user);
      if (req.method === 'GET' && path === '/calendar/v3/users/me/calendarList') {
        return calendarList(req, auth.user);
      }
      const events = eventsRoute(req, auth.user);
      if (events) return events;
    }
    return googleApiError(404, 'Not Found', 'notFound');
  });
  holdApiCalls(server, '/calendar/v3/', failures);

  return {
    url: server.url,
    apiUrl: `${server.url}/calendar/v3`,
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    oauth,
    oauthConfig: () => ({
      provider: 'google',
      clientId: oauth.clientId,
      clientSecret: oauth.clientSecret,
      authorizeUrl: `${server.url}/o/oauth2/v2/auth`,
      tokenUrl: `${server.url}/token`,
    }),
    addBusy(calendarId, start, end) {
      storeEvent(calendarId, { start, end, summary: 'Busy', transparency: 'opaque' });
    },
    addEvent: storeEvent,
    events(calendarId) {
      const cal = calendars.get(calendarId === 'primary' ? oauth.currentUser : calendarId);
      return cal ? structuredClone([...cal.events.values()]) : [];
    },
    dropNextResponse(n = 1) {
      dropResponses = n;
    },
    addCalendar,
    setUser(email) {
      oauth.currentUser = email;
      if (!calendars.has(email)) addCalendar(email, { primary: true, owner: email });
    },
    ...authControls(oauth, failures),
    requests,
    freeBusyCalls,
    eventWrites,
    sendUpdates,
    reset() {
      for (const c of calendars.values()) c.events.clear();
      freeBusyCalls.length = 0;
      eventWrites.length = 0;
      sendUpdates.length = 0;
      dropResponses = 0;
      resetCounts(requests);
      failures.set(0, 500);
    },
    close: () => server.close(),
  };
}
