/**
 * Calendar write-through over HTTP on the real runtime and database (docs/design.md#calendar-write-through):
 * a booking appears in each host's own calendar (Google and Microsoft emulators, a
 * real Radicale), moves with a reschedule and leaves with a cancellation; writes are retried and
 * idempotent; a failing calendar never touches the booking; Kairos's own events never count twice.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type GoogleEmulator, startGoogleEmulator } from '../../../test/emulators/google.js';
import { authorizeViaRedirect } from '../../../test/emulators/http.js';
import { type MicrosoftEmulator, startMicrosoftEmulator } from '../../../test/emulators/microsoft.js';
import { type RadicaleServer, radicaleAvailable, startRadicale } from '../../../test/emulators/radicale.js';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { vcalendar } from '../../../test/helpers/ics.js';
import { sql } from 'kysely';
import { WriteBatch } from '../../jobs/runner.js';
import { FakeClock } from '../../platform/clock.js';
import type { MeetingSpec } from './api.js';
import { MeetingWriter, WRITE_QUEUE } from './meetings.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { emulatorEnv } from '../../../test/helpers/emulator-env.js';

// Monday 2 March 2026, 06:00 UTC; hosts work Mon–Fri 09:00–17:00 in their zone (UTC here).
const T0 = '2026-03-02T06:00:00.000Z';
const clock = new FakeClock(T0);
const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };

let google: GoogleEmulator;
let microsoft: MicrosoftEmulator;
const HAS_RADICALE = radicaleAvailable();
let radicale: RadicaleServer;
let t: TestApp;
let account: { id: string; key: string };
let userCount = 0;

beforeAll(async () => {
  google = await startGoogleEmulator({ now: () => clock.nowMs() });
  microsoft = await startMicrosoftEmulator({ now: () => clock.nowMs() });
  if (HAS_RADICALE) radicale = await startRadicale();
  t = await startTestApp({
    clock,
    env: {
      KAIROS_ALLOW_PRIVATE_NETWORK: 'true',
      ...emulatorEnv(google, microsoft),
    },
  });
  account = await t.account();
}, 60_000);
afterAll(async () => {
  await t?.close();
  await google?.close();
  await microsoft?.close();
  await radicale?.stop();
});
beforeEach(() => {
  clock.set(T0);
});

const newHost = () =>
  fixtures.newHost(
    t,
    { token: account.key },
    { email: `host-${++userCount}@kairos.example`, timezone: 'UTC' },
  );

/** Connects `host` to the provider as `user` through the API, as a client app would. */
async function connectOAuth(provider: 'google' | 'microsoft', host: string, user: string): Promise<void> {
  (provider === 'google' ? google : microsoft).setUser(user);
  const q = new URLSearchParams({ principal_id: host });
  const res = await t.call('GET', `/v1/calendars/${provider}/connect?${q}`, {
    token: account.key,
    headers: { accept: 'application/json' },
  });
  expect(res.status).toBe(200);
  const consent = await authorizeViaRedirect((await res.json()).authorize_url);
  const back = await fetch(consent.location, { redirect: 'manual' });
  expect(back.status).toBeLessThan(400);
}

/** A new host connected to the provider as a fresh user (its own primary calendar); returns both. */
async function oauthHost(provider: 'google' | 'microsoft'): Promise<{ host: string; user: string }> {
  const host = await newHost();
  const user = `host${++userCount}@example.com`;
  await connectOAuth(provider, host, user);
  return { host, user };
}

