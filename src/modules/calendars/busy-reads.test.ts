/**
 * Busy reads are served from memory (no database round trip per availability request) and every
 * process drops its copy when a write changes what a read would return: cache refreshes, selection,
 * connecting and disconnecting. Two apps on one database stand for two processes. Availability answers
 * computed from those reads are remembered too, and change as soon as their inputs do.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { notificationsHeard } from '../../../test/helpers/db.js';
import { vcalendar } from '../../../test/helpers/ics.js';
import { FakeClock } from '../../platform/clock.js';
import * as fixtures from '../../../test/helpers/fixtures.js';
import { waitUntil } from '../../../test/helpers/promises.js';
import type { CalendarService } from './service.js';

/** The calendars service behind the module's API (its busy source and provider gateway are internal). */
const calendarsOf = (app: { ctx: { modules: { calendars: unknown } } }) =>
  app.ctx.modules.calendars as CalendarService;

const H = 3_600_000;
const D = 24 * H;
const clock = new FakeClock('2026-06-01T00:00:00.000Z'); // a Monday
const DAY0 = clock.nowMs() + D; // Tuesday 2 June 2026, 00:00 UTC
const WINDOW = { start: DAY0, end: DAY0 + 7 * D };
const iso = (ms: number) => new Date(ms).toISOString().replace(/[-:]|\.\d{3}/g, '');

/** Busy 09:00-10:00 UTC on each day offset in `days`. */
function feedOf(days: number[]): string {
  return vcalendar(
    '\r\n',
    ...days.map((d) => [
      'BEGIN:VEVENT',
      `UID:e${d}@test`,
      'DTSTAMP:20260101T000000Z',
      `DTSTART:${iso(DAY0 + d * D + 9 * H)}`,
      `DTEND:${iso(DAY0 + d * D + 10 * H)}`,
      'END:VEVENT',
    ]),
  );
}
const busyOn = (days: number[]) =>
  days.map((d) => ({ start: DAY0 + d * D + 9 * H, end: DAY0 + d * D + 10 * H }));

let feed: Server;
let feedBody = feedOf([0]);
let feedUrl: string;
let a: TestApp;
let b: TestApp;
let account: { id: string; key: string };

