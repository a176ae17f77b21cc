/**
 * Slots remembered by UTC day, for questions asked once (docs/design.md, "Availability reads"): a
 * booking page that moves its window by a minute, or a caller stepping through weeks, asks a question
 * whose whole answer was never computed, but whose days were. Each day's slots are computed once per
 * principal state (busy time, schedule, duration, grid, buffers) and kept rendered, so a new question
 * is a few copies of remembered bytes instead of 30 days of slot arithmetic.
 *
 * Why a day's slots can be shared between questions: the slots of a question are the grid points g
 * with [g, g + duration) inside working hours, clear of busy time and inside the question's bookable
 * range (lib/slots.ts). The grid depends on the principal's zone only, so the slots of any range are
 * the slots computed without notice or horizon, kept when they lie inside the range (slotRange).
 * A day holds the slots that start in it, computed over the day plus one duration, with busy time
 * padded by the buffers.
 *
 * Busy time comes from a source's whole known list (`BusyAnswer.whole`), complete only inside its
 * coverage: a day is computed only when its padded neighbourhood lies inside both lists' coverage,
 * and otherwise the question is answered the usual way. A principal state is named by the identity of
 * the lists and of the schedule (memo.ts), so new data makes a new state and nothing is invalidated.
 */
import { clip, type Interval } from '../../lib/intervals.js';
import type { Schedule } from '../../lib/schedule.js';
import { freeIntervals, gridSlots, slotInterval } from '../../lib/slots.js';
import type { WholeBusy } from './busy-source.js';
import { renderSlot } from './present.js';
import { DAY } from '../../lib/time.js';
import { workingFor } from './rules.js';

/** One principal state: whose slots, under which constraints, from which busy lists. */
export interface DayQuestion {
  /** Names everything below but the lists' coverage (built from memo ids by the caller). */
  key: string;
  schedule: Schedule;
  calendar: WholeBusy;
  booking: WholeBusy;
  bufferBeforeMs: number;
  bufferAfterMs: number;
  durationMs: number;
  intervalMs: number | undefined;
  /** The zone whose local midnights anchor the grid. */
  alignTimezone: string;
}

/** A day's slots, rendered `{"start":…,"end":…}` texts separated by commas. */
interface Day {
  starts: Float64Array;
  ends: Float64Array;
  bytes: Buffer;
  /** Byte offset of each slot's text; one more entry, one past the end (where a comma would follow). */
  offsets: Uint32Array;
}

interface State {
  days: Map<number, Day>;
  bytes: number;
}

const COMMA = 44;

export class DaySlots {
  /** Insertion order is recency order: a use moves its state to the end. */
  private readonly states = new Map<string, State>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /**
   * `head`, the slots of `q` inside `range` (a slotRange) rendered and separated by commas, then
   * `tail` (present.ts slotsFrame); null when a day it needs is outside the busy lists' coverage.
   */
  answer(q: DayQuestion, range: Interval, { head, tail }: { head: string; tail: string }): Buffer | null {
    const first = Math.floor(range.start / DAY);
    const last = range.end > range.start ? Math.floor((range.end - 1) / DAY) : first - 1;
    let state = this.states.get(q.key);
    if (state !== undefined) {
      this.states.delete(q.key);
      this.states.set(q.key, state);
    }
    const days: Day[] = [];
    for (let d = first; d <= last; d++) {
      let day = state?.days.get(d);
      if (day === undefined) {
        if (!covered(q, d)) {
          this.evict(q.key);
          return null;
        }
        day = computeDay(q, d);
        if (state === undefined) {
          state = { days: new Map(), bytes: 0 };
          this.states.set(q.key, state);
        }
        const size = day.bytes.length + day.starts.length * 20 + 64;
        state.days.set(d, day);
        state.bytes += size;
        this.bytes += size;
      }
      days.push(day);
    }
    this.evict(q.key);

    const slices: Buffer[] = [];
    let size = 0;
    for (let k = 0; k < days.length; k++) {
      const day = days[k]!;
      const n = day.starts.length;
      if (n === 0) continue;
      // Only the first day starts before the range; any day's last slots may end after it (a slot
      // may be longer than the rest of the range). Whole days are copied as they are.
      const i = k === 0 ? lowerBound(day.starts, range.start) : 0;
      const j = day.ends[n - 1]! <= range.end ? n : endBound(day.ends, range.end, i);
      if (i >= j) continue;
      const slice = i === 0 && j === n ? day.bytes : day.bytes.subarray(day.offsets[i]!, day.offsets[j]! - 1);
      slices.push(slice);
      size += slice.length;
    }
    if (slices.length > 1) size += slices.length - 1;
    const headBytes = Buffer.byteLength(head);
    // Never a slice of Node's shared pool: remembered answers would keep whole pool blocks alive.
    const out = Buffer.allocUnsafeSlow(headBytes + size + Buffer.byteLength(tail));
    let at = out.write(head, 0);
    for (let k = 0; k < slices.length; k++) {
      if (k > 0) out[at++] = COMMA;
      out.set(slices[k]!, at);
      at += slices[k]!.length;
    }
    out.write(tail, at);
    return out;
  }