async function caldavHost(): Promise<{ host: string; calendarUrl: string }> {
  const host = await newHost();
  const calendarUrl = await radicale.makeCalendar(`w${++userCount}`, 'Work');
  const res = await t.call('POST', '/v1/calendars/caldav/connect', {
    token: account.key,
    body: {
      server_url: calendarUrl,
      username: radicale.username,
      password: radicale.password,
      principal_id: host,
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return { host, calendarUrl };
}

const book = (host: string, start: string): Promise<Json> =>
  fixtures.book(
    t,
    { token: account.key, principal_id: host },
    { ...customer, start_time: start, notes: 'About the engine' },
  );

async function get(id: string): Promise<Json> {
  const res = await t.call('GET', `/v1/bookings/${id}`, { token: account.key });
  expect(res.status).toBe(200);
  return (await res.json()).booking;
}

async function reschedule(id: string, start: string, end: string) {
  const res = await t.call('PATCH', `/v1/bookings/${id}`, {
    token: account.key,
    body: { start_time: start, end_time: end },
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function cancel(id: string) {
  const res = await t.call('DELETE', `/v1/bookings/${id}`, { token: account.key });
  expect(res.status).toBe(200);
}

const drain = () => t.ctx.jobs.drain();
const live = <T extends { status?: string }>(xs: T[]) => xs.filter((e) => e.status !== 'cancelled');

describe('Google', () => {
  it('a booking is inserted into the host’s primary calendar with the customer as guest and no Google mail, moved by a reschedule and deleted by a cancel', async () => {
    const { host, user } = await oauthHost('google');
    const b = await book(host, '2026-03-03T10:00:00Z');
    expect((await get(b.id)).calendar_sync).toEqual([
      expect.objectContaining({ principal_id: host, status: 'pending' }),
    ]);

    await drain();
    let events = live(google.events(user));
    expect(events).toHaveLength(1);
    const ev = events[0]!;
    expect(ev.summary).toBe('Booking with Ada Lovelace');
    expect(ev.attendees).toEqual([expect.objectContaining({ email: 'ada@example.com' })]);
    expect(ev.extendedProperties?.private?.kairosMeeting).toBe(b.id);
    expect(new Date(ev.start).toISOString()).toBe('2026-03-03T10:00:00.000Z');
    expect((await get(b.id)).calendar_sync).toEqual([
      expect.objectContaining({ principal_id: host, provider: 'google', status: 'synced', error: null }),
    ]);
    expect(google.sendUpdates.every((v: string | null) => v === 'none')).toBe(true);
    // The host's mail carries no invite: their calendar already has the event (no second copy).
    const mails = await t.ctx.modules.mail.listFor(b.id);
    expect(mails.find((m) => m.to === 'ada@example.com')?.ics_method).toBe('REQUEST');
    expect(mails.filter((m) => m.to !== 'ada@example.com')).toEqual([
      expect.objectContaining({ kind: 'booking.confirmation', ics_method: null }),
    ]);

    await reschedule(b.id, '2026-03-03T10:30:00Z', '2026-03-03T11:00:00Z');
    await drain();
    events = live(google.events(user));
    expect(events).toHaveLength(1);
    expect(events[0]!.id).toBe(ev.id);
    expect(new Date(events[0]!.start).toISOString()).toBe('2026-03-03T10:30:00.000Z');

    await cancel(b.id);
    await drain();
    expect(live(google.events(user))).toHaveLength(0);
    expect((await get(b.id)).calendar_sync).toEqual([expect.objectContaining({ status: 'removed' })]);
  });

  it('the written event is not busy time twice: a reschedule overlapping the booking’s own old time is accepted and a fresh read counts no busy block', async () => {
    const { host } = await oauthHost('google');
    const b = await book(host, '2026-03-04T10:00:00Z');
    await drain();
    const sync = await t.call('POST', '/v1/calendars/sync', {
      token: account.key,
      body: { principal_id: host },
    });
    expect(sync.status).toBe(200);
    expect((await sync.json()).events_synced).toBe(0);
    // 10:30–11:30 overlaps the booking's own event at 10:00–11:00, which must not refuse it.
    await reschedule(b.id, '2026-03-04T10:30:00Z', '2026-03-04T11:30:00Z');
    await drain();
    const again = await t.call('POST', '/v1/calendars/sync', {
      token: account.key,
      body: { principal_id: host },
    });
    expect((await again.json()).events_synced).toBe(0);
  });

  it('a retried insert whose first answer was lost leaves one event', async () => {
    const { host, user } = await oauthHost('google');
    google.dropNextResponse(1);
    const b = await book(host, '2026-03-05T10:00:00Z');
    await drain();
    const pending = (await get(b.id)).calendar_sync[0];
    expect(pending.status).toBe('pending');
    expect(pending.error).toMatch(/Backend Error|503|unavailable/i);
    expect(live(google.events(user))).toHaveLength(1); // the write took effect, its answer was lost

    clock.advance(60_000);
    await drain();
    expect(live(google.events(user))).toHaveLength(1);
    expect((await get(b.id)).calendar_sync[0].status).toBe('synced');
  });

  it('an expired access token is refreshed once on the 401 and the write goes through', async () => {
    const { host, user } = await oauthHost('google');
    google.expireAccessTokens();
    await book(host, '2026-03-05T12:00:00Z');
    await drain();
    expect(live(google.events(user))).toHaveLength(1);
  });

  it('a 429 with Retry-After is honoured before the next attempt', async () => {
    const { host, user } = await oauthHost('google');
    await drain();
    const b = await book(host, '2026-03-05T14:00:00Z');
    google.failNext(1, 429, 120);
    await drain();
    expect(live(google.events(user))).toHaveLength(0);
    expect((await get(b.id)).calendar_sync[0].status).toBe('pending');
    clock.advance(60_000);
    await drain();
    expect(live(google.events(user))).toHaveLength(0); // 60 s < Retry-After 120 s
    clock.advance(61_000);
    await drain();
    expect(live(google.events(user))).toHaveLength(1);
  });

  it('a revoked grant marks the write failed with its reason and keeps the booking; reconnecting writes it', async () => {
    const { host, user } = await oauthHost('google');
    await drain();
    const b = await book(host, '2026-03-06T10:00:00Z');
    google.revokeRefreshTokens();
    google.expireAccessTokens();
    await drain();
    const after = await get(b.id);
    expect(after.status).toBe('confirmed');
    expect(after.calendar_sync).toEqual([
      expect.objectContaining({
        status: 'failed',
        error: expect.stringMatching(/connection_lost: invalid_grant/),
      }),
    ]);
    expect(live(google.events(user))).toHaveLength(0);

    // Reconnecting the calendar tries the failed write again.
    await connectOAuth('google', host, user);
    await drain();
    expect(live(google.events(user))).toHaveLength(1);
    expect((await get(b.id)).calendar_sync).toEqual([
      expect.objectContaining({ status: 'synced', error: null }),
    ]);
  });

  it('PATCH /v1/calendars/{id} {"destination": true} sends later bookings to that calendar', async () => {
    const { host, user } = await oauthHost('google');
    google.addCalendar('team@group.example.com', { summary: 'Team', owner: user });
    // The calendar list is read at connect time: connect again to see the new calendar.
    await connectOAuth('google', host, user);
    const cals: Json[] = (
      await (await t.call('GET', `/v1/calendars?principal_id=${host}`, { token: account.key })).json()
    ).calendars;
    const team = cals.find((c) => c.name === 'Team');
    expect(team).toBeDefined();
    const res = await t.call('PATCH', `/v1/calendars/${team.id}`, {
      token: account.key,
      body: { destination: true },
    });
    expect(res.status).toBe(200);
    expect((await res.json()).calendar.destination).toBe(true);

    await book(host, '2026-03-09T10:00:00Z');
    await drain();
    expect(live(google.events('team@group.example.com'))).toHaveLength(1);
    expect(live(google.events(user))).toHaveLength(0);
  });
});

describe('Microsoft', () => {
  it('a booking is created in the default calendar without attendees (no Graph invitations), updated and deleted', async () => {
    const { host, user } = await oauthHost('microsoft');
    const b = await book(host, '2026-03-03T13:00:00Z');
    await drain();
    let events = microsoft.events(user);
    expect(events).toHaveLength(1);
    expect(events[0]!.subject).toBe('Booking with Ada Lovelace');
    expect(microsoft.requests.eventsWithAttendees).toBe(0);
    expect((await get(b.id)).calendar_sync).toEqual([
      expect.objectContaining({ provider: 'microsoft', status: 'synced' }),
    ]);

    await reschedule(b.id, '2026-03-03T14:00:00Z', '2026-03-03T15:00:00Z');
    await drain();
    events = microsoft.events(user);
    expect(events).toHaveLength(1);
    expect(new Date(events[0]!.start).toISOString()).toBe('2026-03-03T14:00:00.000Z');

    const sync = await t.call('POST', '/v1/calendars/sync', {
      token: account.key,
      body: { principal_id: host },
    });
    expect((await sync.json()).events_synced).toBe(0);

    await cancel(b.id);
    await drain();
    expect(microsoft.events(user)).toHaveLength(0);
  });

  it('a retried create whose first answer was lost leaves one event (transactionId)', async () => {
    const { host, user } = await oauthHost('microsoft');
    microsoft.dropNextResponse(1);
    const b = await book(host, '2026-03-05T13:00:00Z');
    await drain();
    expect((await get(b.id)).calendar_sync[0].status).toBe('pending');
    clock.advance(60_000);
    await drain();
    expect(microsoft.events(user)).toHaveLength(1);
    expect((await get(b.id)).calendar_sync[0].status).toBe('synced');
  });
});

describe.skipIf(!HAS_RADICALE)('CalDAV (Radicale)', () => {
  async function objects(calendarUrl: string): Promise<string[]> {
    const res = await fetch(calendarUrl, {
      method: 'PROPFIND',
      headers: {
        depth: '1',
        authorization: `Basic ${Buffer.from(`${radicale.username}:${radicale.password}`).toString('base64')}`,
      },
    });
    const text = await res.text();
    return [...text.matchAll(/<[^>]*href>([^<]+\.ics)<\/[^>]*href>/g)].map((m) => m[1]!);
  }

  it('a booking is PUT as a VEVENT, moved with If-Match, deleted on cancel, and never counted as busy', async () => {
    const { host, calendarUrl } = await caldavHost();
    const b = await book(host, '2026-03-03T15:00:00Z');
    await drain();
    const [href] = await objects(calendarUrl);
    expect(href).toMatch(/kairos[0-9a-f]{32}\.ics$/);
    const auth = `Basic ${Buffer.from(`${radicale.username}:${radicale.password}`).toString('base64')}`;
    let ics = await (await fetch(new URL(href!, calendarUrl), { headers: { authorization: auth } })).text();
    expect(ics).toContain('DTSTART:20260303T150000Z');
    expect(ics).toContain(`X-KAIROS-MEETING:${b.id}`);
    expect((await get(b.id)).calendar_sync[0]).toMatchObject({ provider: 'caldav', status: 'synced' });

    const sync = await t.call('POST', '/v1/calendars/sync', {
      token: account.key,
      body: { principal_id: host },
    });
    expect((await sync.json()).events_synced).toBe(0);

    await reschedule(b.id, '2026-03-03T15:30:00Z', '2026-03-03T16:30:00Z');
    await drain();
    ics = await (await fetch(new URL(href!, calendarUrl), { headers: { authorization: auth } })).text();
    expect(ics).toContain('DTSTART:20260303T153000Z');
    expect(ics).toMatch(/SEQUENCE:1/);

    await cancel(b.id);
    await drain();
    expect(await objects(calendarUrl)).toHaveLength(0);
    expect((await get(b.id)).calendar_sync[0].status).toBe('removed');
  });
});

describe('every host, every change', () => {
  it.skipIf(!HAS_RADICALE)(
    'a collective booking is written into each host’s own calendar, Google and CalDAV alike',
    async () => {
      const g = await oauthHost('google');
      const c = await caldavHost();
      const link = await t.call('POST', '/v1/booking-links', {
        token: account.key,
        body: { title: 'Panel', slug: 'panel', host_ids: [g.host, c.host], assignment: 'collective' },
      });
      expect(link.status, await link.clone().text()).toBe(201);
      const res = await t.call('POST', '/v1/bookings', {
        token: account.key,
        body: {
          ...customer,
          booking_link_id: (await link.json()).booking_link.id,
          start_time: '2026-03-11T10:00:00Z',
        },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      const b = (await res.json()).booking;
      await drain();
      const sync = (await get(b.id)).calendar_sync;
      expect(sync).toHaveLength(2);
      expect(sync).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ principal_id: g.host, provider: 'google', status: 'synced' }),
          expect.objectContaining({ principal_id: c.host, provider: 'caldav', status: 'synced' }),
        ]),
      );
      expect(live(google.events(g.user))).toEqual([
        expect.objectContaining({ summary: 'Panel with Ada Lovelace' }),
      ]);
    },
  );

  it('a booking cancelled before its write ran leaves nothing behind, whichever of the two jobs runs first', async () => {
    const { host, user } = await oauthHost('google');
    await drain();
    const b = await book(host, '2026-03-12T10:00:00Z');
    await reschedule(b.id, '2026-03-12T11:00:00Z', '2026-03-12T12:00:00Z');
    await cancel(b.id);
    await drain(); // three write jobs for one meeting, run at once: one writer, the others wait for it
    expect(live(google.events(user))).toHaveLength(0);
    const meeting = await t.ctx.db
      .selectFrom('calendar_meetings')
      .select(['version', 'done_version', 'writer_until'])
      .where('key', '=', b.id)
      .executeTakeFirstOrThrow();
    expect(meeting).toEqual({ version: 3, done_version: 3, writer_until: null });
  });
});

describe('the meeting in the booking’s own statement', () => {
  /** A writer whose memory of connections is `known` (busy-cache.ts gives the real one's). */
  const writerKnowing = (known: Set<string> | undefined) =>
    new MeetingWriter({
      db: t.ctx.db,
      clock,
      gateway: {
        writeEvent: () => Promise.reject(new Error('not called: the app’s own job writes')),
        deleteEvent: () => Promise.reject(new Error('not called')),
      },
      timeZoneOf: async () => 'UTC',
      log: { error: () => {} },
      writableKnown: () => known,
    });
  const spec = (key: string, host: string): MeetingSpec => ({
    key,
    livemode: true,
    accountId: account.id,
    principalIds: [host],
    title: 'Remembered wrongly',
    attendees: [{ name: null, email: 'ada@example.com' }],
    start: new Date('2026-03-12T10:00:00Z'),
    end: new Date('2026-03-12T10:30:00Z'),
  });

  it('is stored, queued and written when the host’s connection is newer than this process’s memory', async () => {
    const { host, user } = await oauthHost('google');
    const key = `mtg_${++userCount}`;
    const written = await t.ctx.db.transaction().execute(async (trx) => {
      const batch = new WriteBatch();
      const answer = await writerKnowing(new Set()).writeMeeting(trx, spec(key, host), batch);
      // Nothing is stored before the batch runs: the meeting is a part of the batch's statement.
      expect(
        await trx.selectFrom('calendar_meetings').select('key').where('key', '=', key).execute(),
      ).toEqual([]);
      await batch.run(trx);
      return answer;
    });
    expect(written).toEqual(new Set()); // the answer is memory's; the write is the store's
    await drain();
    expect(live(google.events(user)).map((e) => e.extendedProperties?.private?.kairosMeeting)).toEqual([key]);
  });

  it('is neither stored nor queued when memory is right that no host has a writable calendar', async () => {
    const host = await newHost();
    const key = `mtg_${++userCount}`;
    await t.ctx.db.transaction().execute(async (trx) => {
      const batch = new WriteBatch();
      expect(await writerKnowing(new Set()).writeMeeting(trx, spec(key, host), batch)).toEqual(new Set());
      await batch.run(trx);
    });
    expect(
      await t.ctx.db.selectFrom('calendar_meetings').select('key').where('key', '=', key).execute(),
    ).toEqual([]);
    const jobs = await t.ctx.db
      .selectFrom('jobs')
      .select('id')
      .where('queue', '=', WRITE_QUEUE)
      .where(sql<boolean>`payload->>'key' = ${key}`)
      .execute();
    expect(jobs).toEqual([]);
  });
});

describe('hosts without a writable calendar', () => {
  it('cost nothing: no meeting row, no job, an empty calendar_sync', async () => {
    const host = await newHost();
    const b = await book(host, '2026-03-10T10:00:00Z');
    const meetings = await t.ctx.db
      .selectFrom('calendar_meetings')
      .select('key')
      .where('key', '=', b.id)
      .execute();
    expect(meetings).toHaveLength(0);
    expect((await get(b.id)).calendar_sync).toEqual([]);
  });

  it('an ICS feed cannot be the destination: 422 calendar_read_only', async () => {
    const feed = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/calendar' }).end(vcalendar('\r\n'));
    });
    await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
    try {
      const host = await newHost();
      const url = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/team.ics`;
      const conn = await t.call('POST', '/v1/calendars/ics', {
        token: account.key,
        body: { url, principal_id: host },
      });
      expect(conn.status, await conn.clone().text()).toBe(201);
      const cal = (await conn.json()).connection.calendars[0];
      const res = await t.call('PATCH', `/v1/calendars/${cal.id}`, {
        token: account.key,
        body: { destination: true },
      });
      expect(res.status).toBe(422);
      expect((await res.json()).code).toBe('calendar_read_only');
      // Nothing is written for a host whose only calendar is a feed.
      const b = await book(host, '2026-03-10T12:00:00Z');
      await drain();
      expect((await get(b.id)).calendar_sync).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => feed.close(() => resolve()));
    }
  });
});

describe('accepted proposals', () => {
  it('an accepted proposal between a Google host and a Microsoft host is one meeting in both calendars, mailed without an invite to them; cancelling it removes both events', async () => {
    const requester = await oauthHost('google');
    const participant = await oauthHost('microsoft');
    // The participant lets the requester propose (the account acts for both hosts).
    const granted = await t.call('POST', '/v1/consents', {
      token: account.key,
      body: { grantee_id: requester.host, scopes: ['booking:propose'], principal_id: participant.host },
    });
    expect(granted.status).toBe(201);
    const created = await t.call('POST', '/v1/proposals', {
      token: account.key,
      body: {
        mode: 'standard',
        principal_id: requester.host,
        participant_ids: [participant.host],
        title: 'Roadmap review',
        slots: [{ start: '2026-03-04T13:00:00Z', end: '2026-03-04T14:00:00Z' }],
      },
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { proposal } = await created.json();
    const accepted = await t.call('POST', `/v1/proposals/${proposal.id}/response`, {
      token: account.key,
      body: { action: 'accept', principal_id: participant.host },
    });
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    expect((await accepted.json()).proposal.status).toBe('accepted');

    await drain();
    const g = live(google.events(requester.user));
    const m = microsoft.events(participant.user);
    expect(g).toHaveLength(1);
    expect(m).toHaveLength(1);
    expect(g[0]!.summary).toBe('Roadmap review');
    expect(g[0]!.extendedProperties?.private?.kairosMeeting).toBe(proposal.id);
    expect(new Date(g[0]!.start).toISOString()).toBe('2026-03-04T13:00:00.000Z');
    expect(m[0]!.subject).toBe('Roadmap review');
    const mails = await t.ctx.modules.mail.listFor(proposal.id);
    const booked = mails.filter((x) => x.kind === 'proposal.accepted');
    expect(booked).toHaveLength(2);
    expect(booked.every((x) => x.ics_method === null)).toBe(true);

    const cancelled = await t.call('POST', `/v1/proposals/${proposal.id}/cancel`, {
      token: account.key,
      body: { reason: 'Moved' },
    });
    expect(cancelled.status, await cancelled.clone().text()).toBe(200);
    await drain();
    expect(live(google.events(requester.user))).toHaveLength(0);
    expect(microsoft.events(participant.user)).toHaveLength(0);
  });
});
