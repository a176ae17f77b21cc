/**
 * Microsoft emulator: identity platform v2.0 endpoints and Microsoft Graph v1.0 calendars and events,
 * with Graph's wire formats, error bodies and getSchedule limits (window < 42 days, ≤ 20 schedules).
 *
 *   GET    /{tenant}/oauth2/v2.0/authorize             → 302 redirect_uri?code&state
 *   POST   /{tenant}/oauth2/v2.0/token                 → tokens (refresh tokens rotate)
 *   POST   /v1.0/me/calendar/getSchedule               → {value: [scheduleInformation]}
 *   GET    /v1.0/me/calendars                          → {value: [calendar], @odata.nextLink?}
 *   POST   /v1.0/me/calendars/{id}/events              → 201 event (unknown calendar: 404 ErrorItemNotFound)
 *   GET    /v1.0/me/events/{id}                        → 200 event
 *   PATCH  /v1.0/me/events/{id}                        → 200 event (fields merged, new changeKey)
 *   DELETE /v1.0/me/events/{id}                        → 204
 *   GET    /v1.0/me/calendars/{id}/calendarView        → {value: [event], @odata.nextLink?}
 *
 * Every mailbox's calendars hold events; getSchedule is computed from all of them (cancelled ones
 * excepted) and, like Graph, does not care who wrote them. Event answers carry times in the zone of
 * `Prefer: outlook.timezone="…"`, else UTC (Graph's default). `$expand=singleValueExtendedProperties(
 * $filter=id eq '…')` adds the matching properties (omitted when the event has none); `$select` is
 * ignored. calendarView pages with `$top` (capped by `eventsPageSize`) and `$skip` in an absolute
 * `@odata.nextLink` (real Graph uses `$skiptoken`; clients only follow the link either way).
 *
 * transactionId: Graph documents it as "a custom identifier specified by a client app for the server
 * to avoid redundant POST operations in case of client retries to create the same event". The
 * emulator reads that as: a create whose transactionId matches an event still in the same mailbox
 * answers 201 with that existing event and creates nothing (the body of the retry is not compared).
 *
 * Unknown event or calendar ids answer 404 ErrorItemNotFound, as Graph does for well-formed ids.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import type { OAuthConfig } from '../../src/modules/calendars/providers/oauth.js';
import {
  type EmuRequest,
  type EmuResponse,
  isObject,
  json,
  pageLink,
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

export type GraphStatus = 'free' | 'tentative' | 'busy' | 'oof' | 'workingElsewhere' | 'unknown';

export interface MicrosoftEmulatorOptions {
  clientId?: string;
  clientSecret?: string;
  redirectUris?: readonly string[];
  tokenLifetimeSeconds?: number;
  /** /me/calendars page size cap (default 10, like Graph's default page). */
  maxPageSize?: number;
  /** calendarView page size cap whatever `$top` asks (default 10, Graph's page without `$top`). */
  eventsPageSize?: number;
  user?: string;
  now?: () => number;
}

export interface GraphExtendedProperty {
  id: string;
  value: string;
}

/** An event as the emulator stores it; times are epoch ms. */
export interface EventResource {
  id: string;
  calendarId: string;
  subject: string;
  bodyText: string;
  /** location.displayName, '' when none. */
  location: string;
  start: number;
  end: number;
  isAllDay: boolean;
  showAs: GraphStatus;
  isCancelled: boolean;
  isReminderOn: boolean;
  transactionId: string | null;
  singleValueExtendedProperties: GraphExtendedProperty[];
  changeKey: string;
}

/** What addEvent takes: times, and any other field (defaults: busy, not cancelled, no properties). */
export type NewEvent = { start: TimeInput; end: TimeInput } & Partial<
  Omit<EventResource, 'id' | 'calendarId' | 'changeKey' | 'start' | 'end'>
>;

/** One event-write request as received (the parsed JSON body, before validation). */
export interface EventWrite {
  method: 'POST' | 'PATCH' | 'DELETE';
  /** Request path, percent-encoding kept. */
  path: string;
  body: Record<string, unknown> | undefined;
}

interface Mailbox {
  email: string;
  calendars: { id: string; name: string; isDefaultCalendar: boolean }[];
  events: EventResource[];
}

export interface GetScheduleCall {
  schedules: string[];
  start: string;
  end: string;
  timeZone: string;
}

export const GRAPH_EMULATOR_MAX_WINDOW_DAYS = 42;
export const GRAPH_EMULATOR_MAX_SCHEDULES = 20;

const AADSTS: Record<string, string> = {
  invalid_grant: 'AADSTS70008',
  invalid_client: 'AADSTS7000215',
  invalid_request: 'AADSTS900144',
  unsupported_grant_type: 'AADSTS70003',
};

