import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type GoogleEmulator, startGoogleEmulator } from '../../../../test/emulators/google.js';
import { authorizeViaRedirect } from '../../../../test/emulators/http.js';
import { caught } from '../../../../test/helpers/promises.js';
import {
  GOOGLE_MAX_CALENDARS_PER_CALL,
  googleFreeBusy,
  googleListCalendars,
  ProviderError,
} from './google.js';
import {
  buildAuthorizeUrl,
  createPkce,
  exchangeCode,
  GOOGLE_CALENDAR_SCOPES,
  OAuthError,
  pkceChallenge,
  refreshToken,
  revokeToken,
  type TokenSet,
} from './oauth.js';
import { DAY } from '../../../lib/time.js';

const REDIRECT = 'http://127.0.0.1:4000/v1/calendars/google/callback';
const fetch = globalThis.fetch;

describe('Google OAuth + Calendar API against the emulator', () => {
  let emu: GoogleEmulator;

  beforeAll(async () => {
    emu = await startGoogleEmulator({ redirectUris: [REDIRECT] });
  });
  afterAll(() => emu.close());
  beforeEach(() => emu.reset());

  async function connect(e: GoogleEmulator = emu): Promise<TokenSet> {
    const pkce = createPkce();
    const url = buildAuthorizeUrl(e.oauthConfig(), {
      redirectUri: REDIRECT,
      state: 'st-123',
      challenge: pkce.challenge,
      scopes: [...GOOGLE_CALENDAR_SCOPES],
    });
    const back = await authorizeViaRedirect(url);
    expect(back.state).toBe('st-123');
    expect(back.code).toBeTruthy();
    return exchangeCode(e.oauthConfig(), fetch, {
      code: back.code as string,
      verifier: pkce.verifier,
      redirectUri: REDIRECT,
    });
  }

  it('creates an RFC 7636 S256 PKCE pair', () => {
    const { verifier, challenge } = createPkce();
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(challenge).toBe(pkceChallenge(verifier));
    // RFC 7636 appendix B test vector.
    expect(pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('builds Google authorize URLs with offline access and forced consent', () => {
    const url = new URL(
      buildAuthorizeUrl(emu.oauthConfig(), {
        redirectUri: REDIRECT,
        state: 's',
        challenge: 'c',
        scopes: ['a', 'b'],
      }),
    );
    const q = url.searchParams;
    expect(q.get('access_type')).toBe('offline');
    expect(q.get('prompt')).toBe('consent');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('scope')).toBe('a b');
    expect(q.get('response_type')).toBe('code');
  });

  it('completes authorize → code → token and uses the token', async () => {
    const before = Date.now();
    const tokens = await connect();
    expect(tokens.access_token).toMatch(/^at_/);
    expect(tokens.refresh_token).toMatch(/^rt_/);
    expect(tokens.expires_at).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
    expect(tokens.scope).toBe(GOOGLE_CALENDAR_SCOPES.join(' '));

    emu.addCalendar('team@group.calendar.google.com', { summary: 'Team' });
    const cals = await googleListCalendars({ apiUrl: emu.apiUrl }, fetch, tokens.access_token);
    expect(cals).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'user@example.com', primary: true }),
        expect.objectContaining({ id: 'team@group.calendar.google.com', summary: 'Team', primary: false }),
      ]),
    );
  });

  it('validates client_id, redirect_uri and the PKCE verifier, and refuses a reused code', async () => {
    const pkce = createPkce();
    const base = { redirectUri: REDIRECT, state: 's', challenge: pkce.challenge, scopes: ['x'] };
    const wrongClient = buildAuthorizeUrl({ ...emu.oauthConfig(), clientId: 'nope' }, base);
    expect((await fetch(wrongClient, { redirect: 'manual' })).status).toBe(401);
    const wrongRedirect = buildAuthorizeUrl(emu.oauthConfig(), {
      ...base,
      redirectUri: 'http://evil.test/cb',
    });
    expect((await fetch(wrongRedirect, { redirect: 'manual' })).status).toBe(400);

    const back = await authorizeViaRedirect(buildAuthorizeUrl(emu.oauthConfig(), base));
    const badVerifier = await caught(
      exchangeCode(emu.oauthConfig(), fetch, {
        code: back.code as string,
        verifier: createPkce().verifier,
        redirectUri: REDIRECT,
      }),
    );
    expect(badVerifier).toBeInstanceOf(OAuthError);
    expect(badVerifier).toMatchObject({ code: 'invalid_grant', status: 400 });

    const back2 = await authorizeViaRedirect(buildAuthorizeUrl(emu.oauthConfig(), base));
    const params = { code: back2.code as string, verifier: pkce.verifier, redirectUri: REDIRECT };
    await exchangeCode(emu.oauthConfig(), fetch, params);
    expect(await caught(exchangeCode(emu.oauthConfig(), fetch, params))).toMatchObject({
      code: 'invalid_grant',
    });

    const badSecret = await caught(
      exchangeCode({ ...emu.oauthConfig(), clientSecret: 'wrong' }, fetch, params),
    );
    expect(badSecret).toMatchObject({ code: 'invalid_client', status: 401 });
  });

  it('reports a denied consent as error=access_denied on the redirect', async () => {
    emu.denyNextAuthorization();
    const back = await authorizeViaRedirect(
      buildAuthorizeUrl(emu.oauthConfig(), {
        redirectUri: REDIRECT,
        state: 'q',
        challenge: createPkce().challenge,
        scopes: ['x'],
      }),
    );
    expect(back).toMatchObject({ error: 'access_denied', state: 'q' });
    expect(back.code).toBeUndefined();
  });

  it('maps an expired token to unauthorized; refresh recovers; revoked refresh → invalid_grant', async () => {
    const tokens = await connect();
    emu.addBusy('user@example.com', '2026-06-10T09:00:00Z', '2026-06-10T10:00:00Z');
    const q = {
      calendarIds: ['primary'],
      timeMin: Date.parse('2026-06-10T00:00:00Z'),
      timeMax: Date.parse('2026-06-11T00:00:00Z'),
    };
    emu.expireAccessTokens();
    const err = await caught(googleFreeBusy({ apiUrl: emu.apiUrl }, fetch, tokens.access_token, q));
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ code: 'unauthorized', status: 401 });

    const refreshed = await refreshToken(emu.oauthConfig(), fetch, tokens.refresh_token as string);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).toBeUndefined(); // Google keeps the old one valid
    const res = await googleFreeBusy({ apiUrl: emu.apiUrl }, fetch, refreshed.access_token, q);
    expect(res.busy).toEqual([
      { start: Date.parse('2026-06-10T09:00:00Z'), end: Date.parse('2026-06-10T10:00:00Z') },
    ]);

    emu.revokeRefreshTokens();
    const revoked = await caught(refreshToken(emu.oauthConfig(), fetch, tokens.refresh_token as string));
    expect(revoked).toBeInstanceOf(OAuthError);
    expect(revoked).toMatchObject({ code: 'invalid_grant', status: 400 });
  });

  it('revokes a grant: its refresh and access tokens stop working; a second revocation is "invalid"', async () => {
    const tokens = await connect();
    expect(await revokeToken(`${emu.url}/revoke`, fetch, tokens.refresh_token as string)).toBe('revoked');
    const refresh = await caught(refreshToken(emu.oauthConfig(), fetch, tokens.refresh_token as string));
    expect(refresh).toMatchObject({ code: 'invalid_grant', status: 400 });
    const q = { calendarIds: ['primary'], timeMin: 0, timeMax: DAY };
    const api = await caught(googleFreeBusy({ apiUrl: emu.apiUrl }, fetch, tokens.access_token, q));
    expect(api).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(await revokeToken(`${emu.url}/revoke`, fetch, tokens.refresh_token as string)).toBe('invalid');
    // Anything else (here: no such endpoint) is an error worth retrying.
    const other = await caught(revokeToken(`${emu.url}/no-such-endpoint`, fetch, 'x'));
    expect(other).toBeInstanceOf(OAuthError);
    expect(other).toMatchObject({ status: 404 });
  });

  it('honours a configurable token lifetime', async () => {
    let now = Date.now();
    const short = await startGoogleEmulator({ tokenLifetimeSeconds: 60, now: () => now });
    try {
      const tokens = await connect(short);
      expect(Math.round((tokens.expires_at - Date.now()) / 1000)).toBe(60);
      await googleListCalendars({ apiUrl: short.apiUrl }, fetch, tokens.access_token);
      now += 61_000;
      const err = await caught(googleListCalendars({ apiUrl: short.apiUrl }, fetch, tokens.access_token));
      expect(err).toMatchObject({ code: 'unauthorized', status: 401 });
    } finally {
      await short.close();
    }
  });

  it('maps 429 and 403 rateLimitExceeded with Retry-After, and 5xx', async () => {
    const token = emu.oauth.issueAccessToken();
    const q = { calendarIds: ['primary'], timeMin: 0, timeMax: DAY };
    emu.failNext(1, 429, 17);
    expect(await caught(googleFreeBusy({ apiUrl: emu.apiUrl }, fetch, token, q))).toMatchObject({
      code: 'rate_limited',
      status: 429,
      retryAfterMs: 17_000,
      reason: 'rateLimitExceeded',
    });
    emu.failNext(1, 403);
    const e403 = await caught(googleFreeBusy({ apiUrl: emu.apiUrl }, fetch, token, q));
    expect(e403).toMatchObject({ code: 'rate_limited', status: 403 });
    expect((e403 as ProviderError).retryAfterMs).toBeUndefined();
    emu.failNext(1, 503, 2);
    expect(await caught(googleListCalendars({ apiUrl: emu.apiUrl }, fetch, token))).toMatchObject({
      code: 'unavailable',
      status: 503,
      retryAfterMs: 2000,
    });
    // After the injected failures it works again.
    expect((await googleFreeBusy({ apiUrl: emu.apiUrl }, fetch, token, q)).errors).toEqual([]);
  });

  it('splits more than 50 calendars and long windows into calls Google accepts, and merges', async () => {
    const token = emu.oauth.issueAccessToken();
    const ids = Array.from({ length: 120 }, (_, i) => `cal-${i}@group.calendar.google.com`);
    for (const id of ids) emu.addCalendar(id);
    const t0 = Date.parse('2026-06-01T00:00:00Z');
    emu.addBusy(ids[0] as string, t0 + 1 * DAY, t0 + 1 * DAY + 3_600_000);
    emu.addBusy(ids[60] as string, t0 + 100 * DAY, t0 + 100 * DAY + 3_600_000);
    emu.addBusy(ids[119] as string, t0 + 190 * DAY, t0 + 190 * DAY + 3_600_000);
    // Overlapping blocks on two calendars merge into one.
    emu.addBusy(ids[1] as string, t0 + 5 * DAY, t0 + 5 * DAY + 7_200_000);
    emu.addBusy(ids[99] as string, t0 + 5 * DAY + 3_600_000, t0 + 5 * DAY + 10_800_000);
    // A block straddling a window split point comes back whole.
    emu.addBusy(ids[2] as string, t0 + 89 * DAY - 3_600_000, t0 + 89 * DAY + 3_600_000);

    // The emulator enforces Google's limits: one raw call with 51 calendars is refused.
    const raw = await fetch(`${emu.apiUrl}/freeBusy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        timeMin: new Date(t0).toISOString(),
        timeMax: new Date(t0 + DAY).toISOString(),
        items: ids.slice(0, 51).map((id) => ({ id })),
      }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ error: { errors: [{ reason: 'tooManyCalendarsRequested' }] } });
    emu.freeBusyCalls.length = 0;

    const res = await googleFreeBusy({ apiUrl: emu.apiUrl }, fetch, token, {
      calendarIds: [...ids, 'missing@example.com'],
      timeMin: t0,
      timeMax: t0 + 200 * DAY,
    });
    expect(emu.freeBusyCalls.length).toBe(3 * 3); // 3 windows × 3 groups of ≤ 50
    for (const call of emu.freeBusyCalls) {
      expect(call.ids.length).toBeLessThanOrEqual(GOOGLE_MAX_CALENDARS_PER_CALL);
      expect(Date.parse(call.timeMax) - Date.parse(call.timeMin)).toBeLessThanOrEqual(90 * DAY);
    }
    expect(res.busy).toEqual([
      { start: t0 + DAY, end: t0 + DAY + 3_600_000 },
      { start: t0 + 5 * DAY, end: t0 + 5 * DAY + 10_800_000 },
      { start: t0 + 89 * DAY - 3_600_000, end: t0 + 89 * DAY + 3_600_000 },
      { start: t0 + 100 * DAY, end: t0 + 100 * DAY + 3_600_000 },
      { start: t0 + 190 * DAY, end: t0 + 190 * DAY + 3_600_000 },
    ]);
    expect(res.errors).toEqual([{ calendarId: 'missing@example.com', reason: 'notFound' }]);
  });

  it('follows calendarList pages', async () => {
    const small = await startGoogleEmulator({ maxPageSize: 2 });
    try {
      for (let i = 0; i < 4; i++) small.addCalendar(`c${i}@group.calendar.google.com`, { summary: `C${i}` });
      const cals = await googleListCalendars({ apiUrl: small.apiUrl }, fetch, small.oauth.issueAccessToken());
      expect(cals.map((c) => c.id)).toEqual([
        'user@example.com',
        'c0@group.calendar.google.com',
        'c1@group.calendar.google.com',
        'c2@group.calendar.google.com',
        'c3@group.calendar.google.com',
      ]);
      expect(small.requests.calendarList).toBe(3);
    } finally {
      await small.close();
    }
  });

  it('reports a network failure as unavailable', async () => {
    const err = await caught(
      googleFreeBusy({ apiUrl: 'http://127.0.0.1:1/calendar/v3' }, fetch, 't', {
        calendarIds: ['primary'],
        timeMin: 0,
        timeMax: DAY,
      }),
    );
    expect(err).toMatchObject({ code: 'unavailable', status: 0 });
  });
});
