/**
 * CalDAV (a real Radicale server) and ICS feeds (a tiny local HTTP server) through the API and the
 * busy source, and the SSRF guard on both when private addresses are not allowed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RadicaleServer, radicaleAvailable, startRadicale } from '../../../test/emulators/radicale.js';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { FakeClock } from '../../platform/clock.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import type { CalendarService } from './service.js';

/** The calendars service behind the module's API (its busy source and provider gateway are internal). */
const calendarsOf = (app: { ctx: { modules: { calendars: unknown } } }) =>
  app.ctx.modules.calendars as CalendarService;

const clock = new FakeClock('2026-06-01T00:00:00.000Z');
const T0 = clock.nowMs();
const H = 3_600_000;
const D = 24 * H;
const at = (iso: string) => Date.parse(iso);

const FEED_PATH = '/feeds/s3cr3t-t0ken-4f9a/team.ics';
const FEED = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Kairos tests//EN
X-WR-CALNAME:Team rota
BEGIN:VEVENT
UID:standup@test
DTSTAMP:20260501T000000Z
DTSTART:20260601T090000Z
DTEND:20260601T093000Z
RRULE:FREQ=DAILY;COUNT=5
EXDATE:20260603T090000Z
SUMMARY:Standup
END:VEVENT
BEGIN:VEVENT
UID:lunch@test
DTSTAMP:20260501T000000Z
DTSTART:20260602T120000Z
DTEND:20260602T130000Z
TRANSP:TRANSPARENT
SUMMARY:Optional lunch
END:VEVENT
BEGIN:VEVENT
UID:offsite@test
DTSTAMP:20260501T000000Z
DTSTART;VALUE=DATE:20260610
DTEND;VALUE=DATE:20260611
SUMMARY:Offsite
END:VEVENT
END:VCALENDAR
`.replace(/\n/g, '\r\n');

let feed: Server;
let feedUrl: string;
let feedPort: number;
let feedStatus = 200;
let feedHits = 0;
const HAS_RADICALE = radicaleAvailable();
let radicale: RadicaleServer;
let t: TestApp;
let account: { id: string; key: string };

beforeAll(async () => {
  feed = createServer((req, res) => {
    feedHits++;
    if (req.url === FEED_PATH && feedStatus === 200) {
      res.writeHead(200, { 'content-type': 'text/calendar; charset=utf-8' }).end(FEED);
    } else if (req.url === '/not-a-calendar') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>');
    } else if (req.url === '/moved.ics') {
      res.writeHead(301, { location: FEED_PATH }).end();
    } else {
      res.writeHead(req.url === FEED_PATH ? feedStatus : 404).end();
    }
  });
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  feedPort = (feed.address() as AddressInfo).port;
  feedUrl = `http://127.0.0.1:${feedPort}${FEED_PATH}`;
  const [server, app] = await Promise.all([
    HAS_RADICALE ? startRadicale() : null,
    startTestApp({ clock, env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } }),
  ]);
  if (server) radicale = server;
  t = app;
  account = await t.account();
});
afterAll(async () => {
  await t?.close();
  await radicale?.stop();
  await new Promise<void>((resolve) => feed.close(() => resolve()));
});
beforeEach(() => {
  clock.set(T0);
  feedStatus = 200;
});

const source = () => calendarsOf(t).busySource;

const newHost = (timezone = 'UTC') => fixtures.newHost(t, { accountId: account.id }, { timezone });