  /** States and bytes held (tests, metrics). */
  get stats(): { states: number; bytes: number } {
    return { states: this.states.size, bytes: this.bytes };
  }

  /** Drops the least recently used states until within budget; never `keep`, the one in use. */
  private evict(keep: string): void {
    for (const [key, state] of this.states) {
      if (this.bytes <= this.maxBytes) return;
      if (key === keep) continue;
      this.states.delete(key);
      this.bytes -= state.bytes;
    }
  }
}

/** Whether day `d`'s slots depend only on busy time both lists know completely. */
function covered(q: DayQuestion, d: number): boolean {
  const near = neighbourhood(q, d);
  return (
    q.calendar.start <= near.start &&
    q.calendar.end >= near.end &&
    q.booking.start <= near.start &&
    q.booking.end >= near.end
  );
}

/**
 * The busy time day `d`'s slots depend on: the day plus one duration, widened by the buffers
 * (calendar busy time reaches a slot through [start - after, end + before), occupancy through
 * [start - before, end + after): the wider of the two on each side, as the service's query window).
 */
function neighbourhood(q: DayQuestion, d: number): Interval {
  const pad = Math.max(q.bufferBeforeMs, q.bufferAfterMs);
  return { start: d * DAY - pad, end: (d + 1) * DAY + q.durationMs + pad };
}

function computeDay(q: DayQuestion, d: number): Day {
  const dayStart = d * DAY;
  const dayEnd = dayStart + DAY;
  const window = { start: dayStart, end: dayEnd + q.durationMs };
  const near = neighbourhood(q, d);
  const free = freeIntervals(
    {
      working: workingFor(q.schedule, window),
      busy: clip(q.calendar.intervals, near),
      occupied: clip(q.booking.intervals, near),
      bufferBeforeMs: q.bufferBeforeMs,
      bufferAfterMs: q.bufferAfterMs,
      // No notice or horizon here: the question's range applies them (see the top of this file).
      minimumNoticeMs: Number.NEGATIVE_INFINITY,
      maxDaysAhead: Number.POSITIVE_INFINITY,
    },
    window,
    0,
    q.durationMs,
  );
  const step = slotInterval({ durationMs: q.durationMs, intervalMs: q.intervalMs });
  const slots = gridSlots(free, q.durationMs, step, q.alignTimezone).filter((s) => s.start < dayEnd);
  const texts = slots.map(renderSlot);
  const offsets = new Uint32Array(slots.length + 1);
  let at = 0;
  for (let i = 0; i < texts.length; i++) {
    offsets[i] = at;
    at += texts[i]!.length + 1;
  }
  offsets[slots.length] = at;
  const bytes = Buffer.allocUnsafeSlow(Math.max(0, at - 1));
  for (let i = 0; i < texts.length; i++) {
    bytes.set(texts[i]!, offsets[i]!);
    if (i + 1 < texts.length) bytes[offsets[i + 1]! - 1] = COMMA;
  }
  return {
    starts: Float64Array.from(slots, (s) => s.start),
    ends: Float64Array.from(slots, (s) => s.end),
    bytes,
    offsets,
  };
}

/** The first index whose start is at or after `x`. */
function lowerBound(starts: Float64Array, x: number): number {
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One past the last index (from `from`) whose end is at or before `x` (ends rise with starts). */
function endBound(ends: Float64Array, x: number, from: number): number {
  let lo = from;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ends[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