beforeAll(async () => {
  feed = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/calendar' }).end(feedBody);
  });
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/team.ics`;
  const env = { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' };
  a = await startTestApp({ env, clock });
  b = await startTestApp({ env, clock, database: a.database, masterKey: a.masterKey });
  account = await a.account();
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  await new Promise<void>((resolve) => feed.close(() => resolve()));
});

const newHost = () => fixtures.newHost(a, { accountId: account.id });

async function connectFeed(host: string): Promise<void> {
  const res = await a.call('POST', '/v1/calendars/ics', {
    token: account.key,
    body: { url: feedUrl, principal_id: host },
  });
  if (res.status !== 201) throw new Error(await res.text());
}

/** A new host whose calendar is the feed, busy 09-10 UTC on each of `days` (offsets from DAY0). */
async function hostWithFeed(days: number[]): Promise<string> {
  const host = await newHost();
  feedBody = feedOf(days);
  await connectFeed(host);
  return host;
}

const readB = (host: string) => calendarsOf(b).busySource.busy(host, WINDOW);

/** Process B's count of slots answers remembered or computed (its /metrics). */
async function slotAnswers(outcome: 'remembered' | 'computed'): Promise<number> {
  const text = await (await fetch(`${b.url}/metrics`)).text();
  const prefix = `kairos_availability_answers_total{kind="slots",outcome="${outcome}"}`;
  return Number(
    text
      .split('\n')
      .find((l) => l.startsWith(prefix))
      ?.split(' ')
      .at(-1) ?? 0,
  );
}

/**
 * Polls process B until its read satisfies `ok` (NOTIFY arrives asynchronously), for at most 5 s; the
 * last read either way, for the caller's assertion to show.
 */
async function untilB(host: string, ok: (answer: Awaited<ReturnType<typeof readB>>) => boolean) {
  // Typed by its reads, not narrowed to its null start (they happen in a callback).
  let answer = null as Awaited<ReturnType<typeof readB>>;
  const seen = async () => {
    answer = await readB(host);
    return ok(answer);
  };
  await waitUntil('process B to read the change', seen, 5000, 20).catch(() => undefined);
  return answer;
}

describe('busy reads in memory', () => {
  it('are served from memory: a change made without announcing it is not seen', async () => {
    const host = await hostWithFeed([0]);
    expect((await readB(host))?.intervals).toEqual(busyOn([0]));

    // Rewrite the cached busy time with triggers off (replica mode): no NOTIFY, so B keeps its copy.
    await a.ctx.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL session_replication_role = replica`.execute(trx);
      await sql`UPDATE calendar_busy_cache SET busy = jsonb_set(busy, '{intervals}', '[]')
        WHERE connection_id IN (SELECT id FROM calendar_connections WHERE principal_id = ${host})`.execute(
        trx,
      );
    });
    // B has heard everything committed so far, and still serves its copy.
    await notificationsHeard(b.ctx.notifier, a.ctx.db);
    expect((await readB(host))?.intervals).toEqual(busyOn([0]));
  });

  it('a refresh in one process is seen by the other at once', async () => {
    const host = await hostWithFeed([0]);
    expect((await readB(host))?.intervals).toEqual(busyOn([0]));

    feedBody = feedOf([1, 2]);
    const sync = await a.call('POST', '/v1/calendars/sync', {
      token: account.key,
      body: { principal_id: host },
    });
    expect(sync.status).toBe(200);
    const seen = await untilB(host, (x) => x?.intervals.length === 2);
    expect(seen?.intervals).toEqual(busyOn([1, 2]));
  });

  it('selection, connecting and disconnecting in one process are seen by the other', async () => {
    const host = await newHost();
    expect(await readB(host)).toBeNull(); // no calendar yet: remembered as such
    feedBody = feedOf([3]);
    await connectFeed(host);
    expect((await untilB(host, (x) => x !== null))?.intervals).toEqual(busyOn([3]));

    const list = await (
      await a.call('GET', `/v1/calendars?principal_id=${host}`, { token: account.key })
    ).json();
    const calendarId = list.calendars[0].id as string;
    const off = await a.call('PATCH', `/v1/calendars/${calendarId}`, {
      token: account.key,
      body: { selected: false },
    });
    expect(off.status).toBe(200);
    expect((await untilB(host, (x) => x?.intervals.length === 0))?.intervals).toEqual([]);

    const del = await a.call('DELETE', `/v1/calendars/connections/ics?principal_id=${host}`, {
      token: account.key,
    });
    expect(del.status).toBe(200);
    expect(await untilB(host, (x) => x === null)).toBeNull();
  });
});