describe('ICS feeds', () => {
  it('adds a feed (RRULE, EXDATE, all-day in the host’s zone, transparent ignored), URL stored encrypted', async () => {
    const host = await newHost('Europe/Berlin');
    const res = await t.call('POST', '/v1/calendars/ics', {
      token: account.key,
      body: { url: feedUrl, principal_id: host },
    });
    expect(res.status).toBe(201);
    const { connection } = await res.json();
    expect(connection).toMatchObject({ provider: 'ics', status: 'connected', account: '127.0.0.1' });
    expect(connection.id).toMatch(/^conn_/);
    expect(connection.calendars).toEqual([
      expect.objectContaining({ name: 'Team rota', provider: 'ics', primary: true, selected: true }),
    ]);

    const row = await t.ctx.db
      .selectFrom('calendar_connections')
      .selectAll()
      .where('id', '=', connection.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('s3cr3t');

    // The feed was read once at connect time and seeded the cache: no new fetch here.
    const hits = feedHits;
    const answer = await source().busy(host, { start: T0, end: T0 + 14 * D });
    expect(feedHits).toBe(hits);
    expect(answer).toEqual({
      intervals: [
        { start: at('2026-06-01T09:00:00Z'), end: at('2026-06-01T09:30:00Z') },
        { start: at('2026-06-02T09:00:00Z'), end: at('2026-06-02T09:30:00Z') },
        { start: at('2026-06-04T09:00:00Z'), end: at('2026-06-04T09:30:00Z') },
        { start: at('2026-06-05T09:00:00Z'), end: at('2026-06-05T09:30:00Z') },
        // all day on 10 June in Europe/Berlin (UTC+2)
        { start: at('2026-06-09T22:00:00Z'), end: at('2026-06-10T22:00:00Z') },
      ],
      // The cached list it was cut from, known over the cache's whole rolling window.
      whole: { intervals: expect.any(Array), start: expect.any(Number), end: expect.any(Number) },
      stale: false,
      asOf: T0,
    });

    // The feed fails later: the last known busy time is served as stale.
    feedStatus = 503;
    clock.advance(301_000);
    const stale = await source().busy(host, { start: T0, end: T0 + 3 * D });
    expect(stale?.stale).toBe(true);
    expect(stale?.intervals).toHaveLength(2);
  });

  it('reads all-day events in the host’s zone as it is when fetched, not when connected', async () => {
    const host = await newHost('Europe/Berlin');
    const res = await t.call('POST', '/v1/calendars/ics', {
      token: account.key,
      body: { url: feedUrl, principal_id: host },
    });
    expect(res.status).toBe(201);
    const offsite = async () =>
      (await source().busy(host, { start: T0 + 8 * D, end: T0 + 12 * D }))?.intervals;
    expect(await offsite()).toEqual([{ start: at('2026-06-09T22:00:00Z'), end: at('2026-06-10T22:00:00Z') }]);

    const moved = await t.call('PATCH', `/v1/hosts/${host}`, {
      token: account.key,
      body: { timezone: 'America/New_York' },
    });
    expect(moved.status).toBe(200);
    const sync = await t.call('POST', '/v1/calendars/sync', {
      token: account.key,
      body: { principal_id: host },
    });
    expect(sync.status).toBe(200);
    expect(await offsite()).toEqual([{ start: at('2026-06-10T04:00:00Z'), end: at('2026-06-11T04:00:00Z') }]);
  });

  it('follows a redirect, and answers a replay with the same response (Idempotency-Key)', async () => {
    const host = await newHost();
    const send = () =>
      t.call('POST', '/v1/calendars/ics', {
        token: account.key,
        headers: { 'idempotency-key': `ics-${host}` },
        body: { url: `http://127.0.0.1:${feedPort}/moved.ics`, name: 'Rota', principal_id: host },
      });
    const first = await send();
    expect(first.status).toBe(201);
    const second = await send();
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.text()).toBe(await first.text());
    const list = await (
      await t.call('GET', `/v1/calendars?principal_id=${host}`, { token: account.key })
    ).json();
    expect(list.connections).toHaveLength(1);
    expect(list.calendars[0].name).toBe('Rota');
  });

  it('rejects what is not a calendar feed with a field message', async () => {
    const res = await t.call('POST', '/v1/calendars/ics', {
      token: account.key,
      body: { url: `http://127.0.0.1:${feedPort}/not-a-calendar` },
    });
    expect(res.status).toBe(400);
    expect((await res.json()).errors.url).toMatch(/iCalendar/);
    const missing = await t.call('POST', '/v1/calendars/ics', {
      token: account.key,
      body: { url: `http://127.0.0.1:${feedPort}/nothing.ics` },
    });
    expect(missing.status).toBe(400);
    expect((await missing.json()).errors.url).toMatch(/404/);
  });
});