const dialect: OAuthDialect = {
  tokenError: (error, description) => {
    const code = AADSTS[error] ?? 'AADSTS90000';
    return {
      error,
      error_description: `${code}: ${description} Trace ID: ${randomUUID()}`,
      error_codes: [Number(code.slice(6))],
      timestamp: new Date().toISOString().replace('T', ' ').slice(0, 19) + 'Z',
      trace_id: randomUUID(),
      correlation_id: randomUUID(),
    };
  },
  wantsRefreshToken: (q) => (q.get('scope') ?? '').split(/\s+/).includes('offline_access'),
  rotateRefreshTokens: true,
  // The token's scope lists the resource scopes, not offline_access/openid.
  grantedScope: (requested) =>
    requested
      .split(/\s+/)
      .filter((s) => s && !['offline_access', 'openid', 'profile', 'email'].includes(s))
      .join(' '),
};

export interface MicrosoftEmulator extends AuthControls {
  url: string;
  /** For the Graph client config: `${url}/v1.0`. */
  graphUrl: string;
  clientId: string;
  clientSecret: string;
  oauthConfig(tenant?: string): OAuthConfig;
  oauth: OAuthServer;
  /** Adds an event with showAs `status` to the mailbox's default calendar (mailbox created if needed). */
  addBusy(email: string, start: TimeInput, end: TimeInput, status?: GraphStatus, subject?: string): void;
  /**
   * Adds an event to a calendar (by id, in any mailbox) or to a mailbox's default calendar (by address,
   * created if needed). Returns a copy of the stored event.
   */
  addEvent(calendarIdOrMailbox: string, event: NewEvent): EventResource;
  /** Copies of the stored events of one mailbox, or of all mailboxes when omitted; sorted by start. */
  events(mailbox?: string): EventResource[];
  /**
   * The next n event writes (create, PATCH, DELETE) that succeed take effect but are answered 503
   * ErrorServiceUnavailable: a response lost after the write happened. Failed writes do not count.
   */
  dropNextResponse(n?: number): void;
  /** Every event-write request received since the last reset. */
  eventWrites: EventWrite[];
  addMailbox(email: string): void;
  addCalendar(email: string, name: string, opts?: { id?: string; isDefault?: boolean }): string;
  setUser(email: string): void;
  requests: {
    authorize: number;
    token: number;
    getSchedule: number;
    calendars: number;
    apiErrors: number;
    eventsCreate: number;
    eventsGet: number;
    eventsPatch: number;
    eventsDelete: number;
    calendarView: number;
    /** Event writes whose body had an `attendees` member (Kairos never sends one). */
    eventsWithAttendees: number;
  };
  getScheduleCalls: GetScheduleCall[];
  reset(): void;
  close(): Promise<void>;
}

function graphError(status: number, code: string, message: string, headers: Record<string, string> = {}) {
  return json(
    status,
    {
      error: {
        code,
        message,
        innerError: {
          date: new Date().toISOString().slice(0, 19),
          'request-id': randomUUID(),
          'client-request-id': randomUUID(),
        },
      },
    },
    headers,
  );
}

const WINDOWS_TO_IANA: Record<string, string> = {
  'Pacific Standard Time': 'America/Los_Angeles',
  'Eastern Standard Time': 'America/New_York',
  'W. Europe Standard Time': 'Europe/Berlin',
  'GMT Standard Time': 'Europe/London',
};

function zoneFor(name: string): string | undefined {
  const z = name === 'UTC' ? 'UTC' : (WINDOWS_TO_IANA[name] ?? name);
  return DateTime.local().setZone(z).isValid ? z : undefined;
}

function parseDateTimeTimeZone(v: unknown): { ms: number; zone: string; name: string } | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const { dateTime, timeZone } = v as { dateTime?: unknown; timeZone?: unknown };
  if (typeof dateTime !== 'string' || typeof timeZone !== 'string') return undefined;
  const zone = zoneFor(timeZone);
  if (!zone) return undefined;
  const dt = DateTime.fromISO(dateTime.replace(/(\.\d{3})\d+$/, '$1'), { zone });
  return dt.isValid ? { ms: dt.toMillis(), zone, name: timeZone } : undefined;
}

function formatIn(ms: number, zone: string): string {
  return `${DateTime.fromMillis(ms, { zone }).toFormat("yyyy-LL-dd'T'HH:mm:ss")}.0000000`;
}

const VIEW_CODE: Record<GraphStatus, number> = {
  free: 0,
  tentative: 1,
  busy: 2,
  oof: 3,
  workingElsewhere: 4,
  unknown: 0,
};

