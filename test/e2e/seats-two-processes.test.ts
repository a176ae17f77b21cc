/**
 * Seats and series across two `kairos serve` processes on one database (docs/design.md#series-and-seats,
 * "What proves it"): the races decided by the store, not by either process's memory.
 * - 20 seats raced into one slot of a capacity-3 link: 3 × 201, 17 × 409 `slot_full`, one session
 *   holding the host once;
 * - a seat's cancel racing another customer's seat into the same slot, made to overlap by holding the
 *   session row until both wait on it (each order in turn), and every seat of a full slot given back
 *   while four customers book, sent at once: the count equals the live seats, and the session's
 *   occupancy exists exactly while seats remain;
 * - a weekly series of 6 racing a single booking into its 4th occurrence: exactly one wins, and the
 *   loser wrote nothing (held rounds decide the order on the host's lock, free rounds race as sent).
 * The spawned servers run on the real clock: times are picked on weekdays a few days ahead, inside
 * the default Mon–Fri 09–17 of a UTC host.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Tx } from '../../src/db/store.js';
import { lockForChange } from '../../src/modules/principals/repo.js';
import type { Json, TestApp } from '../helpers/app.js';
import { lockWaiters } from '../helpers/bookings.js';
import * as fixtures from '../helpers/fixtures.js';
import { type ServerProcess, callServer, useTwoServers } from '../helpers/process.js';
import { waitUntil } from '../helpers/promises.js';
import { nextWeekdayAt } from '../helpers/slots.js';

let t: TestApp;
let a: ServerProcess;
let b: ServerProcess;
useTwoServers((s) => ({ t, a, b } = s));

const HOUR = 3_600_000;
const WEEK = 7 * 24 * HOUR;

const newHost = (key: string, name: string) =>
  fixtures.newHost(fixtures.serverAt(a.url), { token: key }, { display_name: name, timezone: 'UTC' });

interface Answer {
  status: number;
  type: string;
  body: Json;
}

async function answerOf(res: Response | Promise<Response>): Promise<Answer> {
  const r = await res;
  return { status: r.status, type: r.headers.get('content-type') ?? '', body: (await r.json()) as Json };
}

/** A seated link of one UTC host (60-minute slots), made through process A. */
async function seatedLink(capacity: number) {
  const acc = await t.account();
  const host = await newHost(acc.key, 'Seated host');
  const slug = `seats-${acc.id.slice(-12)}`;
  const made = await answerOf(
    callServer(a.url, 'POST', '/v1/booking-links', acc.key, {
      slug,
      title: 'Class',
      host_ids: [host],
      durations: [60],
      seats: { capacity, show_remaining: true },
    }),
  );
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return { acc, host, slug, linkId: made.body.booking_link.id as string };
}

const seat = (base: string, slug: string, n: number, start: string) =>
  callServer(base, 'POST', `/v1/public/links/${slug}/bookings`, undefined, {
    customer_email: `seat${n}@example.com`,
    customer_name: `Seat ${n}`,
    start_time: start,
  });

/** The slot's state as stored: its session, its live seats, and the occupancy rows over its time. */
async function slotState(linkId: string, host: string, start: string) {
  const at = new Date(start);
  const sessions = await t.ctx.db
    .selectFrom('seat_sessions')
    .select(['id', 'seats_taken'])
    .where('booking_link_id', '=', linkId)
    .where('start_time', '=', at)
    .execute();
  const live = await t.ctx.db
    .selectFrom('bookings')
    .select(['id', 'seat_session_id'])
    .where('booking_link_id', '=', linkId)
    .where('start_time', '=', at)
    .where('status', '=', 'confirmed')
    .execute();
  const { rows: occupancy } = await sql<{ owner_id: string }>`
    SELECT owner_id FROM booking_occupancy
    WHERE principal_id = ${host}::uuid AND during && tstzrange(${at}, ${new Date(at.getTime() + HOUR)}, '[)')
  `.execute(t.ctx.db);
  return { sessions, live, occupancy: occupancy.map((o) => o.owner_id) };
}

/**
 * seats_taken equals the live seats, all of that session; the occupancy over the slot is the
 * session's, exactly while seats remain (none left behind by a session gone).
 */
