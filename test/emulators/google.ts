/**
 * Google emulator: OAuth 2.0 (accounts.google.com / oauth2.googleapis.com) and the Calendar API v3
 * freeBusy and calendarList endpoints, with Google's wire formats and limits.
 *
 *   GET  /o/oauth2/v2/auth                      → 302 redirect_uri?code&state
 *   POST /token                                 → tokens, {error, error_description} on failure
 *   POST /revoke                                → 200 {}, or 400 {error: invalid_token} (RFC 7009 style)
 *   POST /calendar/v3/freeBusy                  → {kind, timeMin, timeMax, calendars: {id: {busy|errors}}}
 *   GET  /calendar/v3/users/me/calendarList     → {kind, items, nextPageToken?}
 */
import type { OAuthConfig } from '../../src/modules/calendars/providers/oauth.js';
import { type EmuRequest, type EmuResponse, json, startHttpServer, type TimeInput, toMs } from './http.js';
import {
  type AuthControls,
  authControls,
  FailureQueue,
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
  busy: { start: number; end: number }[];
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
  /** Adds a busy block; creates the calendar (owned by the current user) if needed. */
  addBusy(calendarId: string, start: TimeInput, end: TimeInput): void;
  addCalendar(
    id: string,
    opts?: { summary?: string; primary?: boolean; owner?: string; timeZone?: string },
  ): void;
  /** Whom the next authorize signs in as (default the `user` option). */
  setUser(email: string): void;
  requests: { authorize: number; token: number; freeBusy: number; calendarList: number; apiErrors: number };
  freeBusyCalls: FreeBusyCall[];
  reset(): void;
  close(): Promise<void>;
}

function googleApiError(status: number, message: string, reason: string, extra: Record<string, string> = {}) {
  const statusNames: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
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
  const calendars = new Map<string, Calendar>();
  const failures = new FailureQueue();
  const requests = { authorize: 0, token: 0, freeBusy: 0, calendarList: 0, apiErrors: 0 };
  const freeBusyCalls: FreeBusyCall[] = [];

  const addCalendar: GoogleEmulator['addCalendar'] = (id, o = {}) => {
    const owner = o.owner ?? oauth.currentUser;
    const existing = calendars.get(id);
    if (existing) {
      if (o.summary !== undefined) existing.summary = o.summary;
      if (o.primary !== undefined) existing.primary = o.primary;
      return;
    }
    calendars.set(id, {
      id,
      summary: o.summary ?? id,
      owner,
      primary: o.primary ?? id === owner,
      timeZone: o.timeZone ?? 'UTC',
      busy: [],
    });
  };
  addCalendar(defaultUser, { summary: defaultUser, primary: true, owner: defaultUser });

  /** failNext: 429 and 403 answer Google's rateLimitExceeded body, other statuses a plain API error. */
  const injectedFailure = (): EmuResponse | undefined => {
    const f = failures.take();
    if (!f) return undefined;
    requests.apiErrors++;
    const headers: Record<string, string> =
      f.retryAfterSeconds === undefined ? {} : { 'retry-after': String(f.retryAfterSeconds) };
    if (f.status === 429 || f.status === 403) {
      return googleApiError(f.status, 'Rate Limit Exceeded', 'rateLimitExceeded', headers);
    }
    if (f.status === 401) return unauthenticated();
    if (f.status >= 500) return googleApiError(f.status, 'Backend Error', 'backendError', headers);
    return googleApiError(f.status, 'Bad Request', 'badRequest', headers);
  };

  const freeBusy = (req: EmuRequest, user: string): EmuResponse => {
    requests.freeBusy++;
    let body: unknown;
    try {
      body = JSON.parse(req.body);
    } catch {
      return googleApiError(400, 'Parse Error', 'parseError');
    }
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
      const clipped = cal.busy
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
    const requested = Number(req.url.searchParams.get('maxResults') ?? 100);
    const size = Math.max(1, Math.min(maxPageSize, Number.isFinite(requested) ? requested : 100));
    const offset = Number(req.url.searchParams.get('pageToken') ?? '0') || 0;
    const page = mine.slice(offset, offset + size);
    const body: Record<string, unknown> = {
      kind: 'calendar#calendarList',
      etag: `"${mine.length}"`,
      items: page.map((c) => ({
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
    if (offset + size < mine.length) body.nextPageToken = String(offset + size);
    else body.nextSyncToken = `sync_${mine.length}`;
    return json(200, body);
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
      const auth = oauth.checkBearer(req.headers.authorization);
      if (!auth.ok) {
        requests.apiErrors++;
        return unauthenticated();
      }
      const failure = injectedFailure();
      if (failure) return failure;
      if (req.method === 'POST' && path === '/calendar/v3/freeBusy') return freeBusy(req, auth.grant.user);
      if (req.method === 'GET' && path === '/calendar/v3/users/me/calendarList') {
        return calendarList(req, auth.grant.user);
      }
    }
    return googleApiError(404, 'Not Found', 'notFound');
  });

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
      const s = toMs(start);
      const e = toMs(end);
      if (e <= s) throw new RangeError('end must be after start');
      if (!calendars.has(calendarId)) addCalendar(calendarId);
      calendars.get(calendarId)?.busy.push({ start: s, end: e });
    },
    addCalendar,
    setUser(email) {
      oauth.currentUser = email;
      if (!calendars.has(email)) addCalendar(email, { primary: true, owner: email });
    },
    ...authControls(oauth, failures),
    requests,
    freeBusyCalls,
    reset() {
      for (const c of calendars.values()) c.busy = [];
      freeBusyCalls.length = 0;
      for (const k of Object.keys(requests) as (keyof typeof requests)[]) requests[k] = 0;
      failures.set(0, 500);
    },
    close: () => server.close(),
  };
}
