/**
 * A seated link's slots (docs/design.md#series-and-seats): pure logic over the sessions the bookings
 * module passes to `linkSlots`. A session owns its hosts' occupancy rows, so for everything else the
 * host is busy; for the seated link itself the session is not busy time but a slot with
 * `capacity − seats_taken` seats left.
 *
 * How: each session's rows are taken out of its hosts' booking busy time before slots are computed
 * (`occupied`), then every computed slot is judged (`offered`):
 * - the session's own slot (same start and end) is offered while seats remain;
 * - another slot is offered only if it would not meet a session's rows when booked (the slot padded
 *   with the host's buffers, as lib/slots.ts pads it against occupancy): exactly the slots the rows
 *   would have allowed had they stayed, so the subtraction frees nothing but the sessions' own slots;
 * - every other slot has the link's capacity.
 * Rows of one host never overlap in one mode (the exclusion constraint). In test mode a live booking
 * may overlap a test session's row: taking the row out frees that time only inside the row, where no
 * other slot is offered anyway, and the session's own slot takes a seat without new occupancy.
 */
import { type Interval, normalize, subtract } from '../../lib/intervals.js';
import type { LinkSeatsInput, SeatSessionSlot } from './api.js';

/** A slot with the seats still free in it. */
export interface SeatedSlot extends Interval {
  readonly seatsRemaining: number;
}

/** A host of the link as seats need it: its id and the buffers slots keep around occupancy. */
export interface SeatHost {
  readonly id: string;
  readonly bufferBeforeMs: number;
  readonly bufferAfterMs: number;
}

/** A link's seats, prepared once per request. */
export interface LinkSeats {
  /** What of the seats the answer depends on, for the memo key (sessions are not in the busy arrays' ids). */
  readonly key: string;
  /** Whether each slot says `seats_remaining`. */
  readonly showRemaining: boolean;
  /** Host i's booking busy time without the sessions' rows (the same array when it holds none). */
  occupied(i: number, booking: readonly Interval[]): readonly Interval[];
  /** The slots offered, each with its seats, from slots computed over `occupied`, sorted by start. */
  offered(slots: readonly Interval[]): SeatedSlot[];
}

/** The seats of a seated link whose hosts are `hosts` (in the order of their busy time). */
export function linkSeats(seats: LinkSeatsInput, hosts: readonly SeatHost[]): LinkSeats {
  const sessions = seats.sessions.slice().sort((a, b) => a.start - b.start || a.end - b.end);
  const index = new Map(hosts.map((h, i) => [h.id, i]));
  // Each host's rows, and the span in which a slot would meet a session's rows (one interval per session:
  // every row contains the session's slot, so they overlap).
  const rows: Interval[][] = hosts.map(() => []);
  const spans: Interval[] = [];
  const own = new Map<number, SeatSessionSlot>();
  const keyParts: string[] = [];
  for (const s of sessions) {
    let start = Number.POSITIVE_INFINITY;
    let end = Number.NEGATIVE_INFINITY;
    const held: string[] = [];
    for (const o of s.occupancy) {
      const i = index.get(o.principalId);
      if (i === undefined || !(o.start < o.end)) continue; // a host no longer on the link
      const h = hosts[i]!;
      rows[i]!.push({ start: o.start, end: o.end });
      start = Math.min(start, o.start - h.bufferAfterMs);
      end = Math.max(end, o.end + h.bufferBeforeMs);
      held.push(`${i}:${o.start}:${o.end}`);
    }
    if (start < end) spans.push({ start, end });
    if (!own.has(s.start)) own.set(s.start, s);
    keyParts.push(`${s.start},${s.end},${s.capacity},${s.seatsTaken},${held.join(',')}`);
  }
  const held = rows.map((r) => normalize(r));
  const blocked = normalize(spans);
  const capacity = seats.capacity;
  return {
    key: `seats|${capacity}|${seats.showRemaining}|${keyParts.join(';')}`,
    showRemaining: seats.showRemaining,
    occupied(i, booking) {
      const r = held[i];
      return r === undefined || r.length === 0 ? booking : subtract(booking, r);
    },
    offered(slots) {
      const out: SeatedSlot[] = [];
      let j = 0;
      for (const x of slots) {
        const s = own.get(x.start);
        if (s !== undefined && s.end === x.end) {
          const left = s.capacity - s.seatsTaken;
          if (left >= 1) out.push({ start: x.start, end: x.end, seatsRemaining: left });
          continue;
        }
        // Slots come sorted by start with one duration, so their ends rise too: one pass over the spans.
        while (j < blocked.length && blocked[j]!.end <= x.start) j++;
        let meets = false;
        for (let k = j; k < blocked.length && blocked[k]!.start < x.end; k++) {
          if (blocked[k]!.end > x.start) {
            meets = true;
            break;
          }
        }
        if (!meets && capacity >= 1) out.push({ start: x.start, end: x.end, seatsRemaining: capacity });
      }
      return out;
    },
  };
}