function expectConsistent(state: Awaited<ReturnType<typeof slotState>>) {
  const { sessions, live, occupancy } = state;
  expect(sessions.length).toBeLessThanOrEqual(1);
  const session = sessions[0];
  const taken = session?.seats_taken ?? 0;
  expect(taken, JSON.stringify(state)).toBe(live.length);
  for (const s of live) expect(s.seat_session_id).toBe(session?.id);
  expect(occupancy, JSON.stringify(state)).toEqual(taken > 0 ? [session!.id] : []);
}

/**
 * Runs `hold` in a transaction of the test's own connection (it takes a lock), sends `first`, waits
 * until it waits on a lock, sends `second`, waits until both do, then commits: both requests are in
 * the database at once, queued in that order on the held row, when it is let go.
 */
/** Whether `n` sessions wait on a lock; throws with its answer when `req` was answered instead. */
function waiting(req: Promise<Response>, n: number): () => Promise<boolean> {
  let answered: Response | undefined;
  void req.then((r) => (answered = r)).catch(() => undefined);
  return async () => {
    if (answered)
      throw new Error(`answered ${answered.status} without waiting: ${await answered.clone().text()}`);
    return (await lockWaiters(t)) >= n;
  };
}

async function overlapped(
  hold: (trx: Tx) => Promise<void>,
  first: () => Promise<Response>,
  second: () => Promise<Response>,
): Promise<[Answer, Answer]> {
  let one: Promise<Response> | undefined;
  let two: Promise<Response> | undefined;
  await t.ctx.db.transaction().execute(async (trx) => {
    await hold(trx);
    one = first();
    await waitUntil('the first request to wait on the held lock', waiting(one, 1));
    two = second();
    await waitUntil('both requests to wait on the held lock', waiting(two, 2));
  });
  return Promise.all([answerOf(one!), answerOf(two!)]);
}

