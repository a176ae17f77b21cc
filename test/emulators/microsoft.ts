/**
 * Microsoft emulator: identity platform v2.0 endpoints and Microsoft Graph v1.0 calendar reads, with
 * Graph's wire formats, error bodies and getSchedule limits (window < 42 days, ≤ 20 schedules).
 *
 *   GET  /{tenant}/oauth2/v2.0/authorize        → 302 redirect_uri?code&state
 *   POST /{tenant}/oauth2/v2.0/token            → tokens (refresh tokens rotate)
 *   POST /v1.0/me/calendar/getSchedule          → {value: [scheduleInformation]}
 *   GET  /v1.0/me/calendars                     → {value: [calendar], @odata.nextLink?}
 */
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import type { OAuthConfig } from '../../src/modules/calendars/providers/oauth.js';
import { type EmuRequest, type EmuResponse, json, startHttpServer, type TimeInput, toMs } from './http.js';
import {
  type AuthControls,
  authControls,
  FailureQueue,
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
  user?: string;
  now?: () => number;
}

interface Mailbox {
  email: string;
  items: { start: number; end: number; status: GraphStatus; subject: string }[];
  calendars: { id: string; name: string; isDefaultCalendar: boolean }[];
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
  /** Adds a schedule item to a mailbox (created if needed). */
  addBusy(email: string, start: TimeInput, end: TimeInput, status?: GraphStatus, subject?: string): void;
  addMailbox(email: string): void;
  addCalendar(email: string, name: string, opts?: { id?: string; isDefault?: boolean }): string;
  setUser(email: string): void;
  requests: { authorize: number; token: number; getSchedule: number; calendars: number; apiErrors: number };
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
  const mailboxes = new Map<string, Mailbox>();
  const failures = new FailureQueue();
  const requests = { authorize: 0, token: 0, getSchedule: 0, calendars: 0, apiErrors: 0 };
  const getScheduleCalls: GetScheduleCall[] = [];
  let calendarSeq = 0;

  const addMailbox = (email: string): Mailbox => {
    const key = email.toLowerCase();
    let mb = mailboxes.get(key);
    if (!mb) {
      mb = { email, items: [], calendars: [] };
      mailboxes.set(key, mb);
      mb.calendars.push({ id: `AAMkAD${++calendarSeq}`, name: 'Calendar', isDefaultCalendar: true });
    }
    return mb;
  };
  addMailbox(defaultUser);

  /** failNext: 429 answers TooManyRequests, 503 ServiceUnavailable, in Graph's error format. */
  const injectedFailure = (): EmuResponse | undefined => {
    const f = failures.take();
    if (!f) return undefined;
    requests.apiErrors++;
    const headers: Record<string, string> =
      f.retryAfterSeconds === undefined ? {} : { 'retry-after': String(f.retryAfterSeconds) };
    if (f.status === 429) return graphError(429, 'TooManyRequests', 'Please retry again later.', headers);
    if (f.status === 401) return expiredToken();
    if (f.status === 503) return graphError(503, 'ServiceUnavailable', 'Service Unavailable.', headers);
    if (f.status >= 500) return graphError(f.status, 'UnknownError', 'An unknown error occurred.', headers);
    return graphError(f.status, 'ErrorInvalidRequest', 'The request is invalid.', headers);
  };

  const getSchedule = (req: EmuRequest): EmuResponse => {
    requests.getSchedule++;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body) as Record<string, unknown>;
    } catch {
      return graphError(400, 'BadRequest', 'Unable to read JSON request payload.');
    }
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
      const items = mb.items
        .filter((i) => i.end > start.ms && i.start < end.ms)
        .sort((a, b) => a.start - b.start);
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
    const top = Number(req.url.searchParams.get('$top') ?? maxPageSize);
    const size = Math.max(1, Math.min(maxPageSize, Number.isFinite(top) ? top : maxPageSize));
    const skip = Number(req.url.searchParams.get('$skip') ?? 0) || 0;
    const page = mb.calendars.slice(skip, skip + size);
    const body: Record<string, unknown> = {
      '@odata.context': "https://graph.microsoft.com/v1.0/$metadata#users('me')/calendars",
      value: page.map((c) => ({
        id: c.id,
        name: c.name,
        color: 'auto',
        isDefaultCalendar: c.isDefaultCalendar,
        canEdit: true,
        canShare: true,
        owner: { name: mb.email.split('@')[0], address: mb.email },
      })),
    };
    if (skip + size < mb.calendars.length) {
      const next = new URL(`${base}/v1.0/me/calendars`);
      for (const [k, v] of req.url.searchParams) if (k !== '$skip') next.searchParams.set(k, v);
      next.searchParams.set('$skip', String(skip + size));
      body['@odata.nextLink'] = next.toString();
    }
    return json(200, body);
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
      const auth = oauth.checkBearer(req.headers.authorization);
      if (!auth.ok) {
        requests.apiErrors++;
        return auth.reason === 'expired'
          ? expiredToken()
          : graphError(
              401,
              'InvalidAuthenticationToken',
              'Access token validation failure. Invalid audience.',
            );
      }
      const failure = injectedFailure();
      if (failure) return failure;
      if (req.method === 'POST' && path === '/v1.0/me/calendar/getSchedule') return getSchedule(req);
      if (req.method === 'GET' && path === '/v1.0/me/calendars')
        return listCalendars(req, auth.grant.user, baseUrl);
    }
    return graphError(404, 'ResourceNotFound', `Resource not found for the segment '${path}'.`);
  });
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
      addMailbox(email).items.push({ start: s, end: e, status, subject });
    },
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
      for (const mb of mailboxes.values()) mb.items = [];
      getScheduleCalls.length = 0;
      for (const k of Object.keys(requests) as (keyof typeof requests)[]) requests[k] = 0;
      failures.set(0, 500);
    },
    close: () => server.close(),
  };
}

function expiredToken(): EmuResponse {
  return graphError(401, 'InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.', {
    'www-authenticate':
      'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize"',
  });
}
