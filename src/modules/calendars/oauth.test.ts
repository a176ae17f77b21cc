/**
 * Google and Microsoft connections through the API against the provider emulators (real HTTP): the
 * OAuth round trip, token refresh (ahead of expiry, after a 401), invalid_grant, 429, the busy cache
 * and its stale and 503 answers, selection, sync and disconnect.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type GoogleEmulator, startGoogleEmulator } from '../../../test/emulators/google.js';
import { authorizeViaRedirect } from '../../../test/emulators/http.js';
import { type MicrosoftEmulator, startMicrosoftEmulator } from '../../../test/emulators/microsoft.js';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { FakeClock } from '../../platform/clock.js';
import type { AppError } from '../../platform/errors.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import type { CalendarService } from './service.js';
import { emulatorEnv } from '../../../test/helpers/emulator-env.js';

/** The calendars service behind the module's API (its busy source and provider gateway are internal). */
const calendarsOf = (app: { ctx: { modules: { calendars: unknown } } }) =>
  app.ctx.modules.calendars as CalendarService;

const clock = new FakeClock('2026-06-01T12:00:00.000Z');
const H = 3_600_000;
const T0 = clock.nowMs();
const WEEK = { start: T0, end: T0 + 7 * 24 * H };
const CLIENT_REDIRECT = 'https://client.example/calendar-done';
const TTL_S = 300;

let google: GoogleEmulator;
let microsoft: MicrosoftEmulator;
let t: TestApp;
let account: { id: string; key: string };

beforeAll(async () => {
  google = await startGoogleEmulator({ now: () => clock.nowMs() });
  microsoft = await startMicrosoftEmulator({ now: () => clock.nowMs() });
  t = await startTestApp({
    clock,
    env: {
      ...emulatorEnv(google, microsoft),
      KAIROS_BUSY_CACHE_TTL_SECONDS: String(TTL_S),
    },
  });
  account = await t.account();
});
afterAll(async () => {
  await t.close();
  await google.close();
  await microsoft.close();
});
beforeEach(() => {
  clock.set(T0);
  google.setUser('user@example.com');
  google.reset();
  microsoft.reset();
});

const source = () => calendarsOf(t).busySource;

/** A fresh host of the test account, so each test has its own connections. */
const newHost = (name = 'Host') =>
  fixtures.newHost(t, { accountId: account.id }, { display_name: name, timezone: 'UTC' });

/** Connect through the API as a client app would; returns where the browser ends up. */
async function connect(provider: 'google' | 'microsoft', principalId: string, state = 'client-state-1') {
  const q = new URLSearchParams({ redirect_uri: CLIENT_REDIRECT, state, principal_id: principalId });
  const res = await t.call('GET', `/v1/calendars/${provider}/connect?${q}`, {
    token: account.key,
    headers: { accept: 'application/json' },
  });
  expect(res.status).toBe(200);
  const { authorize_url } = await res.json();
  const consent = await authorizeViaRedirect(authorize_url);
  expect(consent.code).toBeTruthy();
  const callback = await fetch(consent.location, { redirect: 'manual' });
  expect(callback.status).toBe(302);
  return { back: new URL(callback.headers.get('location') ?? ''), callbackUrl: consent.location };
}

async function list(principalId: string) {
  const res = await t.call('GET', `/v1/calendars?principal_id=${principalId}`, { token: account.key });
  expect(res.status).toBe(200);
  return res.json();
}

