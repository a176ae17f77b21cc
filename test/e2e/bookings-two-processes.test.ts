import { describe, expect, it } from 'vitest';
import type { Json, TestApp } from '../helpers/app.js';
import { type ServerProcess, callServer, useTwoServers } from '../helpers/process.js';
import { nextWeekdayAt } from '../helpers/slots.js';
import * as fixtures from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/promises.js';

/**
 * Bookings across two `kairos serve` processes on one database, as in a horizontally scaled deployment:
 * - a slot raced from both processes at once is booked exactly once (the database decides, not memory),
 *   and every loser gets a clean 409 `slot_unavailable`, never a 5xx;
 * - a booking or cancellation made through one process changes the public availability the other one
 *   has remembered as soon as its NOTIFY arrives.
 * The spawned servers run on the real clock, so times are picked on a weekday a few days ahead.
 */
let t: TestApp;
let a: ServerProcess;
let b: ServerProcess;
useTwoServers((s) => ({ t, a, b } = s));

/** The first Tuesday at least two days after now, at `hour`:00 UTC (inside the default Mon–Fri 09–17). */
const nextTuesdayAt = (hour: number): Date => nextWeekdayAt(2, hour);

const newHost = (key: string, name: string) =>
  fixtures.newHost(fixtures.serverAt(a.url), { token: key }, { display_name: name, timezone: 'UTC' });

const customer = { customer_email: 'ada@example.com', customer_name: 'Ada' };

describe('bookings across two server processes on one database', () => {
  it('200 racing booking requests for one slot across two processes: exactly one 201, every other answer 409 problem+json with code slot_unavailable, none 5xx', async () => {
    const acc = await t.account();
    const host = await newHost(acc.key, 'Raced host');
    const body = { principal_id: host, start_time: nextTuesdayAt(10).toISOString(), ...customer };
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        callServer(i % 2 ? a.url : b.url, 'POST', '/v1/bookings', acc.key, body),
      ),
    );
    const answers = await Promise.all(
      results.map(async (r) => ({
        status: r.status,
        type: r.headers.get('content-type') ?? '',
        body: (await r.json()) as Json,
      })),
    );
    const unexpected = answers.filter((x) => x.status !== 201 && x.status !== 409);
    expect(unexpected, JSON.stringify(unexpected.slice(0, 3))).toEqual([]);
    const created = answers.filter((x) => x.status === 201);
    expect(created).toHaveLength(1);
    expect(created[0]!.body.booking.principal_id).toBe(host);
    const refused = answers.filter((x) => x.status === 409);
    expect(refused).toHaveLength(199);
    for (const r of refused) {
      expect(r.type).toMatch(/^application\/problem\+json/);
      expect(r.body).toMatchObject({ code: 'slot_unavailable', reason: 'taken' });
      expect(r.body.request_id).toMatch(/^req_[0-9a-z]{26}$/);
    }
    const rows = await t.ctx.db
      .selectFrom('bookings')
      .select('id')
      .where('principal_id', '=', host)
      .execute();
    expect(rows.map((r) => r.id)).toEqual([created[0]!.body.booking.id]);
    const held = await t.ctx.db
      .selectFrom('booking_occupancy')
      .select('owner_id')
      .where('principal_id', '=', host)
      .execute();
    expect(held.map((r) => r.owner_id)).toEqual([created[0]!.body.booking.id]);
  });

  it('a booking made in process A disappears from availability in process B at once, and a cancellation in A brings it back', async () => {
    const acc = await t.account();
    const host = await newHost(acc.key, 'Visible host');
    const slug = `two-proc-${Date.now()}`;
    const made = await callServer(a.url, 'POST', '/v1/booking-links', acc.key, {
      slug,
      title: 'Intro call',
      host_ids: [host],
      duration_minutes: 30,
    });
    expect(made.status).toBe(201);
    expect(((await made.json()) as Json).booking_link.slug).toBe(slug);

    const day = nextTuesdayAt(9);
    const window = `from=${day.toISOString()}&to=${new Date(day.getTime() + 8 * 3_600_000).toISOString()}`;
    const slotsInB = async (): Promise<string[]> => {
      const res = await callServer(b.url, 'GET', `/v1/public/links/${slug}/availability?${window}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as Json).slots.map((s: { start: string }) => s.start);
    };
    /** Polls B every 50 ms for up to 2 s until `done` holds; answers the last slots and the time taken. */
    const pollB = async (done: (slots: string[]) => boolean) => {
      const since = Date.now();
      let slots: string[] = [];
      const settled = async () => {
        slots = await slotsInB();
        return done(slots);
      };
      await waitUntil('B to answer the change', settled, 2000, 50).catch(() => undefined);
      return { slots, ms: Date.now() - since };
    };

    const before = await slotsInB();
    expect(await slotsInB()).toEqual(before); // asked twice: B now remembers this answer
    const chosen = nextTuesdayAt(10).toISOString();
    expect(before).toContain(chosen);
    // What stays bookable: every 30-minute slot not overlapping the booked one (slots may start every 15).
    const at = Date.parse(chosen);
    const others = before.filter((s) => Math.abs(Date.parse(s) - at) >= 30 * 60_000);
    expect(others.length).toBeGreaterThan(10);

    const booked = await callServer(a.url, 'POST', `/v1/public/links/${slug}/bookings`, undefined, {
      start_time: chosen,
      ...customer,
    });
    expect(booked.status).toBe(201);
    const bookingId = ((await booked.json()) as Json).booking.id as string;
    const gone = await pollB((slots) => !slots.includes(chosen));
    expect(gone.slots, `B still offered ${chosen} after ${gone.ms} ms`).toEqual(others);

    expect((await callServer(a.url, 'DELETE', `/v1/bookings/${bookingId}`, acc.key)).status).toBe(200);
    const back = await pollB((slots) => slots.includes(chosen));
    expect(back.slots, `B still lacked ${chosen} after ${back.ms} ms`).toEqual(before);
  });
});
