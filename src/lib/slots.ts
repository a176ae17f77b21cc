/**
 * The slot engine: bookable slots from working hours, busy time, buffers and booking limits.
 *
 * Slot starts lie on a grid of `intervalMs` steps counted from each local midnight in the principal's
 * zone (`alignTimezone`). The last step of a local day is kept only when a whole step fits before the
 * next midnight, so slots never overlap when intervalMs >= duration, even when the step does not divide
 * the day. Results never depend on the zone a caller wants for display.
 */
import { clip, expand, type Interval, intersectAll, normalize, subtract } from './intervals.js';
import { localDayBounds } from './schedule.js';
import { DAY, MINUTE } from './time.js';

/** One principal's constraints on slots. */
export interface PrincipalAvailability {
  /** Working hours as UTC intervals (from workingIntervals). */
  working: readonly Interval[];
  /** Calendar events; any order, may overlap. Slots keep the buffers clear of them. */
  busy: readonly Interval[];
  /**
   * Time held by bookings, already padded with the buffers of the booking they belong to (the
   * bookings module's occupancy, docs/design.md#bookings). A slot is free of it when the slot
   * padded with its own buffers does not meet it — exactly what the exclusion constraint checks when
   * the slot is booked. Normalized.
   */
  occupied?: readonly Interval[];
  /** No slot may end within this long before a busy block starts. */
  bufferBeforeMs: number;
  /** No slot may start within this long after a busy block ends. */
  bufferAfterMs: number;
  /** No slot may start before nowMs + minimumNoticeMs. */
  minimumNoticeMs: number;
  /** No slot may start after nowMs + maxDaysAhead * 24 h. */
  maxDaysAhead: number;
}

/** Parameters shared by every principal of a query. */
export interface SlotQuery {
  /** Slots lie fully inside this window. */
  window: Interval;
  durationMs: number;
  /** Grid step (slot_interval); default min(durationMs, 15 min). */
  intervalMs?: number;
  nowMs: number;
  /** The principal's own zone, whose local midnights anchor the grid (never the display zone). */
  alignTimezone: string;
  /** Stop after this many slots (default: all). */
  limit?: number;
}

/** Input of computeSlots: one principal plus the query. */
export type SlotInput = PrincipalAvailability & SlotQuery;

const DEFAULT_MAX_INTERVAL = 15 * MINUTE;

/** All bookable slots of one principal, sorted by start. */
export function computeSlots(input: SlotInput): Interval[] {
  const free = freeIntervals(input, input.window, input.nowMs, input.durationMs);
  return gridSlots(free, input.durationMs, slotInterval(input), input.alignTimezone, input.limit);
}

/** The first bookable slot of one principal, or null; stops as soon as it is found. */
export function firstSlot(input: SlotInput): Interval | null {
  return computeSlots({ ...input, limit: 1 })[0] ?? null;
}

/** Slots bookable by every principal, each under its own buffers, notice and horizon. */
export function mutualSlots(principals: readonly PrincipalAvailability[], query: SlotQuery): Interval[] {
  if (principals.length === 0) return [];
  const frees = principals.map((p) => freeIntervals(p, query.window, query.nowMs, query.durationMs));
  return gridSlots(
    intersectAll(frees),
    query.durationMs,
    slotInterval(query),
    query.alignTimezone,
    query.limit,
  );
}

/** The grid step of a query: intervalMs, or min(durationMs, 15 min). Throws on bad values. */
export function slotInterval(query: Pick<SlotQuery, 'durationMs' | 'intervalMs'>): number {
  const { durationMs } = query;
  if (!Number.isInteger(durationMs) || durationMs <= 0) {
    throw new RangeError('durationMs must be a positive integer');
  }
  const step = query.intervalMs ?? Math.min(durationMs, DEFAULT_MAX_INTERVAL);
  if (!Number.isInteger(step) || step <= 0) throw new RangeError('intervalMs must be a positive integer');
  return step;
}

/** Time in which a slot of `durationMs` may lie for one principal: working minus padded busy, bounded. */
export function freeIntervals(
  p: PrincipalAvailability,
  window: Interval,
  nowMs: number,
  durationMs: number,
): Interval[] {
  const bounds = bookableRange(p, window, nowMs, durationMs);
  if (!(bounds.start < bounds.end)) return [];
  const working = clip(normalize(p.working), bounds);
  if (working.length === 0) return working;
  const free = subtract(working, expand(p.busy, p.bufferBeforeMs, p.bufferAfterMs));
  const occupied = p.occupied;
  if (occupied === undefined || occupied.length === 0) return free;
  // [s - before, e + after) misses an occupied block O exactly when [s, e) misses [O.start - after, O.end + before).
  return subtract(free, expand(occupied, p.bufferAfterMs, p.bufferBeforeMs));
}

