/**
 * A seated link's slots (docs/design.md#series-and-seats): its sessions are its own slots with the
 * seats left, not busy time; a full session and every slot that would meet a session are not offered;
 * `seats_remaining` is written only when the link shows it; without seats the answer is unchanged. The
 * service is built alone over a fake booking busy source (no store): the occupancy it hands out is
 * what the bookings module's would be, the sessions' rows included.
 */
import fc from 'fast-check';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { type Interval, normalize } from '../../lib/intervals.js';
import { DEFAULT_SCHEDULE } from '../../lib/schedule.js';
import { HOUR, isoUtc, MINUTE } from '../../lib/time.js';
import { FakeClock } from '../../platform/clock.js';
import { Metrics } from '../../platform/metrics.js';
import { Extensions } from '../module.js';
import type { PrincipalProfile } from '../principals/api.js';
import type {
  AvailabilityNeeds,
  BusySource,
  LinkSeatsInput,
  LinkSlotsInput,
  SeatSessionSlot,
} from './api.js';
import { linkSeatSlotsJson, linkSlotsJson } from './present.js';
import { AvailabilityService } from './service.js';

const clock = new FakeClock('2026-06-01T12:00:00.000Z'); // a Monday
/** Wednesday 3 June 2026: hosts work 09:00-17:00 UTC. */
const WED = Date.parse('2026-06-03T00:00:00.000Z');
const at = (h: number, m = 0) => WED + h * HOUR + m * MINUTE;
const WINDOW = { start: WED, end: WED + 24 * HOUR };
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
/** The session: Wednesday 10:00-11:00; the hosts' buffers are 10 minutes on each side. */
const SESSION = { start: at(10), end: at(11) };
const PAD = 10 * MINUTE;
const row = (principalId: string) => ({ principalId, start: SESSION.start - PAD, end: SESSION.end + PAD });

function host(id: string): PrincipalProfile {
  const schedule = { ...DEFAULT_SCHEDULE('UTC'), buffer_before_minutes: 10, buffer_after_minutes: 10 };
  return { id, kind: 'host', accountId: 'acct', timezone: 'UTC', livemode: true, schedule };
}
const hostA = host(A);
const hostB = host(B);

/** A service whose only busy source is a booking source answering `occupancy` (the same arrays each time). */
function serviceWith(occupancy: Record<string, readonly Interval[]>): AvailabilityService {
  const lists = new Map(Object.entries(occupancy).map(([id, list]) => [id, normalize(list)]));
  const bookings: BusySource = {
    name: 'booking',
    busy: async (principalId) => ({ intervals: lists.get(principalId) ?? [], stale: false, asOf: 0 }),
  };
  const extensions = new Extensions();
  extensions.add('busySources', [bookings]);
  extensions.seal();
  // linkSlots takes its hosts' profiles from its input: the principals API is never asked.
  const needs = {} as AvailabilityNeeds;
  // Metrics only reads its pool when metrics are collected, which these tests never do.
  return new AvailabilityService({ metrics: new Metrics({} as pg.Pool) }, needs, extensions);
}

function input(hosts: readonly PrincipalProfile[], seats?: LinkSeatsInput): LinkSlotsInput {
  return {
    hosts,
    mode: hosts.length > 1 ? 'all' : 'any',
    window: WINDOW,
    durationMinutes: 60,
    timezone: 'UTC',
    limits: {},
    livemode: true,
    clock,
    ...(seats ? { seats } : {}),
  };
}

function session(seatsTaken: number, capacity = 4, hosts = [A]): SeatSessionSlot {
  return { ...SESSION, capacity, seatsTaken, occupancy: hosts.map(row) };
}

interface Slot {
  start: string;
  end: string;
  seats_remaining?: number;
}
async function slotsOf(answer: Promise<Buffer | string>): Promise<Slot[]> {
  return (JSON.parse((await answer).toString()) as { slots: Slot[] }).slots;
}

/** Hourly slots on the 15-minute grid starting from `from` to `to` (inclusive), as the answer writes them. */
function starts(from: number, to: number, seats?: number): Slot[] {
  const out: Slot[] = [];
  for (let s = from; s <= to; s += 15 * MINUTE) {
    out.push({
      start: isoUtc(s),
      end: isoUtc(s + HOUR),
      ...(seats === undefined ? {} : { seats_remaining: seats }),
    });
  }
  return out;
}

/** A booking of host A after the session: its row touches the session's (merged in the busy list). */
const AFTER = { start: SESSION.end + PAD, end: at(12) };