describe('remembered availability answers', () => {
  it('a repeated question gets the same answer until busy time, the schedule or the clock changes it', async () => {
    const host = await hostWithFeed([0]);
    const query = new URLSearchParams({
      business_id: host,
      duration_minutes: '60',
      from: new Date(DAY0).toISOString(),
      to: new Date(DAY0 + 2 * D).toISOString(),
    });
    const ask = async () => {
      const res = await b.call('GET', `/v1/availability/slots?${query}`, { token: account.key });
      expect(res.status).toBe(200);
      return res.text();
    };
    /** Asks B until the answer differs from `before` (changes made in A reach B through NOTIFY). */
    const askUntilChanged = async (before: string) => {
      let text = before;
      const changed = async () => {
        text = await ask();
        return text !== before;
      };
      await waitUntil('a changed answer from B', changed, 5000, 20).catch(() => undefined);
      return text;
    };
    const hours = (text: string) =>
      (JSON.parse(text) as { slots: { start: string }[] }).slots.map((s) => s.start.slice(5, 13));
    /** 'MM-DDTHH' of the starts of 60-minute slots every 15 minutes from `fromHour` until 17:00. */
    const day = (date: string, fromHour: number) =>
      Array.from(
        { length: (16 - fromHour) * 4 + 1 },
        (_, i) => `${date}T${String(fromHour + Math.floor(i / 4)).padStart(2, '0')}`,
      );
    const first = await ask();
    // Default schedule Mon-Fri 09-17 UTC; busy 09-10 on Tuesday.
    expect(hours(first)).toEqual([...day('06-02', 10), ...day('06-03', 9)]);
    expect(await ask()).toBe(first);

    // Busy time moves to Wednesday (synced in A).
    feedBody = feedOf([1]);
    // principal_id in the query string, as GET and DELETE take it (the body works too).
    const synced = await a.call('POST', `/v1/calendars/sync?principal_id=${host}`, { token: account.key });
    expect(synced.status, await synced.clone().text()).toBe(200);
    const mismatch = await a.call('POST', `/v1/calendars/sync?principal_id=${host}`, {
      token: account.key,
      body: { principal_id: account.id },
    });
    expect(mismatch.status).toBe(400);
    const second = await askUntilChanged(first);
    expect(hours(second)).toContain('06-02T09');
    expect(hours(second)).not.toContain('06-03T09');

    // The schedule changes (in A): Tuesday 12:00-13:00 only.
    const put = await a.call('PUT', `/v1/principals/${host}/schedule`, {
      token: account.key,
      body: { weekly: [{ day: 'tue', start: '12:00', end: '13:00' }] },
    });
    expect(put.status).toBe(200);
    const third = await askUntilChanged(second);
    expect(hours(third)).toEqual(['06-02T12']);

    // Time passes the slot's start (by less than any cache lifetime): nothing is bookable any more.
    clock.set(DAY0 + 12 * H - 20_000);
    try {
      await ask(); // the busy cache is old by now: this read refreshes it
      await notificationsHeard(b.ctx.notifier, b.ctx.db); // and its NOTIFY comes back
      expect(hours(await ask())).toEqual(['06-02T12']);
      clock.advance(30_000);
      expect(hours(await ask())).toEqual([]);
    } finally {
      clock.set(DAY0 - D);
    }
  });

  it('a question asked from "now" is remembered while the clock stays within one slot step', async () => {
    const host = await hostWithFeed([0]);
    const ask = async () => {
      const now = clock.nowMs();
      const query = new URLSearchParams({
        business_id: host,
        duration_minutes: '30',
        from: new Date(now).toISOString(),
        to: new Date(now + D).toISOString(),
      });
      const res = await b.call('GET', `/v1/availability/slots?${query}`, { token: account.key });
      expect(res.status).toBe(200);
      return res.text();
    };
    const firstStart = (text: string) => (JSON.parse(text) as { slots: { start: string }[] }).slots[0]?.start;

    clock.set(DAY0 + 10 * H + 14 * 60_000); // Tuesday 10:14
    try {
      await ask(); // the busy cache is old at this time: this read refreshes it
      await notificationsHeard(b.ctx.notifier, b.ctx.db); // and its NOTIFY comes back
      const first = await ask();
      expect(firstStart(first)).toBe(new Date(DAY0 + 10.25 * H).toISOString()); // 10:15
      expect(await ask()).toBe(first); // asked again: now it is kept
      const before = await slotAnswers('remembered');
      clock.advance(20_000); // 10:14:20: another window, the same question
      expect(await ask()).toBe(first);
      expect(await slotAnswers('remembered')).toBe(before + 1);
      clock.advance(60_000); // 10:15:20: the 10:15 slot has begun
      expect(firstStart(await ask())).toBe(new Date(DAY0 + 10.5 * H).toISOString());
    } finally {
      clock.set(DAY0 - D);
    }
  });

  it('a remembered answer survives a refresh that brings the same busy time', async () => {
    const host = await hostWithFeed([0]);
    const query = new URLSearchParams({
      business_id: host,
      duration_minutes: '30',
      from: new Date(DAY0).toISOString(),
      to: new Date(DAY0 + D).toISOString(),
    });
    const ask = async () =>
      (await b.call('GET', `/v1/availability/slots?${query}`, { token: account.key })).text();
    const first = await ask();
    expect(await ask()).toBe(first); // asked again: now it is kept
    // Both processes refresh from the unchanged feed; B re-reads its rows after the NOTIFY.
    for (const app of [a, b]) {
      const sync = await app.call('POST', '/v1/calendars/sync', {
        token: account.key,
        body: { principal_id: host },
      });
      expect(sync.status).toBe(200);
    }
    await notificationsHeard(b.ctx.notifier, a.ctx.db);
    const computed = await slotAnswers('computed');
    expect(await ask()).toBe(first);
    expect(await slotAnswers('computed')).toBe(computed);
  });
});
