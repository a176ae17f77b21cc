/**
 * A calendar that cannot be read is never answered as free time (docs/api.md#availability). Google and
 * Microsoft (the emulators, driven through the real clients) and an ICS feed fail with 500, with 429
 * and Retry-After, and by holding the request past the client's time limit: with earlier busy time
 * the answer is `stale: true` and `busy_as_of` says when that busy time was read; with nothing usable
 * the answer is 503 naming the calendar that failed, with Retry-After.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type GoogleEmulator, startGoogleEmulator } from '../../../test/emulators/google.js';
import { authorizeViaRedirect } from '../../../test/emulators/http.js';
import { type MicrosoftEmulator, startMicrosoftEmulator } from '../../../test/emulators/microsoft.js';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { vcalendar } from '../../../test/helpers/ics.js';
import { FakeClock } from '../../platform/clock.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { emulatorEnv } from '../../../test/helpers/emulator-env.js';

const H = 3_600_000;
const D = 24 * H;
const clock = new FakeClock('2026-06-01T12:00:00.000Z'); // a Monday
const T0 = clock.nowMs();
/** Short: a whole scenario stays within the 60 s cached principals live (memo keys hold their schedules). */
const TTL_S = 10;
/**
 * KAIROS_PROVIDER_TIMEOUT_MS of the app; a held request is answered well after it. A good read must
 * finish within it on a loaded machine too (at 200 ms, a first Microsoft read once took longer in CI).
 */
const TIMEOUT_MS = 1000;
const HOLD_MS = 3000;
/** The busy event: Wednesday 3 June 2026, 10:00-11:00 UTC (hosts work 09-17 UTC). */
const DAY = Date.parse('2026-06-03T00:00:00.000Z');
const BUSY = { start: DAY + 10 * H, end: DAY + 11 * H };
const USER = 'user@example.com';

type Failure = '500' | '429' | 'timeout';
const FAILURES: Failure[] = ['500', '429', 'timeout'];
type ProviderName = 'google' | 'microsoft' | 'ics';
const PROVIDERS: ProviderName[] = ['google', 'microsoft', 'ics'];

let google: GoogleEmulator;
let microsoft: MicrosoftEmulator;
let feed: Server;
let feedUrl: string;
/** What the ICS feed does now: answer its events, fail, or hold the request. */
let feedMode: 'ok' | Failure = 'ok';
let feedEvents: { start: number; end: number }[] = [];
let t: TestApp;
let account: { id: string; key: string };

const icsTime = (ms: number) => new Date(ms).toISOString().replace(/[-:]|\.\d{3}/g, '');