describe('Google OAuth round trip', () => {
  it('redirects to Google with PKCE S256, offline access and a signed state', async () => {
    const res = await fetch(`${t.url}/v1/calendars/google/connect?state=abc`, {
      headers: { authorization: `Bearer ${account.key}` },
      redirect: 'manual',
    });
    expect(res.status).toBe(302);
    const url = new URL(res.headers.get('location') ?? '');
    expect(`${url.origin}${url.pathname}`).toBe(`${google.url}/o/oauth2/v2/auth`);
    const q = url.searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('access_type')).toBe('offline');
    expect(q.get('redirect_uri')).toBe(`${t.url}/v1/calendars/google/callback`);
    expect(q.get('state')).not.toBe('abc');
    expect(q.get('state')?.length).toBeGreaterThan(40);
  });

  it('connects, stores tokens encrypted, lists calendars and answers busy time from the cache', async () => {
    const host = await newHost();
    google.addCalendar('team@example.com', { summary: 'Team', owner: 'user@example.com' });
    const { back, callbackUrl } = await connect('google', host);
    expect(`${back.origin}${back.pathname}`).toBe(CLIENT_REDIRECT);
    expect(back.searchParams.get('status')).toBe('connected');
    expect(back.searchParams.get('state')).toBe('client-state-1');
    expect(back.searchParams.get('provider')).toBe('google');
    const connectionId = back.searchParams.get('connection_id');
    expect(connectionId).toMatch(/^conn_/);

    const body = await list(host);
    const googleSummary = body.providers.find((p: { name: string }) => p.name === 'google');
    expect(googleSummary).toMatchObject({ connected: true, status: 'connected', calendar_count: 2 });
    expect(body.calendars).toHaveLength(2);
    const primary = body.calendars.find((c: { primary: boolean }) => c.primary);
    expect(primary).toMatchObject({ name: 'user@example.com', provider: 'google', selected: true });
    expect(primary.id).toMatch(/^cal_/);
    expect(body.calendars.find((c: { primary: boolean }) => !c.primary).selected).toBe(false);
    expect(body.connections[0]).toMatchObject({ id: connectionId, account: 'user@example.com' });

    // Tokens are encrypted at rest.
    const row = await t.ctx.db
      .selectFrom('calendar_connections')
      .selectAll()
      .where('id', '=', connectionId)
      .executeTakeFirstOrThrow();
    const creds = calendarsOf(t).gateway.decrypt(row.credentials_enc ?? '');
    if (creds.kind !== 'oauth') throw new Error('expected OAuth credentials');
    expect(creds.access_token).toMatch(/^at_/);
    expect(creds.refresh_token).toMatch(/^rt_/);
    expect(JSON.stringify(row)).not.toContain(creds.access_token);
    expect(JSON.stringify(row)).not.toContain(creds.refresh_token);
    expect(row.credentials_enc).toMatch(/^v1\./);

    // The callback cannot be replayed.
    const replay = await fetch(callbackUrl, { redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as Json).errors.state).toMatch(/already used/);

    // Busy time: cold read fetches once, the second read comes from the cache.
    google.addBusy('user@example.com', T0 + 22 * H, T0 + 23 * H);
    google.addBusy('team@example.com', T0 + 30 * H, T0 + 31 * H); // not selected
    const before = google.requests.eventsList;
    const first = await source().busy(host, WEEK);
    expect(first).toEqual({ intervals: [{ start: T0 + 22 * H, end: T0 + 23 * H }], stale: false, asOf: T0 });
    expect(google.requests.eventsList).toBe(before + 1);
    clock.advance(60_000);
    const second = await source().busy(host, { start: T0 + 20 * H, end: T0 + 48 * H });
    expect(second?.intervals).toEqual([{ start: T0 + 22 * H, end: T0 + 23 * H }]);
    expect(google.requests.eventsList).toBe(before + 1);

    // Selecting the second calendar makes the next read fetch the new selection.
    const team = (await list(host)).calendars.find((c: { primary: boolean }) => !c.primary);
    const patched = await t.call('PATCH', `/v1/calendars/${team.id}`, {
      token: account.key,
      body: { selected: true },
    });
    expect(patched.status).toBe(200);
    expect((await patched.json()).calendar).toMatchObject({ id: team.id, selected: true });
    const third = await source().busy(host, WEEK);
    expect(third?.intervals).toEqual([
      { start: T0 + 22 * H, end: T0 + 23 * H },
      { start: T0 + 30 * H, end: T0 + 31 * H },
    ]);
    // One events.list per selected calendar: the primary one, then both.
    expect(google.requests.eventsList).toBe(before + 3);
  });

  it('documents every calendar route in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${t.url}/v1/openapi.json`)).json()) as Json;
    for (const path of [
      '/v1/calendars/google/connect',
      '/v1/calendars/microsoft/connect',
      '/v1/calendars/google/callback',
      '/v1/calendars/microsoft/callback',
      '/v1/calendars/caldav/connect',
      '/v1/calendars/ics',
      '/v1/calendars',
      '/v1/calendars/{id}',
      '/v1/calendars/sync',
      '/v1/calendars/connections/{provider}',
      '/v1/hosts/{id}/connect-link',
      '/v1/public/connect/{token}',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths['/v1/calendars'].get.responses['200']).toBeDefined();
  });

  it('an account key cannot act for a principal it does not manage', async () => {
    const other = await t.account({ name: 'Other' });
    const res = await t.call('GET', `/v1/calendars?principal_id=${other.id}`, { token: account.key });
    expect(res.status).toBe(403);
    const missing = await t.call('GET', '/v1/calendars?principal_id=00000000-0000-7000-8000-000000000000', {
      token: account.key,
    });
    expect(missing.status).toBe(403);
  });

  it('reports a denied consent back to the client', async () => {
    google.denyNextAuthorization();
    const q = new URLSearchParams({ redirect_uri: CLIENT_REDIRECT, state: 's2' });
    const res = await t.call('GET', `/v1/calendars/google/connect?${q}`, {
      token: account.key,
      headers: { accept: 'application/json' },
    });
    const consent = await authorizeViaRedirect((await res.json()).authorize_url);
    expect(consent.error).toBe('access_denied');
    const cb = await fetch(consent.location, { redirect: 'manual' });
    const back = new URL(cb.headers.get('location') ?? '');
    expect(back.searchParams.get('status')).toBe('error');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('s2');
  });

  it('rejects a forged or missing state', async () => {
    const forged = await fetch(`${t.url}/v1/calendars/google/callback?code=x&state=eyJmIjoiYSJ9.bad`, {
      redirect: 'manual',
    });
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as Json).errors).toHaveProperty('state');
    expect((await fetch(`${t.url}/v1/calendars/google/callback?code=x`)).status).toBe(400);
  });
});

