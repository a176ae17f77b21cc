/**
 * Out-of-office ranges as busy time (docs/api.md#out-of-office): the `out_of_office` busy source
 * availability reads. Each principal's ranges (ending after a week ago) are read once and kept in
 * memory until a change is announced on `kairos_ooo_busy` — by the trigger of migration 0027 in every
 * process (after commit), and by the writing process itself right after its commit, before it answers.
 * Answers are the same arrays while nothing changes, so availability can remember what it computed
 * from them. A principal without ranges is `null` (this source knows nothing of it), which leaves the
 * calendar source's whole list alone for availability's remembered days.
 *
 * Per mode (docs/api.md#test-mode): live mode sees live ranges only; test mode sees live and test ranges.
 */
import { InvalidatedCache } from '../../db/invalidated-cache.js';
import type { Notifier } from '../../db/notify.js';
import type { Db } from '../../db/store.js';
import { clip, type Interval, normalize } from '../../lib/intervals.js';
import { DAY } from '../../lib/time.js';
import type { Clock } from '../../platform/clock.js';
import type { BusyAnswer, BusyOptions, BusySource, WholeBusy } from '../availability/api.js';
import { rangesAfter } from './repo.js';

export const OOO_BUSY_CHANNEL = 'kairos_ooo_busy';
/** Ranges that ended longer ago than this are not kept in memory (older windows are read directly). */
const KEEP_PAST_MS = 7 * DAY;
const TTL_MS = 5 * 60_000;
const EMPTY: readonly Interval[] = Object.freeze([]);

/** One mode's ranges of a principal ending after `from`: null when it has none. */
interface ModeEntry {
  from: number;
  whole: WholeBusy | null;
  at: number;
}

interface Entry {
  live?: ModeEntry;
  test?: ModeEntry;
}

export class OutOfOfficeBusySource implements BusySource {
  readonly name = 'out_of_office' as const;
  private readonly reads: InvalidatedCache<Entry>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.reads = new InvalidatedCache(clock, { channel: OOO_BUSY_CHANNEL, ttlMs: TTL_MS });
  }

  listen(notifier: Notifier): Promise<void> {
    return this.reads.listen(notifier);
  }

  /** Drops what this process knows of this principal (called after a commit that changed it). */
  changed(principalId: string): void {
    this.reads.invalidate(principalId);
  }

  async busy(principalId: string, window: Interval, opts: BusyOptions = {}): Promise<BusyAnswer | null> {
    const nowMs = this.clock.nowMs();
    const mode = opts.livemode === false ? 'test' : 'live';
    const cached = this.reads.get(principalId);
    let entry = cached?.[mode];
    if (entry !== undefined && nowMs - entry.at >= TTL_MS) entry = undefined;
    if (entry === undefined || window.start < entry.from) {
      const from = Math.min(nowMs - KEEP_PAST_MS, window.start);
      const generation = this.reads.generation;
      const rows = await rangesAfter(this.db, principalId, new Date(from), mode === 'live');
      const intervals = normalize(
        rows.map((r) => ({ start: r.start_time.getTime(), end: r.end_time.getTime() })),
      );
      const fresh: ModeEntry = {
        from,
        whole: intervals.length === 0 ? null : { intervals, start: from, end: Number.POSITIVE_INFINITY },
        at: nowMs,
      };
      // Only the usual shape (from a week back) is kept; a read reaching further back is answered once.
      if (from === nowMs - KEEP_PAST_MS || entry === undefined)
        this.reads.store(generation, [[principalId, { ...cached, [mode]: fresh }]]);
      entry = fresh;
    }
    const whole = entry.whole;
    // No ranges ending after `from`, which is at or before the window's start: none in the window.
    if (whole === null) return null;
    if (opts.unclipped === true) return { intervals: whole.intervals, whole, stale: false, asOf: nowMs };
    const inside = clip(whole.intervals, window);
    return { intervals: inside.length === 0 ? EMPTY : inside, whole, stale: false, asOf: nowMs };
  }
}