beforeAll(async () => {
  google = await startGoogleEmulator({ now: () => clock.nowMs() });
  microsoft = await startMicrosoftEmulator({ now: () => clock.nowMs() });
  feed = createServer((_req, res) => {
    if (feedMode === '500') return void res.writeHead(500).end('down');
    if (feedMode === '429') return void res.writeHead(429, { 'retry-after': '120' }).end('slow down');
    const answer = () => {
      if (res.destroyed) return;
      res
        .writeHead(200, { 'content-type': 'text/calendar' })
        .end(
          vcalendar(
            '\r\n',
            ...feedEvents.map((e, i) => [
              'BEGIN:VEVENT',
              `UID:e${i}@test`,
              'DTSTAMP:20260101T000000Z',
              `DTSTART:${icsTime(e.start)}`,
              `DTEND:${icsTime(e.end)}`,
              'END:VEVENT',
            ]),
          ),
        );
    };
    if (feedMode === 'timeout') setTimeout(answer, HOLD_MS).unref();
    else answer();
  });
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/team.ics`;
  t = await startTestApp({
    clock,
    env: {
      ...emulatorEnv(google, microsoft),
      KAIROS_BUSY_CACHE_TTL_SECONDS: String(TTL_S),
      KAIROS_PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
      KAIROS_ALLOW_PRIVATE_NETWORK: 'true',
    },
  });
  account = await t.account();
});
afterAll(async () => {
  await t?.close();
  await google?.close();
  await microsoft?.close();
  await new Promise<void>((resolve) => feed.close(() => resolve()));
});
beforeEach(() => {
  clock.set(T0);
  google.reset();
  microsoft.reset();
  feedMode = 'ok';
  feedEvents = [];
});

const newHost = () => fixtures.newHost(t, { accountId: account.id }, { timezone: 'UTC' });

/** Connects the host's calendar through the API as a client would; answers the connection id. */
async function connect(provider: ProviderName, host: string): Promise<string> {
  if (provider === 'ics') {
    const res = await t.call('POST', '/v1/calendars/ics', {
      token: account.key,
      body: { url: feedUrl, principal_id: host },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()).connection.id;
  }
  const q = new URLSearchParams({ redirect_uri: 'https://client.example/done', principal_id: host });
  const res = await t.call('GET', `/v1/calendars/${provider}/connect?${q}`, {
    token: account.key,
    headers: { accept: 'application/json' },
  });
  expect(res.status).toBe(200);
  const consent = await authorizeViaRedirect((await res.json()).authorize_url);
  const back = await fetch(consent.location, { redirect: 'manual' });
  const id = new URL(back.headers.get('location') ?? '').searchParams.get('connection_id');
  expect(id).toMatch(/^conn_/);
  return id as string;
}

/** The busy event in the provider's calendar. */
function addBusy(provider: ProviderName): void {
  if (provider === 'google') google.addBusy(USER, BUSY.start, BUSY.end);
  else if (provider === 'microsoft') microsoft.addBusy(USER, BUSY.start, BUSY.end);
  else feedEvents.push(BUSY);
}

/** From now on the provider fails every busy read this way. */
function fail(provider: ProviderName, failure: Failure): void {
  if (provider === 'ics') {
    feedMode = failure;
    return;
  }
  const emulator = provider === 'google' ? google : microsoft;
  if (failure === 'timeout') emulator.holdNext(1000, HOLD_MS);
  else if (failure === '429') emulator.failNext(1000, 429, 120);
  else emulator.failNext(1000, 500);
}

function recover(provider: ProviderName): void {
  if (provider === 'ics') feedMode = 'ok';
  else if (provider === 'google') google.reset();
  else microsoft.reset();
}

const slotsQuery = (host: string) =>
  new URLSearchParams({
    business_id: host,
    duration_minutes: '30',
    from: new Date(DAY).toISOString(),
    to: new Date(DAY + D).toISOString(),
  });

async function slots(host: string) {
  const res = await t.call('GET', `/v1/availability/slots?${slotsQuery(host)}`, { token: account.key });
  return { res, text: await res.clone().text() };
}

type Slot = { start: string; end: string };
/** Whether any slot overlaps the busy event. */
const overlapsBusy = (list: Slot[]) =>
  list.some((s) => Date.parse(s.start) < BUSY.end && Date.parse(s.end) > BUSY.start);

/** A host with the provider's calendar connected and the busy event read once, fresh, at T0. */
async function hostWithGoodRead(provider: ProviderName): Promise<{ host: string; connection: string }> {
  addBusy(provider);
  const host = await newHost();
  const connection = await connect(provider, host);
  const { res, text } = await slots(host);
  expect(res.status, text).toBe(200);
  const fresh = JSON.parse(text);
  expect(fresh).toMatchObject({ stale: false, busy_as_of: null });
  expect(fresh.slots.length).toBeGreaterThan(0);
  expect(overlapsBusy(fresh.slots)).toBe(false);
  return { host, connection };
}

describe.each(PROVIDERS)('%s calendar failing', (provider) => {
  describe.each(FAILURES)('with %s', (failure) => {
    it('with earlier busy time: stale, busy_as_of is when it was read, and the busy time is not free', async () => {
      const { host } = await hostWithGoodRead(provider);
      clock.advance((TTL_S + 1) * 1000); // the cached busy time is no longer fresh: the provider is asked
      fail(provider, failure);
      const { res, text } = await slots(host);
      expect(res.status, text).toBe(200);
      const body = JSON.parse(text);
      expect(body.stale).toBe(true);
      expect(body.busy_as_of).toBe(new Date(T0).toISOString());
      expect(body.slots.length).toBeGreaterThan(0);
      expect(overlapsBusy(body.slots)).toBe(false);
    });

    it('with nothing usable cached: 503 naming the calendar, with Retry-After, never free time', async () => {
      addBusy(provider);
      const host = await newHost();
      if (provider === 'ics') {
        // A feed is read when it is added; that read is past use (24 hours) once the feed fails.
        const connection = await connect(provider, host);
        clock.advance(25 * H);
        fail(provider, failure);
        await expectUnavailable(host, connection, failure);
      } else {
        const connection = await connect(provider, host); // nothing read yet: the refresh job waits
        fail(provider, failure);
        await expectUnavailable(host, connection, failure);
      }
    });
  });
});

async function expectUnavailable(host: string, connection: string, failure: Failure): Promise<void> {
  const { res, text } = await slots(host);
  expect(res.status, text).toBe(503);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(text);
  expect(problem).toMatchObject({
    status: 503,
    code: 'calendar_unavailable',
    principal_id: host,
    connection_id: connection,
  });
  expect(problem.type).toMatch(/\/errors\/service-unavailable$/);
  expect(problem.request_id).toMatch(/^req_/);
  expect(problem.detail).toContain(connection);
  expect(problem.slots).toBeUndefined();
  const retryAfter = res.headers.get('retry-after');
  if (failure === '429') expect(retryAfter).toBe('120');
  else expect(Number(retryAfter)).toBeGreaterThan(0);
  // The other answers built from the same busy time refuse too.
  const next = await t.call(
    'GET',
    `/v1/availability/next?business_id=${host}&after=${new Date(DAY).toISOString()}`,
    {
      token: account.key,
    },
  );
  expect(next.status).toBe(503);
  expect(await next.json()).toMatchObject({ code: 'calendar_unavailable', connection_id: connection });
}

describe('stale answers everywhere', () => {
  it('next, mutual, blocks and a booking link’s slots say stale and busy_as_of too', async () => {
    const { host } = await hostWithGoodRead('google');
    const other = await newHost();
    await connect('ics', other); // a second principal whose feed stays readable
    const link = await t.call('POST', '/v1/booking-links', {
      token: account.key,
      body: { title: 'Call', slug: `stale-${Date.now()}`, host_ids: [host], duration_minutes: 30 },
    });
    expect(link.status, await link.clone().text()).toBe(201);
    const slug = (await link.json()).booking_link.slug as string;
    clock.advance((TTL_S + 1) * 1000);
    fail('google', '500');
    const asOf = new Date(T0).toISOString();
    const from = new Date(DAY).toISOString();
    const to = new Date(DAY + D).toISOString();

    const next = await t.call('GET', `/v1/availability/next?business_id=${host}&after=${from}`, {
      token: account.key,
    });
    expect(next.status).toBe(200);
    const nextBody = await next.json();
    expect(nextBody).toMatchObject({ stale: true, busy_as_of: asOf });
    expect(overlapsBusy([nextBody.slot])).toBe(false);

    const mutual = await t.call(
      'GET',
      `/v1/availability/mutual?principal_ids=${host},${other}&from=${from}&to=${to}`,
      { token: account.key },
    );
    expect(mutual.status).toBe(200);
    const mutualBody = await mutual.json();
    expect(mutualBody).toMatchObject({ stale: true, busy_as_of: asOf });
    expect(overlapsBusy(mutualBody.slots)).toBe(false);

    const blocks = await t.call('GET', `/v1/principals/${host}/availability?from=${from}&to=${to}`, {
      token: account.key,
    });
    expect(blocks.status).toBe(200);
    const blocksBody = await blocks.json();
    expect(blocksBody).toMatchObject({ stale: true, busy_as_of: asOf });
    expect(blocksBody.blocks).toContainEqual({
      start: new Date(BUSY.start).toISOString(),
      end: new Date(BUSY.end).toISOString(),
      status: 'busy',
      source: 'calendar',
    });

    const pub = await fetch(`${t.url}/v1/public/links/${slug}/availability?from=${from}&to=${to}`);
    expect(pub.status).toBe(200);
    const pubBody = (await pub.json()) as { stale: boolean; busy_as_of: string | null; slots: Slot[] };
    expect(pubBody).toMatchObject({ stale: true, busy_as_of: asOf });
    expect(overlapsBusy(pubBody.slots)).toBe(false);
  });

  it('a remembered stale answer keeps its own age: a later failure shows the later read', async () => {
    const { host } = await hostWithGoodRead('google');
    clock.advance((TTL_S + 1) * 1000);
    fail('google', '500');
    const first = await slots(host);
    expect(JSON.parse(first.text)).toMatchObject({ stale: true, busy_as_of: new Date(T0).toISOString() });
    expect((await slots(host)).text).toBe(first.text); // asked again: remembered from now on
    expect((await slots(host)).text).toBe(first.text);

    // The provider answers again after its backoff: fresh, the same busy time.
    recover('google');
    addBusy('google');
    clock.advance(20_000);
    const readAt = clock.nowMs();
    const fresh = JSON.parse((await slots(host)).text);
    expect(fresh).toMatchObject({ stale: false, busy_as_of: null });

    // It fails again once that read is old: the answer dates from the second read, not the first.
    clock.advance((TTL_S + 1) * 1000);
    fail('google', '500');
    for (let i = 0; i < 3; i++) {
      const again = JSON.parse((await slots(host)).text);
      expect(again).toMatchObject({ stale: true, busy_as_of: new Date(readAt).toISOString() });
      expect(overlapsBusy(again.slots)).toBe(false);
    }
  });
});