/** The part of `window` allowed by notice and horizon, widened by one duration at the far end. */
export function bookableRange(
  p: Pick<PrincipalAvailability, 'minimumNoticeMs' | 'maxDaysAhead'>,
  window: Interval,
  nowMs: number,
  durationMs: number,
): Interval {
  const earliest = nowMs + p.minimumNoticeMs;
  const latestEnd = nowMs + p.maxDaysAhead * DAY + durationMs;
  return {
    start: Math.max(window.start, earliest),
    end: Math.min(window.end, latestEnd),
  };
}

/**
 * The part of the bookable range that decides which slots there are: its start raised to the next grid
 * point, its end lowered to the end of the last slot that can start on the grid. Slots are the grid
 * points g with [g, g + duration) free, so they are the same for every window and clock that give the
 * same slotRange (property-tested): answers can be remembered under it while "now" moves on. Empty
 * (start === end) when no slot fits.
 */
export function slotRange(
  p: Pick<PrincipalAvailability, 'minimumNoticeMs' | 'maxDaysAhead'>,
  query: Pick<SlotQuery, 'window' | 'nowMs' | 'durationMs' | 'intervalMs' | 'alignTimezone'>,
): Interval {
  const { durationMs, alignTimezone: zone } = query;
  const step = slotInterval(query);
  const bounds = bookableRange(p, query.window, query.nowMs, durationMs);
  const start = gridAtOrAfter(bounds.start, step, zone);
  if (bounds.end - durationMs < start) return { start, end: start };
  const end = gridAtOrBefore(bounds.end - durationMs, step, zone) + durationMs;
  return end - durationMs < start ? { start, end: start } : { start, end };
}

/**
 * Whether `x` is a point of the grid of `step` ms in `zone` (see the top of this file): a whole number
 * of steps after its local midnight, and, past midnight itself, a whole step before the next one — the
 * starts gridSlots can offer.
 */
export function onGrid(x: number, step: number, zone: string): boolean {
  const day = localDayBounds(zone, x);
  const offset = x - day.start;
  return offset % step === 0 && (offset === 0 || x + step <= day.end);
}

/** The first grid point at or after `x` (see the top of this file for the grid). */
function gridAtOrAfter(x: number, step: number, zone: string): number {
  const day = localDayBounds(zone, x);
  const k = Math.ceil((x - day.start) / step);
  const g = day.start + k * step;
  return k > 0 && g + step > day.end ? day.end : g;
}

/** The last grid point at or before `x`. */
function gridAtOrBefore(x: number, step: number, zone: string): number {
  const day = localDayBounds(zone, x);
  const lastK = Math.max(0, Math.floor((day.end - day.start) / step) - 1);
  return day.start + Math.min(Math.floor((x - day.start) / step), lastK) * step;
}

/** Grid-aligned slots of `durationMs` lying fully inside normalized `free`, sorted, at most `limit`. */
export function gridSlots(
  free: readonly Interval[],
  durationMs: number,
  intervalMs: number,
  zone: string,
  limit = Number.POSITIVE_INFINITY,
): Interval[] {
  const out: Interval[] = [];
  if (limit <= 0) return out;
  let dayStart = Number.NaN;
  let dayEnd = Number.NaN;
  for (let i = 0; i < free.length; i++) {
    const f = free[i]!;
    const lastStart = f.end - durationMs;
    let x = f.start;
    while (x <= lastStart) {
      if (!(x >= dayStart && x < dayEnd)) {
        const day = localDayBounds(zone, x);
        dayStart = day.start;
        dayEnd = day.end;
      }
      const k = Math.ceil((x - dayStart) / intervalMs);
      let g = dayStart + k * intervalMs;
      if (k > 0 && g + intervalMs > dayEnd) g = dayEnd;
      if (g > lastStart) break;
      out.push({ start: g, end: g + durationMs });
      if (out.length >= limit) return out;
      x = g + intervalMs;
    }
  }
  return out;
}