describe('linkSlots of a seated link', () => {
  it('offers a session with seats left, with capacity − seats_taken, and other free slots with the link capacity', async () => {
    const service = serviceWith({ [A]: [row(A), AFTER] });
    const seats = { capacity: 5, showRemaining: true, sessions: [session(1)] };
    const slots = await slotsOf(service.linkSlots(input([hostA], seats)));
    // 10:00 is the session (4 − 1 seats); every other start before 12:15 meets the session's row or the
    // booking's, padded by the buffers.
    expect(slots).toEqual([
      { start: isoUtc(at(10)), end: isoUtc(at(11)), seats_remaining: 3 },
      ...starts(at(12, 15), at(16), 5),
    ]);
  });

  it('treats the session as busy without seats: the plain answer, byte for byte', async () => {
    const service = serviceWith({ [A]: [row(A), AFTER] });
    const answer = await service.linkSlots(input([hostA]));
    const plain = starts(at(12, 15), at(16)).map((s) => ({
      start: Date.parse(s.start),
      end: Date.parse(s.end),
    }));
    const expected = linkSlotsJson({
      duration_minutes: 60,
      timezone: 'UTC',
      stale: false,
      busy_as_of: null,
      slots: plain,
    });
    expect(Buffer.from(answer).equals(expected)).toBe(true);
    expect(answer.toString()).not.toContain('seats_remaining');
  });

  it('does not offer a full session, nor any slot meeting a session', async () => {
    const service = serviceWith({ [A]: [row(A)] });
    const seats = { capacity: 5, showRemaining: true, sessions: [session(4)] };
    const slots = await slotsOf(service.linkSlots(input([hostA], seats)));
    // Starts up to 11:15 meet [09:50, 11:10) padded by 10 minutes: the host is in the session.
    expect(slots).toEqual(starts(at(11, 30), at(16), 5));
  });

  it('offers only the session itself among the slots around it, whatever its seats', async () => {
    const service = serviceWith({ [A]: [row(A)] });
    const seats = { capacity: 5, showRemaining: true, sessions: [session(2)] };
    const slots = await slotsOf(service.linkSlots(input([hostA], seats)));
    const near = slots.filter((s) => Date.parse(s.start) < at(11, 30));
    expect(near).toEqual([{ start: isoUtc(at(10)), end: isoUtc(at(11)), seats_remaining: 2 }]);
  });

  it('writes no seats_remaining when the link does not show it, and still applies the seats', async () => {
    const service = serviceWith({ [A]: [row(A), AFTER] });
    const seats = { capacity: 5, showRemaining: false, sessions: [session(1)] };
    const answer = (await service.linkSlots(input([hostA], seats))).toString();
    expect(answer).not.toContain('seats_remaining');
    const slots = (JSON.parse(answer) as { slots: Slot[] }).slots;
    expect(slots).toEqual([{ start: isoUtc(at(10)), end: isoUtc(at(11)) }, ...starts(at(12, 15), at(16))]);
  });

  it('remembers the answer by the sessions: a seat taken changes it though the occupancy did not', async () => {
    const service = serviceWith({ [A]: [row(A)] });
    const ask = (taken: number) =>
      service.linkSlots(input([hostA], { capacity: 5, showRemaining: true, sessions: [session(taken)] }));
    await ask(1);
    const kept = await ask(1); // asked twice: remembered from now on
    expect(await ask(1)).toBe(kept);
    const later = await ask(2);
    expect(later).not.toBe(kept);
    expect((await slotsOf(Promise.resolve(later)))[0]).toEqual({
      start: isoUtc(at(10)),
      end: isoUtc(at(11)),
      seats_remaining: 2,
    });
    const full = await slotsOf(ask(4));
    expect(full.some((s) => s.start === isoUtc(at(10)))).toBe(false);
  });

  it('frees a collective session for every host, and keeps each host’s other bookings busy', async () => {
    const other = { start: at(14), end: at(15) };
    const service = serviceWith({ [A]: [row(A)], [B]: [row(B), other] });
    const seats = { capacity: 3, showRemaining: true, sessions: [session(1, 3, [A, B])] };
    const slots = await slotsOf(service.linkSlots(input([hostA, hostB], seats)));
    expect(slots).toEqual([
      { start: isoUtc(at(10)), end: isoUtc(at(11)), seats_remaining: 2 },
      // B's booking 14:00-15:00, padded: starts from 13:00 to 15:00 are out.
      ...starts(at(11, 30), at(12, 45), 3),
      ...starts(at(15, 15), at(16), 3),
    ]);
  });

  it('frees nothing outside the session when another booking overlaps its row (test mode sees live ones)', async () => {
    // A live booking 09:30-10:30 under a test session: only the session's own slot comes back.
    const live = { start: at(9, 30), end: at(10, 30) };
    const service = serviceWith({ [A]: [row(A), live] });
    const seats = { capacity: 5, showRemaining: true, sessions: [session(1)] };
    const slots = await slotsOf(service.linkSlots({ ...input([hostA], seats), livemode: false }));
    expect(slots.filter((s) => Date.parse(s.start) < at(11, 30))).toEqual([
      { start: isoUtc(at(10)), end: isoUtc(at(11)), seats_remaining: 4 - 1 },
    ]);
  });

  it('does not offer a slot with the start of a session of another length (the link’s duration changed)', async () => {
    // A 90-minute session 10:00-11:30 (row 09:50-11:40) under a link of 60 minutes now.
    const longRow = { ...row(A), end: at(11, 40) };
    const service = serviceWith({ [A]: [longRow] });
    const longer = { ...session(1), end: at(11, 30), occupancy: [longRow] };
    const seats = { capacity: 5, showRemaining: true, sessions: [longer] };
    const slots = await slotsOf(service.linkSlots(input([hostA], seats)));
    expect(slots).toEqual(starts(at(12), at(16), 5));
  });
});

describe('linkSeatSlotsJson', () => {
  it('is the JSON text of the plain objects, seats_remaining after start and end', () => {
    const slot = fc
      .tuple(
        fc.integer({ min: 28_333_334, max: 31_666_666 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 1000 }),
      )
      .map(([m, len, seats]) => ({ start: m * MINUTE, end: (m + len) * MINUTE, seatsRemaining: seats }));
    fc.assert(
      fc.property(fc.array(slot, { maxLength: 30 }), fc.boolean(), fc.boolean(), (slots, stale, show) => {
        slots.sort((a, b) => a.start - b.start);
        const head = {
          duration_minutes: 30,
          timezone: 'Europe/Berlin',
          stale,
          busy_as_of: stale ? isoUtc(0) : null,
        };
        const text = linkSeatSlotsJson({ ...head, slots }, show).toString();
        const plain = slots.map((s) => ({
          start: isoUtc(s.start),
          end: isoUtc(s.end),
          ...(show ? { seats_remaining: s.seatsRemaining } : {}),
        }));
        expect(text).toBe(JSON.stringify({ ...head, slots: plain }));
      }),
    );
  });
});
