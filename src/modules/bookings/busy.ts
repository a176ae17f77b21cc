/**
 * Bookings as busy time (docs/design.md#bookings): the `booking` busy source availability reads.
 * Each principal's occupancy (live bookings and waitlist holds, padded with buffers) is read once and
 * kept in memory until a change is announced on `kairos_booking_busy` — by the trigger of migration
 * 0008 in every process, and by the writing process itself right after its commit, before it answers.
 * Answers for the same window are the same array while nothing changes, so availability can remember
 * what it computed from them.
 *
 * Per mode (docs/api.md#test-mode): live mode sees live occupancy only (one read, as before); test
 * mode sees live and test occupancy (live bookings are busy in test availability). Both lists of a
 * principal are kept in its one cache entry, so a change announced for the principal drops both.
 */
import { InvalidatedCache } from '../../db/invalidated-cache.js';
import type { Notifier } from '../../db/notify.js';
import type { Db } from '../../db/store.js';
import { clip, type Interval, normalize } from '../../lib/intervals.js';
import type { Clock } from '../../platform/clock.js';
import type { BusyAnswer, BusyOptions, BusySource, WholeBusy } from '../availability/api.js';
import { occupancyAfter } from './repo.js';
import { DAY } from '../../lib/time.js';

export const BOOKING_BUSY_CHANNEL = 'kairos_booking_busy';
/** Occupancy that ended longer ago than this is not kept in memory (older windows are read directly). */
const KEEP_PAST_MS = 7 * DAY;
const CLIPPED_PER_PRINCIPAL = 8;
const EMPTY: readonly Interval[] = Object.freeze([]);

interface ModeEntry {
  /** Occupancy ending after `whole.start`, all of it (so `whole.end` is +∞). */
  whole: WholeBusy;
  /** The last few windows asked, with their (shared) answers. */
  clipped: { start: number; end: number; answer: BusyAnswer }[];
  /** When it was read (each mode's list ages on its own: storing one does not refresh the other). */
  at: number;
}

/** A principal's cached occupancy: live mode's list, test mode's (live and test), either or both. */
interface Entry {
  live?: ModeEntry;
  test?: ModeEntry;
}

const TTL_MS = 5 * 60_000;

export class BookingBusySource implements BusySource {
  readonly name = 'booking' as const;
  private readonly reads: InvalidatedCache<Entry>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.reads = new InvalidatedCache(clock, { channel: BOOKING_BUSY_CHANNEL, ttlMs: TTL_MS });
  }

  listen(notifier: Notifier): Promise<void> {
    return this.reads.listen(notifier);
  }

  /** Drops what this process knows of these principals (called after a commit that changed them). */
  changed(principalIds: Iterable<string>): void {
    for (const id of principalIds) this.reads.invalidate(id);
  }

  async busy(principalId: string, window: Interval, opts: BusyOptions = {}): Promise<BusyAnswer> {
    const nowMs = this.clock.nowMs();
    const mode = opts.livemode === false ? 'test' : 'live';
    const cached = this.reads.get(principalId);
    let entry = cached?.[mode];
    if (entry !== undefined && nowMs - entry.at >= TTL_MS) entry = undefined;
    if (entry === undefined || window.start < entry.whole.start) {
      const from = Math.min(nowMs - KEEP_PAST_MS, window.start);
      const generation = this.reads.generation;
      const intervals = await readOccupancy(this.db, principalId, from, mode === 'live');
      const fresh: ModeEntry = {
        whole: { intervals, start: from, end: Number.POSITIVE_INFINITY },
        clipped: [],
        at: nowMs,
      };
      // Only the usual shape (from a week back) is kept; a read reaching further back is answered once.
      // The other mode's list, if known, stays beside it (a change since drops the whole entry and
      // makes `store` refuse).
      if (from === nowMs - KEEP_PAST_MS || entry === undefined)
        this.reads.store(generation, [[principalId, { ...cached, [mode]: fresh }]]);
      entry = fresh;
    }
    const whole = entry.whole;
    if (opts.unclipped === true) return { intervals: whole.intervals, whole, stale: false, asOf: nowMs };
    for (const c of entry.clipped) if (c.start === window.start && c.end === window.end) return c.answer;
    const inside = clip(whole.intervals, window);
    const answer: BusyAnswer = {
      intervals: inside.length === 0 ? EMPTY : inside,
      whole,
      stale: false,
      asOf: nowMs,
    };
    if (entry.clipped.length >= CLIPPED_PER_PRINCIPAL) entry.clipped.shift();
    entry.clipped.push({ start: window.start, end: window.end, answer });
    return answer;
  }
}

/** A principal's occupancy ending after `fromMs`, normalized: live only, or (test mode) live and test. */
async function readOccupancy(
  db: Db,
  principalId: string,
  fromMs: number,
  liveOnly: boolean,
): Promise<readonly Interval[]> {
  const rows = await occupancyAfter(db, principalId, new Date(fromMs), liveOnly);
  if (rows.length === 0) return EMPTY;
  return normalize(rows.map((r) => ({ start: r.s.getTime(), end: r.e.getTime() })));
}