describe.skipIf(!HAS_RADICALE)('CalDAV (Radicale)', () => {
  it('discovers calendars, stores the password encrypted, and reads recurring busy time', async () => {
    await radicale.putEvent(
      'work',
      'weekly',
      [
        'BEGIN:VCALENDAR',
        'VERSION:2.0',
        'PRODID:-//Kairos tests//EN',
        'BEGIN:VEVENT',
        'UID:weekly-1on1',
        'DTSTAMP:20260501T000000Z',
        'DTSTART:20260602T090000Z',
        'DTEND:20260602T100000Z',
        'RRULE:FREQ=WEEKLY;COUNT=3',
        'SUMMARY:1:1',
        'END:VEVENT',
        'END:VCALENDAR',
      ].join('\n'),
    );
    await radicale.putEvent(
      'personal',
      'dentist',
      [
        'BEGIN:VCALENDAR',
        'VERSION:2.0',
        'PRODID:-//Kairos tests//EN',
        'BEGIN:VEVENT',
        'UID:dentist',
        'DTSTAMP:20260501T000000Z',
        'DTSTART:20260603T150000Z',
        'DTEND:20260603T160000Z',
        'SUMMARY:Dentist',
        'END:VEVENT',
        'END:VCALENDAR',
      ].join('\n'),
    );
    const host = await newHost();
    const res = await t.call('POST', '/v1/calendars/caldav/connect', {
      token: account.key,
      body: {
        server_url: `${radicale.url}/`,
        username: radicale.username,
        password: radicale.password,
        principal_id: host,
      },
    });
    expect(res.status).toBe(201);
    const { connection } = await res.json();
    expect(connection).toMatchObject({
      provider: 'caldav',
      status: 'connected',
      account: `alice@${new URL(radicale.url).host}`,
    });
    expect(connection.calendars.map((c: { name: string }) => c.name).sort()).toEqual(['personal', 'work']);
    expect(connection.calendars.every((c: { selected: boolean }) => c.selected)).toBe(true);

    const row = await t.ctx.db
      .selectFrom('calendar_connections')
      .selectAll()
      .where('id', '=', connection.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(radicale.password);
    const creds = calendarsOf(t).gateway.decrypt(row.credentials_enc ?? '');
    expect(creds).toEqual({ kind: 'caldav', username: 'alice', password: radicale.password });

    const answer = await source().busy(host, { start: T0, end: T0 + 21 * D });
    expect(answer?.stale).toBe(false);
    expect(answer?.intervals).toEqual([
      { start: at('2026-06-02T09:00:00Z'), end: at('2026-06-02T10:00:00Z') },
      { start: at('2026-06-03T15:00:00Z'), end: at('2026-06-03T16:00:00Z') },
      { start: at('2026-06-09T09:00:00Z'), end: at('2026-06-09T10:00:00Z') },
      { start: at('2026-06-16T09:00:00Z'), end: at('2026-06-16T10:00:00Z') },
    ]);

    // Deselecting a calendar takes its busy time out.
    const personal = connection.calendars.find((c: { name: string }) => c.name === 'personal');
    await t.call('PATCH', `/v1/calendars/${personal.id}`, { token: account.key, body: { selected: false } });
    const narrowed = await source().busy(host, { start: T0, end: T0 + 7 * D });
    expect(narrowed?.intervals).toEqual([
      { start: at('2026-06-02T09:00:00Z'), end: at('2026-06-02T10:00:00Z') },
    ]);
  });

  it('a wrong password is a 400 on the password field', async () => {
    const res = await t.call('POST', '/v1/calendars/caldav/connect', {
      token: account.key,
      body: { server_url: `${radicale.url}/`, username: radicale.username, password: 'wrong' },
    });
    expect(res.status).toBe(400);
    expect((await res.json()).errors.password).toMatch(/rejected/);
  });
});

describe('connect links without Google or Microsoft', () => {
  async function link(host: string): Promise<string> {
    const res = await t.call('POST', `/v1/hosts/${host}/connect-link`, { token: account.key, body: {} });
    expect(res.status).toBe(201);
    return (await res.json()).connect_link.url;
  }
  const form = (url: string, fields: Record<string, string>, accept = 'text/html') =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept },
      body: new URLSearchParams(fields).toString(),
    });

  it('offer a CalDAV form and a feed form; the feed form connects the host’s calendar', async () => {
    const host = await newHost();
    const url = await link(host);
    const page = await fetch(url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`action="${url}/caldav"`);
    expect(html).toContain(`action="${url}/ics"`);
    expect(html).toContain('name="password" type="password"');

    const bad = await form(`${url}/ics`, { url: 'ftp://example.com/x.ics' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Not connected');
    const asJson = await form(`${url}/ics`, { url: 'ftp://example.com/x.ics' }, 'application/json');
    expect(asJson.status).toBe(400);
    expect(asJson.headers.get('content-type')).toContain('application/problem+json');

    const ok = await form(`${url}/ics`, { url: feedUrl });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Calendar connected');
    const listed = await (
      await t.call('GET', `/v1/calendars?principal_id=${host}`, { token: account.key })
    ).json();
    expect(listed.connections).toEqual([expect.objectContaining({ provider: 'ics', status: 'connected' })]);
  });

  it.skipIf(!HAS_RADICALE)(
    'the CalDAV form connects a CalDAV account; a wrong password says so',
    async () => {
      const host = await newHost();
      const url = await link(host);
      const wrong = await form(`${url}/caldav`, {
        server_url: `${radicale.url}/`,
        username: radicale.username,
        password: 'wrong',
      });
      expect(wrong.status).toBe(400);
      expect(await wrong.text()).toMatch(/password/);
      const ok = await form(`${url}/caldav`, {
        server_url: `${radicale.url}/`,
        username: radicale.username,
        password: radicale.password,
      });
      expect(ok.status, await ok.clone().text()).toBe(200);
      const listed = await (
        await t.call('GET', `/v1/calendars?principal_id=${host}`, { token: account.key })
      ).json();
      expect(listed.connections).toEqual([
        expect.objectContaining({ provider: 'caldav', status: 'connected' }),
      ]);
    },
  );

  it('refuses an invalid link with 404', async () => {
    const res = await form(
      `${t.url}/v1/public/connect/not-a-token/ics`,
      { url: feedUrl },
      'application/json',
    );
    expect(res.status).toBe(404);
  });
});

