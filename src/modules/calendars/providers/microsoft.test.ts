import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeViaRedirect } from '../../../../test/emulators/http.js';
import { caught } from '../../../../test/helpers/promises.js';
import { type MicrosoftEmulator, startMicrosoftEmulator } from '../../../../test/emulators/microsoft.js';
import {
  GRAPH_MAX_SCHEDULES_PER_CALL,
  microsoftFreeBusy,
  microsoftListCalendars,
  ProviderError,
  parseGraphDateTime,
} from './microsoft.js';
import {
  buildAuthorizeUrl,
  createPkce,
  exchangeCode,
  MICROSOFT_CALENDAR_SCOPES,
  OAuthError,
  refreshToken,
  type TokenSet,
} from './oauth.js';
import { DAY, HOUR } from '../../../lib/time.js';

const REDIRECT = 'http://127.0.0.1:4000/v1/calendars/microsoft/callback';
const fetch = globalThis.fetch;

describe('Microsoft identity platform + Graph against the emulator', () => {
  let emu: MicrosoftEmulator;

  beforeAll(async () => {
    emu = await startMicrosoftEmulator({ redirectUris: [REDIRECT] });
  });
  afterAll(() => emu.close());
  beforeEach(() => emu.reset());

  async function connect(scopes: readonly string[] = MICROSOFT_CALENDAR_SCOPES): Promise<TokenSet> {
    const pkce = createPkce();
    const url = buildAuthorizeUrl(emu.oauthConfig('organizations'), {
      redirectUri: REDIRECT,
      state: 'ms-state',
      challenge: pkce.challenge,
      scopes,
    });
    const q = new URL(url).searchParams;
    expect(q.get('response_mode')).toBe('query');
    expect(q.get('scope')?.split(' ')).toContain('offline_access');
    expect(q.get('access_type')).toBeNull();
    const back = await authorizeViaRedirect(url);
    expect(back.state).toBe('ms-state');
    return exchangeCode(emu.oauthConfig('organizations'), fetch, {
      code: back.code as string,
      verifier: pkce.verifier,
      redirectUri: REDIRECT,
    });
  }

  it('completes authorize → code → token (offline_access added) and lists calendars', async () => {
    const tokens = await connect(MICROSOFT_CALENDAR_SCOPES);
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.scope).toBe('User.Read Calendars.ReadWrite');
    emu.addCalendar('user@example.com', 'Birthdays');
    const cals = await microsoftListCalendars({ graphUrl: emu.graphUrl }, fetch, tokens.access_token);
    expect(cals).toEqual([
      expect.objectContaining({ name: 'Calendar', isDefault: true, ownerEmail: 'user@example.com' }),
      expect.objectContaining({ name: 'Birthdays', isDefault: false }),
    ]);
  });

  it('rotates refresh tokens; revoked ones give invalid_grant with the AADSTS description', async () => {
    const tokens = await connect();
    const refreshed = await refreshToken(
      emu.oauthConfig('organizations'),
      fetch,
      tokens.refresh_token as string,
    );
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    // Refresh sends the scopes again; asking for more than was granted is refused.
    const wider = await caught(
      refreshToken(
        { ...emu.oauthConfig(), scopes: ['Calendars.ReadWrite.Shared'] },
        fetch,
        refreshed.refresh_token as string,
      ),
    );
    expect(wider).toMatchObject({ code: 'invalid_scope', status: 400 });

    emu.revokeRefreshTokens();
    const err = await caught(refreshToken(emu.oauthConfig(), fetch, refreshed.refresh_token as string));
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ code: 'invalid_grant', status: 400 });
    expect((err as OAuthError).description).toMatch(/^AADSTS70008:/);
  });

  it('rejects a wrong PKCE verifier', async () => {
    const pkce = createPkce();
    const back = await authorizeViaRedirect(
      buildAuthorizeUrl(emu.oauthConfig(), {
        redirectUri: REDIRECT,
        state: 's',
        challenge: pkce.challenge,
        scopes: ['Calendars.Read'],
      }),
    );
    const err = await caught(
      exchangeCode(emu.oauthConfig(), fetch, {
        code: back.code as string,
        verifier: 'x'.repeat(43),
        redirectUri: REDIRECT,
      }),
    );
    expect(err).toMatchObject({ code: 'invalid_grant' });
  });

  it('maps an expired token (InvalidAuthenticationToken) to unauthorized', async () => {
    const tokens = await connect();
    emu.expireAccessTokens();
    const err = await caught(
      microsoftFreeBusy({ graphUrl: emu.graphUrl }, fetch, tokens.access_token, {
        schedules: ['user@example.com'],
        start: 0,
        end: DAY,
      }),
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ code: 'unauthorized', status: 401, reason: 'InvalidAuthenticationToken' });
  });

  it('maps 429 TooManyRequests with Retry-After, and 503', async () => {
    const token = emu.oauth.issueAccessToken();
    const q = { schedules: ['user@example.com'], start: 0, end: DAY };
    emu.failNext(1, 429, 30);
    expect(await caught(microsoftFreeBusy({ graphUrl: emu.graphUrl }, fetch, token, q))).toMatchObject({
      code: 'rate_limited',
      status: 429,
      retryAfterMs: 30_000,
      reason: 'TooManyRequests',
    });
    emu.failNext(1, 503, 5);
    expect(await caught(microsoftListCalendars({ graphUrl: emu.graphUrl }, fetch, token))).toMatchObject({
      code: 'unavailable',
      status: 503,
      retryAfterMs: 5000,
    });
    expect((await microsoftFreeBusy({ graphUrl: emu.graphUrl }, fetch, token, q)).errors).toEqual([]);
  });

  it('enforces the Graph limits in the emulator (≥ 42 days, > 20 schedules)', async () => {
    const token = emu.oauth.issueAccessToken();
    const call = (days: number, n: number) =>
      fetch(`${emu.graphUrl}/me/calendar/getSchedule`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          schedules: Array.from({ length: n }, (_, i) => `p${i}@example.com`),
          startTime: { dateTime: '2026-06-01T00:00:00', timeZone: 'UTC' },
          endTime: {
            dateTime: new Date(Date.parse('2026-06-01T00:00:00Z') + days * DAY).toISOString().slice(0, 19),
            timeZone: 'UTC',
          },
          availabilityViewInterval: 60,
        }),
      });
    const tooLong = await call(42, 1);
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toMatchObject({ error: { code: 'ErrorTimeIntervalTooBig' } });
    const tooMany = await call(1, 21);
    expect(tooMany.status).toBe(400);
    expect((await call(41.9, 20)).status).toBe(200);
  });

  it('splits a 90-day window and 45 schedules into accepted calls and merges the busy time', async () => {
    const token = emu.oauth.issueAccessToken();
    const people = Array.from({ length: 45 }, (_, i) => `person${i}@example.com`);
    const t0 = Date.parse('2026-06-01T00:00:00Z');
    emu.addBusy(people[0] as string, t0 + 2 * DAY, t0 + 2 * DAY + HOUR, 'busy');
    emu.addBusy(people[25] as string, t0 + 50 * DAY, t0 + 50 * DAY + HOUR, 'oof');
    emu.addBusy(people[44] as string, t0 + 85 * DAY, t0 + 85 * DAY + HOUR, 'tentative');
    emu.addBusy(people[10] as string, t0 + 60 * DAY, t0 + 60 * DAY + HOUR, 'workingElsewhere');
    emu.addBusy(people[11] as string, t0 + 61 * DAY, t0 + 61 * DAY + HOUR, 'free');
    // An item across the first split point (41 days) is returned by both calls; it merges back.
    emu.addBusy(people[3] as string, t0 + 41 * DAY - HOUR, t0 + 41 * DAY + HOUR, 'busy');
    for (const p of people) emu.addMailbox(p);

    const res = await microsoftFreeBusy({ graphUrl: emu.graphUrl }, fetch, token, {
      schedules: [...people, 'ghost@example.com'],
      start: t0,
      end: t0 + 90 * DAY,
      availabilityViewInterval: 60,
    });
    expect(emu.getScheduleCalls.length).toBe(3 * 3); // windows 41+41+8 days × groups 20+20+6
    for (const c of emu.getScheduleCalls) {
      expect(c.schedules.length).toBeLessThanOrEqual(GRAPH_MAX_SCHEDULES_PER_CALL);
      expect(Date.parse(c.end) - Date.parse(c.start)).toBeLessThan(42 * DAY);
      expect(c.timeZone).toBe('UTC');
    }
    expect(res.busy).toEqual([
      { start: t0 + 2 * DAY, end: t0 + 2 * DAY + HOUR },
      { start: t0 + 41 * DAY - HOUR, end: t0 + 41 * DAY + HOUR },
      { start: t0 + 50 * DAY, end: t0 + 50 * DAY + HOUR },
      { start: t0 + 60 * DAY, end: t0 + 60 * DAY + HOUR },
      { start: t0 + 85 * DAY, end: t0 + 85 * DAY + HOUR },
    ]);
    expect(res.errors).toEqual([{ calendarId: 'ghost@example.com', reason: 'ErrorMailRecipientNotFound' }]);
  });

  it('follows @odata.nextLink pages of /me/calendars', async () => {
    const token = emu.oauth.issueAccessToken('pager@example.com');
    for (let i = 0; i < 12; i++) emu.addCalendar('pager@example.com', `Cal ${i}`);
    const before = emu.requests.calendars;
    const cals = await microsoftListCalendars({ graphUrl: emu.graphUrl }, fetch, token);
    expect(cals).toHaveLength(13);
    expect(emu.requests.calendars - before).toBe(2);
  });

  it('reads Graph dateTimeTimeZone values', () => {
    expect(parseGraphDateTime({ dateTime: '2026-06-01T09:00:00.0000000', timeZone: 'UTC' })).toBe(
      Date.parse('2026-06-01T09:00:00Z'),
    );
    expect(
      parseGraphDateTime({ dateTime: '2026-01-15T09:00:00.0000000', timeZone: 'Pacific Standard Time' }),
    ).toBe(Date.parse('2026-01-15T17:00:00Z'));
    expect(parseGraphDateTime({ dateTime: '2026-07-15T09:00:00', timeZone: 'Europe/Paris' })).toBe(
      Date.parse('2026-07-15T07:00:00Z'),
    );
    expect(parseGraphDateTime({ dateTime: 'garbage', timeZone: 'UTC' })).toBeUndefined();
  });
});