describe('seats across two server processes on one database', () => {
  it('20 racing seats into one slot of a capacity-3 link: exactly 3 × 201 and 17 × 409 slot_full, one session with seats_taken 3 holding the host once', async () => {
    const { host, slug, linkId } = await seatedLink(3);
    const start = nextWeekdayAt(2, 10).toISOString();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => answerOf(seat(i % 2 ? a.url : b.url, slug, i, start))),
    );
    const unexpected = answers.filter((x) => x.status !== 201 && x.status !== 409);
    expect(unexpected, JSON.stringify(unexpected.slice(0, 3))).toEqual([]);
    const created = answers.filter((x) => x.status === 201);
    const refused = answers.filter((x) => x.status === 409);
    expect(created).toHaveLength(3);
    expect(refused).toHaveLength(17);
    for (const r of refused) {
      expect(r.type).toMatch(/^application\/problem\+json/);
      expect(r.body.code, JSON.stringify(r.body)).toBe('slot_full');
    }
    const rows = await t.ctx.db
      .selectFrom('bookings')
      .select(['id', 'seat_session_id', 'status'])
      .where('booking_link_id', '=', linkId)
      .execute();
    expect(rows.map((r) => r.id).sort()).toEqual(created.map((c) => c.body.booking.id).sort());
    expect(rows.every((r) => r.status === 'confirmed')).toBe(true);
    const sessionIds = new Set(rows.map((r) => r.seat_session_id));
    expect(sessionIds.size).toBe(1);
    const [sessionId] = [...sessionIds];
    expect(sessionId).toMatch(/^sess_/);
    const sessions = await t.ctx.db
      .selectFrom('seat_sessions')
      .select(['id', 'seats_taken', 'capacity'])
      .where('booking_link_id', '=', linkId)
      .execute();
    expect(sessions).toEqual([{ id: sessionId, seats_taken: 3, capacity: 3 }]);
    const held = await t.ctx.db
      .selectFrom('booking_occupancy')
      .select(['owner_id', 'principal_id'])
      .where('principal_id', '=', host)
      .execute();
    expect(held).toEqual([{ owner_id: sessionId, principal_id: host }]);
    expectConsistent(await slotState(linkId, host, start));
  });

  it('a seat’s cancel racing another customer’s seat of the same slot, in either order: seats_taken equals the live seats, and occupancy exists exactly while it is above 0', async () => {
    const { acc, host, slug, linkId } = await seatedLink(3);
    const orders: string[] = [];
    for (let round = 0; round < 6; round++) {
      // One slot per round: Tuesday 09:00, 10:00, … UTC (60-minute slots, not meeting each other).
      const start = nextWeekdayAt(2, 9 + round).toISOString();
      const [here, there] = round % 2 ? [a.url, b.url] : [b.url, a.url];
      const firstSeat = await answerOf(seat(here, slug, 100 + round, start));
      expect(firstSeat.status, JSON.stringify(firstSeat.body)).toBe(201);
      const seatId = firstSeat.body.booking.id as string;
      // The public answer names no session (nothing public names another seat): read it as stored.
      const sessionId = (await slotState(linkId, host, start)).sessions[0]!.id;
      const cancel = () => callServer(here, 'DELETE', `/v1/bookings/${seatId}`, acc.key);
      const book = () => seat(there, slug, 200 + round, start);
      // Even rounds queue the cancel first on the session row, odd ones the new seat first.
      const cancelFirst = round % 2 === 0;
      const hold = async (trx: Tx) => {
        await sql`SELECT 1 FROM seat_sessions WHERE id = ${sessionId} FOR UPDATE`.execute(trx);
      };
      const [x, y] = cancelFirst
        ? await overlapped(hold, cancel, book)
        : await overlapped(hold, book, cancel);
      const [cancelled, booked] = cancelFirst ? [x, y] : [y, x];
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      expect(cancelled.body.booking.status).toBe('cancelled');
      expect(booked.status, JSON.stringify(booked.body)).toBe(201);
      const state = await slotState(linkId, host, start);
      expectConsistent(state);
      expect(state.live.map((s) => s.id)).toEqual([booked.body.booking.id]);
      // Cancelled first, the last seat took the session with it: the new seat made a new one.
      const newSession = state.sessions[0]!.id !== sessionId;
      expect(newSession).toBe(cancelFirst);
      orders.push(newSession ? 'new session' : 'same session');
    }
    expect(orders).toEqual([
      'new session',
      'same session',
      'new session',
      'same session',
      'new session',
      'same session',
    ]);
  });

  it('3 cancels racing 4 new seats into a full capacity-3 slot, all sent at once across the processes: every cancel 200, each new seat 201 or 409 slot_full, and the count equals the live seats', async () => {
    const { acc, host, slug, linkId } = await seatedLink(3);
    for (let round = 0; round < 6; round++) {
      const start = nextWeekdayAt(3, 9 + round).toISOString();
      const seats: string[] = [];
      for (let n = 0; n < 3; n++) {
        const s = await answerOf(seat(a.url, slug, 300 + 10 * round + n, start));
        expect(s.status, JSON.stringify(s.body)).toBe(201);
        seats.push(s.body.booking.id as string);
      }
      const via = (i: number) => ((i + round) % 2 ? a.url : b.url);
      // Every seat given back while four customers book: the session may empty and come back.
      const answers = await Promise.all([
        ...seats.map((id, i) => answerOf(callServer(via(i), 'DELETE', `/v1/bookings/${id}`, acc.key))),
        ...[0, 1, 2, 3].map((i) => answerOf(seat(via(i + 1), slug, 400 + 10 * round + i, start))),
      ]);
      const [cancels, booked] = [answers.slice(0, 3), answers.slice(3)];
      expect(
        cancels.map((c) => c.status),
        JSON.stringify(cancels.map((c) => c.body)),
      ).toEqual([200, 200, 200]);
      for (const x of booked) {
        expect([201, 409], JSON.stringify(x.body)).toContain(x.status);
        if (x.status === 409) expect(x.body.code).toBe('slot_full');
      }
      const state = await slotState(linkId, host, start);
      expectConsistent(state);
      expect(state.live.map((l) => l.id).sort()).toEqual(
        booked
          .filter((x) => x.status === 201)
          .map((x) => x.body.booking.id as string)
          .sort(),
      );
    }
  });
});