describe('SSRF guard (KAIROS_ALLOW_PRIVATE_NETWORK=false)', () => {
  let strict: TestApp;
  let key: string;
  beforeAll(async () => {
    strict = await startTestApp({ clock });
    key = (await strict.account()).key;
  });
  afterAll(() => strict.close());

  it('refuses private and loopback targets with a field message, before any request', async () => {
    const hits = feedHits;
    const ics = await strict.call('POST', '/v1/calendars/ics', {
      token: key,
      body: { url: `https://127.0.0.1:${feedPort}${FEED_PATH}` },
    });
    expect(ics.status).toBe(400);
    expect((await ics.json()).errors.url).toMatch(/not a public address/);

    const plain = await strict.call('POST', '/v1/calendars/ics', { token: key, body: { url: feedUrl } });
    expect(plain.status).toBe(400);
    expect((await plain.json()).errors.url).toMatch(/https only/);

    // A host name that resolves to loopback is refused at connect time.
    const dav = await strict.call('POST', '/v1/calendars/caldav/connect', {
      token: key,
      body: { server_url: `https://localhost:${feedPort}/`, username: 'a', password: 'b' },
    });
    expect(dav.status).toBe(400);
    expect((await dav.json()).errors.server_url).toMatch(/not allowed: .*non-public address/);

    const metadata = await strict.call('POST', '/v1/calendars/caldav/connect', {
      token: key,
      body: { server_url: 'https://169.254.169.254/', username: 'a', password: 'b' },
    });
    expect(metadata.status).toBe(400);
    expect(feedHits).toBe(hits);
  });
});