const STATUS_BY_LOWER = new Map(
  (Object.keys(VIEW_CODE) as GraphStatus[]).map((s) => [s.toLowerCase(), s] as const),
);

function itemNotFound(): EmuResponse {
  return graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
}

/** The zone event answers use: `Prefer: outlook.timezone="…"` when known, else UTC (Graph's default). */
function answerZone(req: EmuRequest): { zone: string; name: string } {
  const name = /outlook\.timezone="([^"]+)"/.exec(String(req.headers.prefer ?? ''))?.[1];
  const zone = name ? zoneFor(name) : undefined;
  return name && zone ? { zone, name } : { zone: 'UTC', name: 'UTC' };
}

/**
 * `$expand=singleValueExtendedProperties($filter=id eq '…')` → the property id; undefined when absent;
 * null when the expression is not of that form (Graph answers 400).
 */
function expandedPropertyId(req: EmuRequest): string | undefined | null {
  const v = req.url.searchParams.get('$expand');
  if (v === null) return undefined;
  const m = /^singleValueExtendedProperties\(\$filter=id eq '((?:[^']|'')*)'\)$/i.exec(v.trim());
  return m?.[1] === undefined ? null : m[1].replace(/''/g, "'");
}

/** Graph's `$filter` on this id: single-value extended property ids compare case-insensitively. */
function sameProperty(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

type EventFields = Partial<Omit<EventResource, 'id' | 'calendarId' | 'changeKey'>>;

/** Reads the writable event fields of a create or PATCH body; a 400 answer when one is malformed. */
function parseEventFields(
  body: Record<string, unknown>,
  creating: boolean,
): { fields: EventFields } | { error: EmuResponse } {
  const bad = (message: string) => ({ error: graphError(400, 'ErrorInvalidRequest', message) });
  const fields: EventFields = {};
  if (body.subject !== undefined) {
    if (typeof body.subject !== 'string') return bad('subject must be a string.');
    fields.subject = body.subject;
  }
  if (body.body !== undefined) {
    if (!isObject(body.body) || typeof body.body.content !== 'string')
      return bad('body.content must be a string.');
    if (body.body.contentType !== undefined && !['text', 'html'].includes(String(body.body.contentType))) {
      return bad('body.contentType must be text or html.');
    }
    fields.bodyText = body.body.content;
  }
  for (const key of ['start', 'end'] as const) {
    if (body[key] === undefined) {
      if (creating) return bad(`${key} is required.`);
      continue;
    }
    const t = parseDateTimeTimeZone(body[key]);
    if (!t) return bad(`${key} needs dateTime and a known timeZone.`);
    fields[key] = t.ms;
  }
  if (body.location !== undefined && body.location !== null) {
    if (!isObject(body.location)) return bad('location must be an object.');
    const name = body.location.displayName ?? '';
    if (typeof name !== 'string') return bad('location.displayName must be a string.');
    fields.location = name;
  } else if (body.location === null) {
    fields.location = '';
  }
  if (body.showAs !== undefined) {
    const status =
      typeof body.showAs === 'string' ? STATUS_BY_LOWER.get(body.showAs.toLowerCase()) : undefined;
    if (!status) return bad(`showAs '${String(body.showAs)}' is not a freeBusyStatus.`);
    fields.showAs = status;
  }
  for (const key of ['isAllDay', 'isReminderOn'] as const) {
    if (body[key] === undefined) continue;
    if (typeof body[key] !== 'boolean') return bad(`${key} must be a boolean.`);
    fields[key] = body[key];
  }
  // transactionId is only read on create (Graph's retry guard for POST).
  if (creating && body.transactionId !== undefined && body.transactionId !== null) {
    if (typeof body.transactionId !== 'string') return bad('transactionId must be a string.');
    fields.transactionId = body.transactionId;
  }
  if (body.singleValueExtendedProperties !== undefined) {
    const props = body.singleValueExtendedProperties;
    if (
      !Array.isArray(props) ||
      !props.every((p) => isObject(p) && typeof p.id === 'string' && typeof p.value === 'string')
    ) {
      return bad('singleValueExtendedProperties must be [{id, value}] with string id and value.');
    }
    fields.singleValueExtendedProperties = props.map((p) => ({ id: String(p.id), value: String(p.value) }));
  }
  return { fields };
}

/** Upserts properties by id, as a PATCH of singleValueExtendedProperties does. */
function mergeProperties(
  into: readonly GraphExtendedProperty[],
  from: readonly GraphExtendedProperty[],
): GraphExtendedProperty[] {
  const out = into.map((p) => ({ ...p }));
  for (const p of from) {
    const hit = out.find((q) => sameProperty(q.id, p.id));
    if (hit) hit.value = p.value;
    else out.push({ ...p });
  }
  return out;
}

function copyEvent(ev: EventResource): EventResource {
  return { ...ev, singleValueExtendedProperties: ev.singleValueExtendedProperties.map((p) => ({ ...p })) };
}

function newChangeKey(): string {
  return randomBytes(12).toString('base64');
}

export async function startMicrosoftEmulator(
  opts: MicrosoftEmulatorOptions = {},
): Promise<MicrosoftEmulator> {
  const defaultUser = opts.user ?? 'user@example.com';
  const oauthOpts: ConstructorParameters<typeof OAuthServer>[1] = {
    clientId: opts.clientId ?? '00000000-0000-0000-0000-00000000c1d0',
    clientSecret: opts.clientSecret ?? 'microsoft-client-secret',
    tokenLifetimeSeconds: opts.tokenLifetimeSeconds ?? 3600,
  };
  if (opts.redirectUris) oauthOpts.redirectUris = opts.redirectUris;
  if (opts.now) oauthOpts.now = opts.now;
  const oauth = new OAuthServer(dialect, oauthOpts);
  oauth.currentUser = defaultUser;
  const maxPageSize = opts.maxPageSize ?? 10;
  const eventsPageSize = opts.eventsPageSize ?? 10;
  const mailboxes = new Map<string, Mailbox>();
  const failures = new FailureQueue();
  const requests = {
    authorize: 0,
    token: 0,
    getSchedule: 0,
    calendars: 0,
    apiErrors: 0,
    eventsCreate: 0,
    eventsGet: 0,
    eventsPatch: 0,
    eventsDelete: 0,
    calendarView: 0,
    eventsWithAttendees: 0,
  };
  const getScheduleCalls: GetScheduleCall[] = [];
  const eventWrites: EventWrite[] = [];
  let calendarSeq = 0;
  let eventSeq = 0;
  let dropResponses = 0;

  const addMailbox = (email: string): Mailbox => {
    const key = email.toLowerCase();
    let mb = mailboxes.get(key);
    if (!mb) {
      mb = { email, calendars: [], events: [] };
      mailboxes.set(key, mb);
      mb.calendars.push({ id: `AAMkAD${++calendarSeq}`, name: 'Calendar', isDefaultCalendar: true });
    }
    return mb;
  };
  addMailbox(defaultUser);

  const gate = apiGate(oauth, failures, requests, {
    unauthorized: (reason) =>
      reason === 'expired'
        ? expiredToken()
        : graphError(401, 'InvalidAuthenticationToken', 'Access token validation failure. Invalid audience.'),
    /** failNext: 429 answers TooManyRequests, 503 ServiceUnavailable, in Graph's error format. */
    failure(status, headers) {
      if (status === 429) return graphError(429, 'TooManyRequests', 'Please retry again later.', headers);
      if (status === 401) return expiredToken();
      if (status === 503) return graphError(503, 'ServiceUnavailable', 'Service Unavailable.', headers);
      if (status >= 500) return graphError(status, 'UnknownError', 'An unknown error occurred.', headers);
      return graphError(status, 'ErrorInvalidRequest', 'The request is invalid.', headers);
    },
  });

  const getSchedule = (req: EmuRequest): EmuResponse => {
    requests.getSchedule++;
    const parsed = parseJson(req);
    if (!parsed) return graphError(400, 'BadRequest', 'Unable to read JSON request payload.');
    const body = parsed.value as Record<string, unknown>;
    const schedules = body.schedules;
    if (
      !Array.isArray(schedules) ||
      schedules.length === 0 ||
      !schedules.every((s) => typeof s === 'string')
    ) {
      return graphError(400, 'ErrorInvalidParameter', "The parameter 'schedules' is required.");
    }
    if (schedules.length > GRAPH_EMULATOR_MAX_SCHEDULES) {
      return graphError(
        400,
        'ErrorInvalidParameter',
        `The number of schedules (${schedules.length}) exceeds the maximum of ` +
          `${GRAPH_EMULATOR_MAX_SCHEDULES}.`,
      );
    }
    const start = parseDateTimeTimeZone(body.startTime);
    const end = parseDateTimeTimeZone(body.endTime);
    if (!start || !end) {
      return graphError(
        400,
        'ErrorInvalidParameter',
        'startTime and endTime need dateTime and a known timeZone.',
      );
    }
    if (end.ms <= start.ms) {
      return graphError(400, 'ErrorInvalidTimeInterval', 'The end time must be after the start time.');
    }
    const days = (end.ms - start.ms) / 86_400_000;
    if (days >= GRAPH_EMULATOR_MAX_WINDOW_DAYS) {
      return graphError(
        400,
        'ErrorTimeIntervalTooBig',
        'The requested time duration specified for FreeBusyViewOptions.TimeWindow is too long. The allowed ' +
          `limit = ${GRAPH_EMULATOR_MAX_WINDOW_DAYS} days; the actual limit = ${Math.ceil(days)} days.`,
      );
    }
    const interval = body.availabilityViewInterval === undefined ? 30 : Number(body.availabilityViewInterval);
    if (!Number.isInteger(interval) || interval < 5 || interval > 1440) {
      return graphError(400, 'ErrorInvalidParameter', 'availabilityViewInterval must be between 5 and 1440.');
    }
    // Answers use the Prefer: outlook.timezone zone when given, else the request's startTime zone.
    const preferName = /outlook\.timezone="([^"]+)"/.exec(String(req.headers.prefer ?? ''))?.[1];
    const preferZone = preferName ? zoneFor(preferName) : undefined;
    const outZone = preferZone ?? start.zone;
    const outZoneName = preferName && preferZone ? preferName : start.name;
    getScheduleCalls.push({
      schedules: schedules as string[],
      start: new Date(start.ms).toISOString(),
      end: new Date(end.ms).toISOString(),
      timeZone: outZoneName,
    });
    const value = (schedules as string[]).map((email) => {
      const mb = mailboxes.get(email.toLowerCase());
      if (!mb) {
        return {
          scheduleId: email,
          availabilityView: '',
          error: {
            message: `The mailbox ${email} could not be found.`,
            responseCode: 'ErrorMailRecipientNotFound',
          },
        };
      }
      const items = mb.events
        .filter((e) => !e.isCancelled && e.end > start.ms && e.start < end.ms)
        .sort((a, b) => a.start - b.start)
        .map((e) => ({ start: e.start, end: e.end, status: e.showAs, subject: e.subject }));
      let view = '';
      for (let t = start.ms; t < end.ms; t += interval * 60_000) {
        const slotEnd = t + interval * 60_000;
        let codeHere = 0;
        for (const i of items) {
          if (i.end > t && i.start < slotEnd) codeHere = Math.max(codeHere, VIEW_CODE[i.status]);
        }
        view += String(codeHere);
      }
      return {
        scheduleId: email,
        availabilityView: view,
        scheduleItems: items.map((i) => ({
          isPrivate: false,
          status: i.status,
          subject: i.subject,
          location: '',
          isMeeting: false,
          isRecurring: false,
          isException: false,
          isReminderSet: false,
          start: { dateTime: formatIn(i.start, outZone), timeZone: outZoneName },
          end: { dateTime: formatIn(i.end, outZone), timeZone: outZoneName },
        })),
        workingHours: {
          daysOfWeek: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
          startTime: '08:00:00.0000000',
          endTime: '17:00:00.0000000',
          timeZone: { name: 'UTC' },
        },
      };
    });
    return json(200, {
      '@odata.context':
        'https://graph.microsoft.com/v1.0/$metadata#Collection(microsoft.graph.scheduleInformation)',
      value,
    });
  };

  const listCalendars = (req: EmuRequest, user: string, base: string): EmuResponse => {
    requests.calendars++;
    const mb = addMailbox(user);
    const size = pageSize(req.url.searchParams.get('$top'), maxPageSize, maxPageSize);
    const skip = Number(req.url.searchParams.get('$skip') ?? 0) || 0;
    const page = pageAt(mb.calendars, skip, size);
    const body: Record<string, unknown> = {
      '@odata.context': "https://graph.microsoft.com/v1.0/$metadata#users('me')/calendars",
      value: page.items.map((c) => ({
        id: c.id,
        name: c.name,
        color: 'auto',
        isDefaultCalendar: c.isDefaultCalendar,
        canEdit: true,
        canShare: true,
        owner: { name: mb.email.split('@')[0], address: mb.email },
      })),
    };
    if (page.next !== undefined) {
      body['@odata.nextLink'] = pageLink(
        base,
        '/v1.0/me/calendars',
        req.url.searchParams,
        '$skip',
        page.next,
      );
    }
    return json(200, body);
  };

  const storeEvent = (calendarId: string, f: EventFields & { start: number; end: number }): EventResource => {
    const ev: EventResource = {
      id: `AAMkAGEv${String(++eventSeq).padStart(4, '0')}${randomBytes(12).toString('base64url')}AAA=`,
      calendarId,
      subject: f.subject ?? '',
      bodyText: f.bodyText ?? '',
      location: f.location ?? '',
      start: f.start,
      end: f.end,
      isAllDay: f.isAllDay ?? false,
      showAs: f.showAs ?? 'busy',
      isCancelled: f.isCancelled ?? false,
      isReminderOn: f.isReminderOn ?? true,
      transactionId: f.transactionId ?? null,
      singleValueExtendedProperties: (f.singleValueExtendedProperties ?? []).map((p) => ({ ...p })),
      changeKey: newChangeKey(),
    };
    const mb = [...mailboxes.values()].find((m) => m.calendars.some((c) => c.id === calendarId));
    if (!mb) throw new Error(`no calendar ${calendarId}`);
    mb.events.push(ev);
    return ev;
  };

  const renderEvent = (mb: Mailbox, ev: EventResource, req: EmuRequest, propertyId?: string) => {
    const { zone, name } = answerZone(req);
    const out: Record<string, unknown> = {
      '@odata.etag': `W/"${ev.changeKey}"`,
      id: ev.id,
      changeKey: ev.changeKey,
      transactionId: ev.transactionId,
      subject: ev.subject,
      bodyPreview: ev.bodyText.slice(0, 255),
      body: { contentType: 'text', content: ev.bodyText },
      start: { dateTime: formatIn(ev.start, zone), timeZone: name },
      end: { dateTime: formatIn(ev.end, zone), timeZone: name },
      location: { displayName: ev.location, locationType: 'default' },
      isAllDay: ev.isAllDay,
      isCancelled: ev.isCancelled,
      isReminderOn: ev.isReminderOn,
      showAs: ev.showAs,
      type: 'singleInstance',
      attendees: [],
      organizer: { emailAddress: { name: mb.email.split('@')[0], address: mb.email } },
    };
    if (propertyId !== undefined) {
      const props = ev.singleValueExtendedProperties.filter((p) => sameProperty(p.id, propertyId));
      if (props.length > 0) out.singleValueExtendedProperties = props.map((p) => ({ ...p }));
    }
    return out;
  };

  /** Reads and logs an event-write body; a 400 answer when it is not a JSON object. */
  const readWrite = (
    req: EmuRequest,
    method: 'POST' | 'PATCH',
  ): { body: Record<string, unknown> } | { error: EmuResponse } => {
    const parsed = parseJson(req);
    if (!parsed) {
      eventWrites.push({ method, path: req.url.pathname, body: undefined });
      return { error: graphError(400, 'BadRequest', 'Unable to read JSON request payload.') };
    }
    const body = parsed.value;
    if (!isObject(body)) {
      eventWrites.push({ method, path: req.url.pathname, body: undefined });
      return { error: graphError(400, 'BadRequest', 'The request payload must be a JSON object.') };
    }
    eventWrites.push({ method, path: req.url.pathname, body });
    if ('attendees' in body) requests.eventsWithAttendees++;
    return { body };
  };

  /** A successful write's answer, unless dropNextResponse asked to lose it. */
  const afterWrite = (res: EmuResponse): EmuResponse => {
    if (res.status >= 300 || dropResponses <= 0) return res;
    dropResponses--;
    requests.apiErrors++;
    return graphError(503, 'ErrorServiceUnavailable', 'The service is currently unavailable.');
  };

  const createEvent = (req: EmuRequest, user: string, calendarId: string): EmuResponse => {
    requests.eventsCreate++;
    const mb = addMailbox(user);
    const propertyId = expandedPropertyId(req);
    if (propertyId === null) return graphError(400, 'BadRequest', 'Parsing OData Select and Expand failed.');
    const cal = mb.calendars.find((c) => c.id === calendarId);
    if (!cal) return itemNotFound();
    const read = readWrite(req, 'POST');
    if ('error' in read) return read.error;
    const parsed = parseEventFields(read.body, true);
    if ('error' in parsed) return parsed.error;
    const f = parsed.fields;
    if (f.start === undefined || f.end === undefined) {
      return graphError(400, 'ErrorInvalidRequest', 'start and end are required.');
    }
    if (f.end <= f.start) {
      return graphError(400, 'ErrorInvalidRequest', 'The end time must be after the start time.');
    }
    const existing = f.transactionId ? mb.events.find((e) => e.transactionId === f.transactionId) : undefined;
    const ev = existing ?? storeEvent(cal.id, { ...f, start: f.start, end: f.end });
    return afterWrite(json(201, renderEvent(mb, ev, req, propertyId)));
  };

  const eventRoute = (req: EmuRequest, user: string, eventId: string): EmuResponse | undefined => {
    if (!['GET', 'PATCH', 'DELETE'].includes(req.method)) return undefined;
    if (req.method === 'GET') requests.eventsGet++;
    if (req.method === 'PATCH') requests.eventsPatch++;
    if (req.method === 'DELETE') requests.eventsDelete++;
    const mb = addMailbox(user);
    const propertyId = expandedPropertyId(req);
    if (propertyId === null) return graphError(400, 'BadRequest', 'Parsing OData Select and Expand failed.');
    const index = mb.events.findIndex((e) => e.id === eventId);
    const ev = mb.events[index];
    if (req.method === 'DELETE') {
      eventWrites.push({ method: 'DELETE', path: req.url.pathname, body: undefined });
      if (!ev) return itemNotFound();
      mb.events.splice(index, 1);
      return afterWrite({ status: 204 });
    }
    if (!ev) {
      if (req.method === 'PATCH') readWrite(req, 'PATCH');
      return itemNotFound();
    }
    if (req.method === 'GET') return json(200, renderEvent(mb, ev, req, propertyId));
    const read = readWrite(req, 'PATCH');
    if ('error' in read) return read.error;
    const parsed = parseEventFields(read.body, false);
    if ('error' in parsed) return parsed.error;
    const { singleValueExtendedProperties: props, ...f } = parsed.fields;
    if ((f.end ?? ev.end) <= (f.start ?? ev.start)) {
      return graphError(400, 'ErrorInvalidRequest', 'The end time must be after the start time.');
    }
    Object.assign(ev, f);
    if (props) ev.singleValueExtendedProperties = mergeProperties(ev.singleValueExtendedProperties, props);
    ev.changeKey = newChangeKey();
    return afterWrite(json(200, renderEvent(mb, ev, req, propertyId)));
  };

  const calendarView = (req: EmuRequest, user: string, base: string, calendarId: string): EmuResponse => {
    requests.calendarView++;
    const mb = addMailbox(user);
    const cal = mb.calendars.find((c) => c.id === calendarId);
    if (!cal) return itemNotFound();
    const q = req.url.searchParams;
    const rawStart = q.get('startDateTime');
    const rawEnd = q.get('endDateTime');
    if (!rawStart || !rawEnd) {
      return graphError(
        400,
        'ErrorInvalidParameter',
        'This request requires a time window specified by the query string parameters StartDateTime and ' +
          'EndDateTime.',
      );
    }
    // Graph reads the offset in the value; without one the value is UTC (Prefer does not apply here).
    const start = DateTime.fromISO(rawStart, { zone: 'UTC' });
    const end = DateTime.fromISO(rawEnd, { zone: 'UTC' });
    if (!start.isValid || !end.isValid) {
      return graphError(400, 'ErrorInvalidParameter', 'startDateTime and endDateTime must be ISO 8601.');
    }
    if (end.toMillis() <= start.toMillis()) {
      return graphError(400, 'ErrorInvalidParameter', 'endDateTime must be after startDateTime.');
    }
    const propertyId = expandedPropertyId(req);
    if (propertyId === null) return graphError(400, 'BadRequest', 'Parsing OData Select and Expand failed.');
    const size = pageSize(q.get('$top'), eventsPageSize, eventsPageSize);
    const skip = Number(q.get('$skip') ?? 0) || 0;
    const all = mb.events
      .filter((e) => e.calendarId === cal.id && e.end > start.toMillis() && e.start < end.toMillis())
      .sort((a, b) => a.start - b.start || a.end - b.end || (a.id < b.id ? -1 : 1));
    const page = pageAt(all, skip, size);
    const body: Record<string, unknown> = {
      '@odata.context': "https://graph.microsoft.com/v1.0/$metadata#users('me')/calendars('id')/calendarView",
      value: page.items.map((e) => renderEvent(mb, e, req, propertyId)),
    };
    if (page.next !== undefined) {
      body['@odata.nextLink'] = pageLink(base, req.url.pathname, q, '$skip', page.next);
    }
    return json(200, body);
  };

  const findCalendar = (calendarId: string): Mailbox['calendars'][number] | undefined => {
    for (const mb of mailboxes.values()) {
      const cal = mb.calendars.find((c) => c.id === calendarId);
      if (cal) return cal;
    }
    return undefined;
  };

  const addEvent = (calendarIdOrMailbox: string, e: NewEvent): EventResource => {
    const start = toMs(e.start);
    const end = toMs(e.end);
    if (end <= start) throw new RangeError('end must be after start');
    let cal = findCalendar(calendarIdOrMailbox);
    if (!cal) {
      if (!calendarIdOrMailbox.includes('@')) throw new Error(`no calendar ${calendarIdOrMailbox}`);
      const mb = addMailbox(calendarIdOrMailbox);
      cal = mb.calendars.find((c) => c.isDefaultCalendar) ?? mb.calendars[0];
    }
    if (!cal) throw new Error(`mailbox ${calendarIdOrMailbox} has no calendar`);
    const { start: _s, end: _e, ...rest } = e;
    return copyEvent(storeEvent(cal.id, { ...rest, start, end }));
  };

  let baseUrl = '';
  const server = await startHttpServer((req) => {
    const path = req.url.pathname;
    const oauthPath = /^\/([^/]+)\/oauth2\/v2\.0\/(authorize|token)$/.exec(path);
    if (oauthPath) {
      if (oauthPath[2] === 'authorize' && req.method === 'GET') {
        requests.authorize++;
        return oauth.authorize(req.url.searchParams);
      }
      if (oauthPath[2] === 'token' && req.method === 'POST') {
        requests.token++;
        return oauth.token(req.body, req.headers);
      }
    }
    if (path.startsWith('/v1.0/')) {
      const auth = gate(req.headers.authorization);
      if ('refused' in auth) return auth.refused;
      if (req.method === 'POST' && path === '/v1.0/me/calendar/getSchedule') return getSchedule(req);
      if (req.method === 'GET' && path === '/v1.0/me/calendars')
        return listCalendars(req, auth.user, baseUrl);
      const calendarPath = /^\/v1\.0\/me\/calendars\/([^/]+)\/(events|calendarView)$/.exec(path);
      const calendarId = calendarPath?.[1] === undefined ? undefined : decodeSegment(calendarPath[1]);
      if (calendarPath && calendarId !== undefined) {
        if (req.method === 'POST' && calendarPath[2] === 'events')
          return createEvent(req, auth.user, calendarId);
        if (req.method === 'GET' && calendarPath[2] === 'calendarView')
          return calendarView(req, auth.user, baseUrl, calendarId);
      }
      const eventPath = /^\/v1\.0\/me\/events\/([^/]+)$/.exec(path);
      const eventId = eventPath?.[1] === undefined ? undefined : decodeSegment(eventPath[1]);
      if (eventId !== undefined) {
        const res = eventRoute(req, auth.user, eventId);
        if (res) return res;
      }
    }
    return graphError(404, 'ResourceNotFound', `Resource not found for the segment '${path}'.`);
  });
  holdApiCalls(server, '/v1.0/', failures);
  baseUrl = server.url;

  return {
    url: server.url,
    graphUrl: `${server.url}/v1.0`,
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    oauth,
    oauthConfig: (tenant = 'common') => ({
      provider: 'microsoft',
      clientId: oauth.clientId,
      clientSecret: oauth.clientSecret,
      authorizeUrl: `${server.url}/${tenant}/oauth2/v2.0/authorize`,
      tokenUrl: `${server.url}/${tenant}/oauth2/v2.0/token`,
    }),
    addBusy(email, start, end, status = 'busy', subject = 'Busy') {
      const s = toMs(start);
      const e = toMs(end);
      if (e <= s) throw new RangeError('end must be after start');
      const mb = addMailbox(email);
      const cal = mb.calendars.find((c) => c.isDefaultCalendar) ?? mb.calendars[0];
      if (!cal) throw new Error(`mailbox ${email} has no calendar`);
      storeEvent(cal.id, { start: s, end: e, showAs: status, subject });
    },
    addEvent,
    events(mailbox) {
      const boxes = mailbox === undefined ? [...mailboxes.values()] : [mailboxes.get(mailbox.toLowerCase())];
      return boxes
        .flatMap((mb) => mb?.events ?? [])
        .sort((a, b) => a.start - b.start || a.end - b.end)
        .map(copyEvent);
    },
    dropNextResponse(n = 1) {
      dropResponses = n;
    },
    eventWrites,
    addMailbox(email) {
      addMailbox(email);
    },
    addCalendar(email, name, o = {}) {
      const mb = addMailbox(email);
      const id = o.id ?? `AAMkAD${++calendarSeq}`;
      if (o.isDefault) for (const c of mb.calendars) c.isDefaultCalendar = false;
      mb.calendars.push({ id, name, isDefaultCalendar: o.isDefault ?? false });
      return id;
    },
    setUser(email) {
      oauth.currentUser = email;
      addMailbox(email);
    },
    ...authControls(oauth, failures),
    requests,
    getScheduleCalls,
    reset() {
      for (const mb of mailboxes.values()) mb.events = [];
      getScheduleCalls.length = 0;
      eventWrites.length = 0;
      dropResponses = 0;
      resetCounts(requests);
      failures.set(0, 500);
    },
    close: () => server.close(),
  };
}

/** A path segment percent-decoded; undefined when malformed. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function expiredToken(): EmuResponse {
  return graphError(401, 'InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.', {
    'www-authenticate':
      'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize"',
  });
}