describe('a series racing a single booking across two server processes', () => {
  /** What the database holds for the host: its live bookings' starts and series, and its series rows. */
  async function stored(accountId: string, host: string) {
    const rows = await t.ctx.db
      .selectFrom('bookings')
      .select(['id', 'start_time', 'series_id'])
      .where('principal_id', '=', host)
      .orderBy('start_time')
      .execute();
    const series = await t.ctx.db
      .selectFrom('booking_series')
      .select('id')
      .where('account_id', '=', accountId)
      .where('principal_id', '=', host)
      .execute();
    const occupancy = await t.ctx.db
      .selectFrom('booking_occupancy')
      .select('owner_id')
      .where('principal_id', '=', host)
      .execute();
    return { rows, series, occupancy: occupancy.map((o) => o.owner_id).sort() };
  }

  it('a weekly series of 6 against one booking at its 4th occurrence: exactly one wins; the series whole, or 409 naming the 4th and nothing written', async () => {
    const acc = await t.account();
    const outcomes: string[] = [];
    // Rounds 0–1 hold the host's row so that the series queues first, 2–3 the single booking first;
    // rounds 4–5 send both at once and let them race.
    for (let round = 0; round < 6; round++) {
      const host = await newHost(acc.key, `Series host ${round}`);
      const first = nextWeekdayAt(2, 9 + round);
      const fourth = new Date(first.getTime() + 3 * WEEK).toISOString();
      const [seriesAt, singleAt] = round % 2 ? [a.url, b.url] : [b.url, a.url];
      const series = () =>
        callServer(seriesAt, 'POST', '/v1/bookings', acc.key, {
          principal_id: host,
          start_time: first.toISOString(),
          customer_email: 'series@example.com',
          customer_name: 'Series',
          recurrence: { frequency: 'weekly', count: 6 },
        });
      const single = () =>
        callServer(singleAt, 'POST', '/v1/bookings', acc.key, {
          principal_id: host,
          start_time: fourth,
          customer_email: 'single@example.com',
          customer_name: 'Single',
        });
      let s: Answer;
      let o: Answer;
      const hold = (trx: Tx) => lockForChange(trx, host);
      if (round < 2) [s, o] = await overlapped(hold, series, single);
      else if (round < 4) [o, s] = await overlapped(hold, single, series);
      else [s, o] = await Promise.all([answerOf(series()), answerOf(single())]);

      for (const x of [s, o]) expect([201, 409], JSON.stringify(x.body)).toContain(x.status);
      expect(
        [s.status, o.status].filter((x) => x === 201),
        `round ${round}`,
      ).toHaveLength(1);
      const after = await stored(acc.id, host);
      if (s.status === 201) {
        outcomes.push('series');
        expect(o.type).toMatch(/^application\/problem\+json/);
        expect(o.body).toMatchObject({ code: 'slot_unavailable', reason: 'taken' });
        const occurrences = s.body.series.occurrences as { start_time: string; booking_id: string }[];
        expect(occurrences.map((x) => x.start_time)).toEqual(
          Array.from({ length: 6 }, (_, i) => new Date(first.getTime() + i * WEEK).toISOString()),
        );
        expect(after.rows.map((r) => r.id)).toEqual(occurrences.map((x) => x.booking_id));
        expect(after.rows.every((r) => r.series_id === s.body.series.id)).toBe(true);
        expect(after.series).toEqual([{ id: s.body.series.id }]);
        expect(after.occupancy).toEqual(occurrences.map((x) => x.booking_id).sort());
      } else {
        outcomes.push('single');
        expect(s.type).toMatch(/^application\/problem\+json/);
        expect(s.body.code, JSON.stringify(s.body)).toBe('slot_unavailable');
        expect(s.body.conflicts).toEqual([
          {
            start_time: fourth,
            end_time: new Date(Date.parse(fourth) + 30 * 60_000).toISOString(),
            reason: 'taken',
          },
        ]);
        expect(after.rows.map((r) => [r.id, r.series_id])).toEqual([[o.body.booking.id, null]]);
        expect(after.series).toEqual([]);
        expect(after.occupancy).toEqual([o.body.booking.id]);
      }
    }
    // The held rounds decide the order: whoever queued first on the host's row wins.
    expect(outcomes.slice(0, 4)).toEqual(['series', 'series', 'single', 'single']);
  });
});