describe('tokens', () => {
  it('refreshes an access token before it expires', async () => {
    const host = await newHost();
    google.setTokenLifetime(90); // less than the two-minute refresh margin
    try {
      await connect('google', host);
    } finally {
      google.setTokenLifetime(3600);
    }
    const refreshes = google.oauth.counts.refresh;
    const apiErrors = google.requests.apiErrors;
    const answer = await source().busy(host, WEEK);
    expect(answer?.stale).toBe(false);
    expect(google.oauth.counts.refresh).toBe(refreshes + 1);
    expect(google.requests.apiErrors).toBe(apiErrors); // no 401 was needed
  });

  it('refreshes after a 401 and retries once', async () => {
    const host = await newHost();
    await connect('google', host);
    google.expireAccessTokens(); // the provider now rejects the token we believe valid
    const refreshes = google.oauth.counts.refresh;
    const apiErrors = google.requests.apiErrors;
    const answer = await source().busy(host, WEEK);
    expect(answer?.stale).toBe(false);
    expect(google.requests.apiErrors).toBe(apiErrors + 1);
    expect(google.oauth.counts.refresh).toBe(refreshes + 1);
  });

  it('invalid_grant disconnects the connection, reported in GET /v1/calendars, never "free"', async () => {
    const host = await newHost();
    const { back } = await connect('google', host);
    google.addBusy('user@example.com', T0 + 26 * H, T0 + 27 * H);
    expect((await source().busy(host, WEEK))?.intervals).toEqual([{ start: T0 + 26 * H, end: T0 + 27 * H }]);

    google.expireAccessTokens();
    google.revokeRefreshTokens();
    clock.advance((TTL_S + 1) * 1000);
    const stale = await source().busy(host, WEEK);
    expect(stale).toEqual({
      intervals: [{ start: T0 + 26 * H, end: T0 + 27 * H }],
      whole: expect.objectContaining({ intervals: expect.any(Array) }),
      stale: true,
      asOf: T0,
    });

    const body = await list(host);
    expect(body.providers.find((p: { name: string }) => p.name === 'google')).toMatchObject({
      connected: false,
      status: 'disconnected',
    });
    expect(body.connections[0]).toMatchObject({
      id: back.searchParams.get('connection_id'),
      status: 'disconnected',
      status_reason: 'invalid_grant',
    });
    const row = await t.ctx.db
      .selectFrom('calendar_connections')
      .select('credentials_enc')
      .where('id', '=', back.searchParams.get('connection_id'))
      .executeTakeFirstOrThrow();
    expect(row.credentials_enc).toBeNull();

    // Once the last known busy time is too old, the answer is 503, not an empty list.
    clock.advance(25 * H);
    const err = (await source()
      .busy(host, { start: clock.nowMs(), end: clock.nowMs() + 24 * H })
      .catch((e: unknown) => e)) as AppError;
    expect(err.status).toBe(503);
    expect(err.extras.code).toBe('calendar_disconnected');
  });

  it('invalid_grant with nothing cached is a 503; reconnecting repairs the same connection', async () => {
    const host = await newHost();
    const { back } = await connect('google', host);
    google.expireAccessTokens();
    google.revokeRefreshTokens();
    const err = (await source()
      .busy(host, WEEK)
      .catch((e: unknown) => e)) as AppError;
    expect(err.status).toBe(503);
    const sync = await t.call('POST', '/v1/calendars/sync', {
      token: account.key,
      body: { principal_id: host },
    });
    expect(sync.status).toBe(503);
    expect((await sync.json()).code).toBe('calendar_disconnected');

    const again = await connect('google', host);
    expect(again.back.searchParams.get('connection_id')).toBe(back.searchParams.get('connection_id'));
    const body = await list(host);
    expect(body.connections).toHaveLength(1);
    expect(body.connections[0]).toMatchObject({ status: 'connected', status_reason: null });
    expect((await source().busy(host, WEEK))?.stale).toBe(false);
  });
});

