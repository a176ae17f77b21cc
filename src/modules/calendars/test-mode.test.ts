/**
 * Calendars in test mode (docs/api.md#test-mode), over the real runtime and database, a Google
 * emulator and a local ICS feed: a test-mode meeting is never written to any calendar (nothing leaves
 * the server), a test key reads and syncs the calendars of its own (shared) principal but cannot
 * change them (403 `live_mode_only`), and works on its test hosts' calendars as a live key does on
 * live hosts', their connect links included.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type GoogleEmulator, startGoogleEmulator } from '../../../test/emulators/google.js';
import { authorizeViaRedirect } from '../../../test/emulators/http.js';
import { type MicrosoftEmulator, startMicrosoftEmulator } from '../../../test/emulators/microsoft.js';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { emulatorEnv } from '../../../test/helpers/emulator-env.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { vcalendar } from '../../../test/helpers/ics.js';
import { testKeyFor } from '../../../test/helpers/test-mode.js';
import { WriteBatch } from '../../jobs/runner.js';
import { FakeClock } from '../../platform/clock.js';
import type { MeetingSpec } from './api.js';
import { signConnectLink, verifyConnectLink } from './signed.js';

const T0 = '2026-03-02T06:00:00.000Z';
const clock = new FakeClock(T0);
const FEED_PATH = '/feeds/test-mode/busy.ics';

let google: GoogleEmulator;
let microsoft: MicrosoftEmulator;
let feed: Server;
let feedUrl: string;
let t: TestApp;
let account: { id: string; key: string };
let testKey: string;
let n = 0;

beforeAll(async () => {
  feed = createServer((req, res) => {
    if (req.url === FEED_PATH) {
      res
        .writeHead(200, { 'content-type': 'text/calendar; charset=utf-8' })
        .end(
          vcalendar('\r\n', [
            'BEGIN:VEVENT',
            'UID:busy@test',
            'DTSTAMP:20260301T000000Z',
            'DTSTART:20260303T100000Z',
            'DTEND:20260303T110000Z',
            'SUMMARY:Busy',
            'END:VEVENT',
          ]),
        );
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}${FEED_PATH}`;
  google = await startGoogleEmulator({ now: () => clock.nowMs() });
  microsoft = await startMicrosoftEmulator({ now: () => clock.nowMs() });
  t = await startTestApp({
    clock,
    env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true', ...emulatorEnv(google, microsoft) },
  });
  account = await t.account();
  testKey = (await testKeyFor(t, account.key)).key;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await google?.close();
  await microsoft?.close();
  await new Promise<void>((resolve) => feed?.close(() => resolve()));
});
beforeEach(() => clock.set(T0));

const drain = () => t.ctx.jobs.drain();
const calendars = () => t.ctx.modules.calendars;

/** Connects `host` to Google as a fresh user with `token`, as a client app would; answers the user. */
async function connectGoogle(token: string, host: string): Promise<string> {
  const user = `tm-host${++n}@example.com`;
  google.setUser(user);
  const res = await t.call('GET', `/v1/calendars/google/connect?principal_id=${host}`, {
    token,
    headers: { accept: 'application/json' },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const consent = await authorizeViaRedirect((await res.json()).authorize_url);
  const back = await fetch(consent.location, { redirect: 'manual' });
  expect(back.status).toBeLessThan(400);
  return user;
}

const spec = (key: string, host: string, livemode: boolean): MeetingSpec => ({
  key,
  accountId: account.id,
  principalIds: [host],
  title: livemode ? 'Live meeting' : 'Test meeting',
  attendees: [{ name: 'Ada Lovelace', email: 'ada@example.com' }],
  start: new Date('2026-03-03T14:00:00Z'),
  end: new Date('2026-03-03T14:30:00Z'),
  livemode,
});

const meetingRows = (keys: readonly string[]) =>
  t.ctx.db.selectFrom('calendar_meetings').select('key').where('key', 'in', keys).execute();

describe('write-through in test mode', () => {
  it('writes a live meeting to the host’s Google calendar and a test-mode one nowhere: no row, no job, no request', async () => {
    const host = await fixtures.newHost(t, { token: account.key }, { timezone: 'UTC' });
    const user = await connectGoogle(account.key, host);
    await drain();
    const liveKey = `mtg_live_${++n}`;
    const testKey1 = `mtg_test_${++n}`;
    const testKey2 = `mtg_test_${++n}`;
    const writesBefore = google.eventWrites.length;

    const answers = await t.ctx.db.transaction().execute(async (trx) => {
      const forTest = await calendars().writeMeeting(trx, spec(testKey1, host, false));
      const batch = new WriteBatch();
      const forBatchedTest = await calendars().writeMeeting(trx, spec(testKey2, host, false), batch);
      await batch.run(trx);
      const forLive = await calendars().writeMeeting(trx, spec(liveKey, host, true));
      return { forTest, forBatchedTest, forLive };
    });
    // The live answer names the host (its calendar receives it); the test ones name no one.
    expect(answers.forLive).toEqual(new Set([host]));
    expect(answers.forTest).toEqual(new Set());
    expect(answers.forBatchedTest).toEqual(new Set());
    expect((await meetingRows([liveKey, testKey1, testKey2])).map((r) => r.key)).toEqual([liveKey]);
    const writeJobs = await t.ctx.db
      .selectFrom('jobs')
      .select(sql<string>`payload->>'key'`.as('key'))
      .where('queue', '=', 'calendar.write')
      .execute();
    expect(writeJobs.map((j) => j.key)).toContain(liveKey);
    expect(writeJobs.map((j) => j.key)).not.toContain(testKey1);
    expect(writeJobs.map((j) => j.key)).not.toContain(testKey2);

    await drain();
    const events = google.events(user).filter((e) => e.status !== 'cancelled');
    expect(events.map((e) => e.extendedProperties?.private?.kairosMeeting)).toEqual([liveKey]);
    expect(google.eventWrites.slice(writesBefore).map((w) => w.op)).toEqual(['insert']);
    const sync = await calendars().calendarSync([liveKey, testKey1]);
    expect(sync.get(liveKey)).toEqual([expect.objectContaining({ principal_id: host, status: 'synced' })]);
    expect(sync.has(testKey1)).toBe(false);

    // Moving and removing the test meeting are no-ops too; the live event is untouched.
    const removed = await t.ctx.db.transaction().execute(async (trx) => {
      await calendars().writeMeeting(trx, { ...spec(testKey1, host, false), title: 'Moved test meeting' });
      return calendars().removeMeeting(trx, testKey1);
    });
    expect(removed).toEqual(new Set());
    await drain();
    expect(google.eventWrites.slice(writesBefore).map((w) => w.op)).toEqual(['insert']);
    expect(await meetingRows([testKey1, testKey2])).toEqual([]);
    expect(google.events(user).filter((e) => e.status !== 'cancelled')).toHaveLength(1);
  });
});

describe('the calendars routes with a test key', () => {
  it('reads and syncs the calendars of its own (shared) principal, and may not change them: 403 live_mode_only, nothing changed', async () => {
    const added = await t.call('POST', '/v1/calendars/ics', { token: account.key, body: { url: feedUrl } });
    expect(added.status, await added.clone().text()).toBe(201);
    const { connection } = await added.json();
    const calendarId = connection.calendars[0].id as string;
    const before = await (await t.call('GET', '/v1/calendars', { token: account.key })).json();

    const listed = await t.call('GET', '/v1/calendars', { token: testKey });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual(before);
    expect((await t.call('GET', `/v1/calendars/${calendarId}`, { token: testKey })).status).toBe(200);
    const synced = await t.call('POST', '/v1/calendars/sync', { token: testKey, body: {} });
    expect(synced.status, await synced.clone().text()).toBe(200);

    const refusals = [
      await t.call('POST', '/v1/calendars/ics', { token: testKey, body: { url: feedUrl } }),
      await t.call('POST', '/v1/calendars/caldav/connect', {
        token: testKey,
        body: { server_url: 'https://caldav.example.com/', username: 'u', password: 'p' },
      }),
      await t.call('GET', '/v1/calendars/google/connect', {
        token: testKey,
        headers: { accept: 'application/json' },
      }),
      await t.call('GET', `/v1/calendars/microsoft/connect?principal_id=${account.id}`, {
        token: testKey,
        headers: { accept: 'application/json' },
      }),
      await t.call('PATCH', `/v1/calendars/${calendarId}`, { token: testKey, body: { selected: false } }),
      await t.call('DELETE', '/v1/calendars/connections/ics', { token: testKey }),
      await t.call('DELETE', `/v1/calendars/connections/${connection.id}?principal_id=${account.id}`, {
        token: testKey,
      }),
    ];
    for (const res of refusals) {
      expect(res.status, `${res.url}: ${await res.clone().text()}`).toBe(403);
      expect((await res.json()).code).toBe('live_mode_only');
    }
    const after = await (await t.call('GET', '/v1/calendars', { token: account.key })).json();
    expect(after.connections.map((c: { id: string; status: string }) => [c.id, c.status])).toEqual(
      before.connections.map((c: { id: string; status: string }) => [c.id, c.status]),
    );
    expect(after.calendars).toEqual(before.calendars);
  });

  it('connects, lists, selects, syncs and disconnects the calendars of a host it made, as a live key does', async () => {
    const host = await fixtures.newHost(t, { token: testKey }, { timezone: 'UTC' });
    const added = await t.call('POST', '/v1/calendars/ics', {
      token: testKey,
      body: { url: feedUrl, principal_id: host },
    });
    expect(added.status, await added.clone().text()).toBe(201);
    const calendarId = (await added.json()).connection.calendars[0].id as string;

    const user = await connectGoogle(testKey, host);
    const listed = await (
      await t.call('GET', `/v1/calendars?principal_id=${host}`, { token: testKey })
    ).json();
    expect(listed.connections.map((c: { provider: string }) => c.provider).sort()).toEqual(['google', 'ics']);
    expect(listed.connections.find((c: { provider: string }) => c.provider === 'google').account).toBe(user);

    const patched = await t.call('PATCH', `/v1/calendars/${calendarId}`, {
      token: testKey,
      body: { selected: false },
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect((await patched.json()).calendar.selected).toBe(false);

    const synced = await t.call('POST', '/v1/calendars/sync', {
      token: testKey,
      body: { principal_id: host },
    });
    expect(synced.status, await synced.clone().text()).toBe(200);

    const gone = await t.call('DELETE', `/v1/calendars/connections/ics?principal_id=${host}`, {
      token: testKey,
    });
    expect(gone.status, await gone.clone().text()).toBe(200);
    expect((await gone.json()).connections).toEqual([expect.objectContaining({ status: 'disconnected' })]);
    const left = await (await t.call('GET', `/v1/calendars?principal_id=${host}`, { token: testKey })).json();
    expect(left.connections.map((c: { provider: string }) => c.provider)).toEqual(['google']);
  });

  it('a connect link made with a test key connects the test host’s calendar through its forms', async () => {
    const host = await fixtures.newHost(t, { token: testKey }, { timezone: 'UTC' });
    const made = await t.call('POST', `/v1/hosts/${host}/connect-link`, { token: testKey, body: {} });
    expect(made.status, await made.clone().text()).toBe(201);
    const url = (await made.json()).connect_link.url as string;
    // The link says, signed, that it acts in test mode; a live key's link says live.
    const token = url.split('/').pop()!;
    expect(verifyConnectLink(t.ctx.keys.linkKey, token, clock.nowMs())).toMatchObject({
      hostId: host,
      livemode: false,
    });
    const liveHost = await fixtures.newHost(t, { token: account.key }, { timezone: 'UTC' });
    const liveLink = await t.call('POST', `/v1/hosts/${liveHost}/connect-link`, {
      token: account.key,
      body: {},
    });
    const liveToken = ((await liveLink.json()).connect_link.url as string).split('/').pop()!;
    expect(verifyConnectLink(t.ctx.keys.linkKey, liveToken, clock.nowMs())).toMatchObject({ livemode: true });

    const page = await fetch(url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const ok = await fetch(`${url}/ics`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: new URLSearchParams({ url: feedUrl }).toString(),
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Calendar connected');
    const listed = await (
      await t.call('GET', `/v1/calendars?principal_id=${host}`, { token: testKey })
    ).json();
    expect(listed.connections).toEqual([expect.objectContaining({ provider: 'ics', status: 'connected' })]);
  });

  // Needs the principals module's access rule to know the modes (h-principals): unskip once merged.
  it.skip('acts for a live host as a stranger would: 403 on its calendars, 404 for its connect link', async () => {
    const liveHost = await fixtures.newHost(t, { token: account.key }, { timezone: 'UTC' });
    for (const res of [
      await t.call('GET', `/v1/calendars?principal_id=${liveHost}`, { token: testKey }),
      await t.call('POST', '/v1/calendars/ics', {
        token: testKey,
        body: { url: feedUrl, principal_id: liveHost },
      }),
    ]) {
      expect(res.status).toBe(403);
      expect((await res.json()).code).toBeUndefined();
    }
    const link = await t.call('POST', `/v1/hosts/${liveHost}/connect-link`, { token: testKey, body: {} });
    expect(link.status).toBe(404);
  });
});

describe('connect link tokens', () => {
  const key = Buffer.alloc(32, 7);
  const link = {
    hostId: '0190a4c2-7b1e-7d3a-9f4e-2c8b5d6a1e03',
    accountId: '0190a4c2-7b1e-7d3a-9f4e-2c8b5d6a1e04',
    expMs: Date.parse('2030-01-01T00:00:00Z'),
  };

  it('carry the host’s mode, signed: a live link cannot be turned into a test one', () => {
    const now = Date.parse('2029-01-01T00:00:00Z');
    const live = signConnectLink(key, { ...link, livemode: true });
    const test = signConnectLink(key, { ...link, livemode: false });
    expect(live).toHaveLength(71);
    expect(test).toHaveLength(71);
    expect(verifyConnectLink(key, live, now)).toEqual({ ...link, livemode: true });
    expect(verifyConnectLink(key, test, now)).toEqual({ ...link, livemode: false });

    const raw = Buffer.from(live, 'base64url');
    raw[0] = 2;
    expect(verifyConnectLink(key, raw.toString('base64url'), now)).toBeNull();
  });
});