describe('provider failures and the cache', () => {
  it('429 cold: 503 with the provider’s Retry-After, and no provider call until then', async () => {
    const host = await newHost();
    await connect('google', host);
    google.failNext(1, 429, 120);
    const calls = google.requests.eventsList + google.requests.apiErrors;
    const err = (await source()
      .busy(host, WEEK)
      .catch((e: unknown) => e)) as AppError;
    expect(err.status).toBe(503);
    expect(err.headers['retry-after']).toBe('120');
    expect(google.requests.eventsList + google.requests.apiErrors).toBe(calls + 1);
    clock.advance(60_000);
    await expect(source().busy(host, WEEK)).rejects.toMatchObject({ status: 503 });
    expect(google.requests.eventsList + google.requests.apiErrors).toBe(calls + 1);
    clock.advance(61_000);
    expect((await source().busy(host, WEEK))?.stale).toBe(false);
  });

  it('serves the last known busy time as stale when the provider fails, then recovers', async () => {
    const host = await newHost();
    await connect('google', host);
    google.addBusy('user@example.com', T0 + 50 * H, T0 + 51 * H);
    await source().busy(host, WEEK);
    clock.advance((TTL_S + 1) * 1000);
    google.failNext(1, 500);
    const stale = await source().busy(host, WEEK);
    expect(stale).toMatchObject({ stale: true, asOf: T0 });
    expect(stale?.intervals).toContainEqual({ start: T0 + 50 * H, end: T0 + 51 * H });
    const listed = await list(host);
    expect(listed.providers.find((p: { name: string }) => p.name === 'google').status).toBe('degraded');
    // After the backoff the provider is asked again.
    clock.advance(20_000);
    const fresh = await source().busy(host, WEEK);
    expect(fresh).toMatchObject({ stale: false, asOf: clock.nowMs() });
  });

  it('a cold cache with a failing provider is a 503', async () => {
    const host = await newHost();
    await connect('google', host);
    google.failNext(1, 503);
    await expect(source().busy(host, WEEK)).rejects.toMatchObject({ status: 503 });
  });

  it('no connected calendar: null (availability answers 404), and sync is a 404', async () => {
    expect(await source().busy(await newHost(), WEEK)).toBeNull();
    const other = await t.account({ name: 'Empty' });
    const res = await fetch(`${t.url}/v1/calendars/sync`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.key}` },
    });
    expect(res.status).toBe(404);
  });

  it('background refresh keeps the cache warm so reads do not call the provider', async () => {
    const host = await newHost();
    await connect('google', host);
    await source().busy(host, WEEK);
    await t.ctx.jobs.drain(); // the refresh queued at connect time, and a first sweep
    clock.advance((TTL_S / 2 + 5) * 1000);
    const before = google.requests.eventsList;
    await t.ctx.jobs.drain();
    expect(google.requests.eventsList).toBeGreaterThan(before);
    clock.advance((TTL_S / 2) * 1000); // older than the TTL counted from the first fetch
    const after = google.requests.eventsList;
    const answer = await source().busy(host, WEEK);
    expect(answer?.stale).toBe(false);
    expect(google.requests.eventsList).toBe(after);
  });
});

describe('sync and disconnect', () => {
  it('POST /v1/calendars/sync fetches now; DELETE removes tokens and calendars and revokes the grant', async () => {
    const host = await newHost();
    google.setUser('solo@example.com'); // a Google account no other principal uses
    await connect('google', host);
    google.addBusy('solo@example.com', T0 + 80 * H, T0 + 81 * H);
    const before = google.requests.eventsList;
    const res = await t.call('POST', '/v1/calendars/sync', {
      token: account.key,
      body: { principal_id: host },
    });
    expect(res.status).toBe(200);
    const sync = await res.json();
    expect(sync.events_synced).toBeGreaterThanOrEqual(1);
    expect(sync.last_sync).toBe(clock.now().toISOString());
    expect(sync.connections[0]).toMatchObject({ provider: 'google', status: 'synced' });
    expect(google.requests.eventsList).toBe(before + 1);

    const del = await t.call('DELETE', `/v1/calendars/connections/google?principal_id=${host}`, {
      token: account.key,
    });
    expect(del.status).toBe(200);
    expect((await del.json()).connections[0]).toMatchObject({ provider: 'google', status: 'disconnected' });
    // The grant is revoked at Google by a job committed with the removal.
    const revokedBefore = google.oauth.revoked.length;
    await t.ctx.jobs.drain();
    expect(google.oauth.revoked.length).toBe(revokedBefore + 1);
    const token = google.oauth.revoked.at(-1)!;
    expect(token).toMatch(/^rt_/);
    expect(google.oauth.refreshTokenValid(token)).toBe(false);
    const rows = await t.ctx.db
      .selectFrom('calendar_connections')
      .select('id')
      .where('principal_id', '=', host)
      .execute();
    expect(rows).toEqual([]);
    expect((await list(host)).calendars).toEqual([]);
    expect(await source().busy(host, WEEK)).toBeNull();
    const again = await t.call('DELETE', `/v1/calendars/connections/google?principal_id=${host}`, {
      token: account.key,
    });
    expect(again.status).toBe(404);
  });

  it('does not revoke a Google account still connected for another principal', async () => {
    google.setUser('shared@example.com');
    const [one, two] = [await newHost('One'), await newHost('Two')];
    await connect('google', one);
    await connect('google', two);
    const del = (host: string) =>
      t.call('DELETE', `/v1/calendars/connections/google?principal_id=${host}`, { token: account.key });
    const revokedBefore = google.oauth.revoked.length;
    expect((await del(one)).status).toBe(200);
    await t.ctx.jobs.drain();
    expect(google.oauth.revoked.length).toBe(revokedBefore); // two still uses it
    expect(await source().busy(two, WEEK)).not.toBeNull();
    expect((await del(two)).status).toBe(200);
    await t.ctx.jobs.drain();
    expect(google.oauth.revoked.length).toBe(revokedBefore + 1);
  });
});

describe('Microsoft OAuth round trip', () => {
  it('connects, reads busy time from the calendar’s events (calendarView), and refreshes with a rotated refresh token', async () => {
    const host = await newHost();
    microsoft.addBusy('user@example.com', T0 + 4 * H, T0 + 5 * H, 'busy');
    microsoft.addBusy('user@example.com', T0 + 6 * H, T0 + 7 * H, 'free');
    const { back } = await connect('microsoft', host, 'ms-state');
    expect(back.searchParams.get('status')).toBe('connected');
    expect(back.searchParams.get('state')).toBe('ms-state');
    const body = await list(host);
    expect(body.providers.find((p: { name: string }) => p.name === 'microsoft')).toMatchObject({
      connected: true,
      calendar_count: 1,
    });
    expect(body.calendars[0]).toMatchObject({ name: 'Calendar', provider: 'microsoft', primary: true });

    const answer = await source().busy(host, WEEK);
    expect(answer?.intervals).toEqual([{ start: T0 + 4 * H, end: T0 + 5 * H }]);
    expect(microsoft.requests.calendarView).toBeGreaterThan(0);

    const connectionId = back.searchParams.get('connection_id') ?? '';
    const tokensOf = async () => {
      const row = await t.ctx.db
        .selectFrom('calendar_connections')
        .select('credentials_enc')
        .where('id', '=', connectionId)
        .executeTakeFirstOrThrow();
      return calendarsOf(t).gateway.decrypt(row.credentials_enc ?? '');
    };
    const old = await tokensOf();
    microsoft.expireAccessTokens();
    clock.advance((TTL_S + 1) * 1000);
    expect((await source().busy(host, WEEK))?.stale).toBe(false);
    const rotated = await tokensOf();
    if (old.kind !== 'oauth' || rotated.kind !== 'oauth') throw new Error('expected OAuth credentials');
    expect(rotated.refresh_token).toMatch(/^rt_/);
    expect(rotated.refresh_token).not.toBe(old.refresh_token);
  });
});

describe('host connect link', () => {
  it('lets a host connect their own calendar without the account seeing credentials', async () => {
    const host = await newHost('Dana');
    const res = await t.call('POST', `/v1/hosts/${host}/connect-link`, { token: account.key }); // no body
    expect(res.status).toBe(201);
    const { connect_link } = await res.json();
    expect(connect_link.url).toMatch(new RegExp(`^${t.url}/v1/public/connect/`));
    expect(new Date(connect_link.expires_at).getTime()).toBe(T0 + 7 * 24 * H);
    expect(connect_link.providers).toEqual(['google', 'microsoft']);

    // The host opens it: no API key. First a page to choose, then the consent screen.
    const page = await fetch(connect_link.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await page.text()).toMatch(/^<!doctype html>[\s\S]*provider=google/);
    const start = await fetch(`${connect_link.url}?provider=google`, { redirect: 'manual' });
    expect(start.status).toBe(302);
    // The flow is bound to this browser by a cookie that only the callback sees.
    const [setCookie] = start.headers.getSetCookie();
    expect(setCookie).toMatch(
      /^kairos_connect_oaf_\w+=[\w-]{43}; Path=\/v1\/calendars\/google\/callback; Max-Age=900; HttpOnly; SameSite=Lax$/,
    );
    const consent = await authorizeViaRedirect(start.headers.get('location') ?? '');
    const done = await fetch(consent.location, {
      redirect: 'manual',
      headers: { cookie: setCookie!.split(';')[0]! },
    });
    expect(done.status).toBe(200);
    expect(await done.text()).toMatch(/^<!doctype html>[\s\S]*Calendar connected/);
    expect(done.headers.getSetCookie()[0]).toMatch(/^kairos_connect_oaf_\w+=; .*Max-Age=0/);

    const body = await list(host);
    expect(body.providers.find((p: { name: string }) => p.name === 'google').connected).toBe(true);
    expect(await t.ctx.modules.calendars.isConnected(host)).toBe(true);
  });

  it('a consent screen finished in another browser connects nothing, and spoils nothing', async () => {
    const host = await newHost('Eve');
    const { connect_link } = await (
      await t.call('POST', `/v1/hosts/${host}/connect-link`, { token: account.key, body: {} })
    ).json();
    const start = await fetch(`${connect_link.url}?provider=google`, { redirect: 'manual' });
    const [setCookie] = start.headers.getSetCookie();
    const consent = await authorizeViaRedirect(start.headers.get('location') ?? '');
    // Someone else's browser: no cookie, then a wrong one.
    const own = setCookie!.split(';')[0]!;
    const name = own.slice(0, own.indexOf('='));
    const foreign: Record<string, string>[] = [{}, { cookie: `${name}=${'A'.repeat(43)}` }];
    for (const headers of foreign) {
      const done = await fetch(consent.location, { redirect: 'manual', headers });
      expect(done.status).toBe(400);
      expect(await done.text()).toMatch(/started in another browser/);
    }
    expect(await t.ctx.modules.calendars.isConnected(host)).toBe(false);
    // The host's own browser still finishes it.
    const done = await fetch(consent.location, { redirect: 'manual', headers: { cookie: own } });
    expect(done.status).toBe(200);
    expect(await t.ctx.modules.calendars.isConnected(host)).toBe(true);
  });

  it('refuses tampered and expired links', async () => {
    const host = await newHost();
    const res = await t.call('POST', `/v1/hosts/${host}/connect-link`, {
      token: account.key,
      body: { expires_in_hours: 1 },
    });
    const { connect_link } = await res.json();
    const url = new URL(connect_link.url);
    const token = url.pathname.split('/').pop()!;
    const withToken = (x: string) => `${url.origin}/v1/public/connect/${x}${url.search}`;
    const flip = (c: string) => (c === 'A' ? 'B' : 'A');
    const middle = token.length >> 1;
    const tampered = token.slice(0, middle) + flip(token[middle]!) + token.slice(middle + 1);
    expect((await fetch(withToken(tampered))).status).toBe(404);
    // Other spellings of the same bytes (the last character's unused bits) are refused too.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(token.at(-1)!);
    for (const sibling of [1, 2, 3].map((bits) => alphabet[(last & ~3) | ((last & 3) ^ bits)]!)) {
      expect((await fetch(withToken(token.slice(0, -1) + sibling))).status).toBe(404);
    }
    expect((await fetch(withToken(token))).status).not.toBe(404);
    clock.advance(2 * H);
    expect((await fetch(connect_link.url)).status).toBe(404);
  });
});
