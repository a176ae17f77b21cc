/**
 * The calendar busy source: connected calendars' busy time, served from a per-connection cache.
 *
 * ## Freshness bound (for the README)
 * Each connection's provider answer is cached as one unit covering a rolling window (yesterday 00:00
 * UTC to 64 days after today 00:00 UTC), for exactly the calendars selected when it was fetched.
 * - An answer with `stale: false` reflects the provider as it was at most
 *   `KAIROS_BUSY_CACHE_TTL_SECONDS` (default 300 s) before the request (`asOf` says when). A cache
 *   entry older than that is never served as fresh: the read fetches from the provider first.
 * - Reads rarely wait for that: a background sweep (every min(60 s, TTL/2)) re-fetches every connection
 *   that was read in the last 24 hours once its entry is older than TTL/2. A read waits on a provider
 *   only when the cache is cold (first read, a new selection, a window outside the rolling one, a
 *   connection idle for a day) or the background fell behind.
 * - When the provider fails (error, 429, timeout, revoked access), the last known busy time is served
 *   with `stale: true` for at most 24 hours after it was fetched (`asOf` says when; availability
 *   answers show it as `busy_as_of`); with nothing known (or only older data) the read fails with 503
 *   `service-unavailable` naming the principal, connection and provider — never "all free". After a
 *   failure the provider is not called again before its Retry-After (429) or a backoff (15 s doubling
 *   to 15 min), so a failing provider does not slow reads down.
 * - Calendar changes made at the provider become visible within the TTL (plus the provider's own
 *   propagation delay); `POST /v1/calendars/sync` fetches at once.
 * - Each process keeps what it read from the database (connections, selection, the cache rows) in
 *   memory (`reads`), so a warm read costs no query. Every write a read depends on sends NOTIFY
 *   kairos_busy from a trigger (migration 0005_calendar_busy_notify) and drops the copy in every
 *   process at commit; freshness is still judged per read from `fetched_at` and the clock, so the
 *   bounds above hold in every process.
 */
import { InvalidatedCache } from '../../db/invalidated-cache.js';
import type { Notifier } from '../../db/notify.js';
import type { Db, Tx } from '../../db/store.js';
import { enqueue, enqueueMany, type Job } from '../../jobs/runner.js';
import type { JobContribution, ScheduleContribution } from '../module.js';
import type { BusyAnswer, BusyOptions, BusySource, Interval, TitledInterval } from '../availability/api.js';
import { clip, normalize, normalizedCopy, union } from '../../lib/intervals.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import { CalendarReadError, ConnectionLost, type ProviderGateway } from './gateway.js';
import { OAuthError, ProviderError } from './providers/index.js';
import {
  type BusyReadRow,
  busyReadRows,
  calendarsOfConnection,
  claimDueForRefresh,
  connectionsOf,
  clearRefreshQueued,
  type ConnectionRow,
  deleteOldFlows,
  findConnection,
  recordSyncFailure,
  recordSyncSuccess,
  setCalendarErrors,
  touchConnection,
  writeCache,
} from './repo.js';
import { DAY } from '../../lib/time.js';

export const REFRESH_QUEUE = 'calendar-busy-refresh';
/** NOTIFY channel of changes to principals' busy reads (migration 0005_calendar_busy_notify). */
export const BUSY_CHANNEL = 'kairos_busy';
/** Stale busy time is served at most this long after it was fetched; then 503. */
export const MAX_STALE_MS = DAY;
/** Connections read within this period are kept warm by the background refresh. */
export const HOT_MS = DAY;
/** `last_used_at` is written at most this often per connection. */
const TOUCH_MS = 10 * 60_000;
/** Backoff after a failure without Retry-After: 15 s, doubling, at most 15 minutes. */
const BACKOFF_BASE_MS = 15_000;
const BACKOFF_MAX_MS = 15 * 60_000;
/** A queued background refresh blocks queuing another for this long. */
const QUEUED_MS = 2 * 60_000;

export interface BusyCacheOptions {
  ttlMs: number;
}

export interface SyncOutcome {
  connection_id: string;
  intervals: Interval[];
  fetched_at: number;
}

/** The rolling window one cache entry covers: yesterday 00:00 UTC to 64 days after today 00:00 UTC. */
export function cacheWindow(nowMs: number): Interval {
  const day = Math.floor(nowMs / DAY) * DAY;
  return { start: day - DAY, end: day + 64 * DAY };
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

/** A connection as busy reads need it, kept in memory between reads (see `reads`). */
interface PreparedRow
  extends Pick<BusyReadRow, 'id' | 'provider' | 'status' | 'status_reason' | 'last_error'> {
  /** When the connection was last marked used (this process updates it as it writes). */
  lastUsedAt: number;
  /** Epoch ms before which the provider is left alone; 0 for none. */
  retryAt: number;
  /** Whether any calendar of the connection is selected for busy checking. */
  anySelected: boolean;
  /** The cached answer, only when it was fetched for exactly the calendars selected now. */
  cache: CachedAnswer | null;
}

interface CachedAnswer {
  start: number;
  end: number;
  fetchedAt: number;
  busy: BusyData;
}

/**
 * A connection's cached busy intervals and the last few windows asked of them, with their clipped
 * intervals, handed out again for the same window. Kept across re-reads and refreshes while the
 * intervals stay the same, so that answers remembered by availability (by the identity of these
 * arrays) stay valid until the busy time really changes.
 */
interface BusyData {
  intervals: Interval[];
  clipped: { start: number; end: number; intervals: readonly Interval[] }[];
}

const CLIPPED_WINDOWS = 4;
const MAX_KNOWN_CONNECTIONS = 100_000;

/** `cache.busy.intervals` inside `window`: the same array for a window asked recently. */
function clipCached(cache: CachedAnswer, window: Interval): readonly Interval[] {
  const data = cache.busy;
  for (const c of data.clipped) {
    if (c.start === window.start && c.end === window.end) return c.intervals;
  }
  const intervals = clip(data.intervals, window);
  if (data.clipped.length >= CLIPPED_WINDOWS) data.clipped.shift();
  data.clipped.push({ start: window.start, end: window.end, intervals });
  return intervals;
}

/** Whether normalized `a` holds exactly the intervals of `tuples`. */
function sameIntervals(a: readonly Interval[], tuples: readonly [number, number][]): boolean {
  if (a.length !== tuples.length) return false;
  for (let i = 0; i < a.length; i++) {
    const t = tuples[i]!;
    if (a[i]!.start !== t[0] || a[i]!.end !== t[1]) return false;
  }
  return true;
}

/**
 * The 503 of a connection that failed with no usable busy time cached (docs/api.md#availability):
 * `code`, and which calendar failed — the principal, the connection (`conn_…`, as GET /v1/calendars
 * lists it) and its provider.
 */
function unavailable(
  principalId: string,
  row: Pick<PreparedRow, 'id' | 'provider'>,
  detail: string,
  code: 'calendar_unavailable' | 'calendar_disconnected',
  retryAfterSeconds: number,
): AppError {
  return new AppError(
    503,
    'service-unavailable',
    detail,
    { code, principal_id: principalId, connection_id: row.id, provider: row.provider },
    { 'retry-after': String(retryAfterSeconds) },
  );
}

function describe(err: unknown): string {
  if (err instanceof ProviderError) return `${err.code}: ${err.message}`;
  if (err instanceof OAuthError) return `token_${err.code}: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

export class CalendarBusySource implements BusySource {
  readonly name = 'calendar' as const;
  private readonly inflight = new Map<string, Promise<SyncOutcome>>();
  /** Each principal's connections and cached busy time, as last read from the database. */
  private readonly reads: InvalidatedCache<PreparedRow[]>;
  /** Busy data by connection, reused by re-reads while unchanged (see BusyData). */
  private readonly known = new Map<string, BusyData>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly gateway: ProviderGateway,
    private readonly opts: BusyCacheOptions,
    private readonly log: { error(obj: object, msg: string): void },
    /** The principal's time zone now: floating and all-day events (CalDAV, ICS) are read in it. */
    private readonly zoneOf: (principalId: string) => Promise<string>,
  ) {
    this.reads = new InvalidatedCache(clock, { channel: BUSY_CHANNEL });
  }

  /**
   * Every busy occurrence of the principal's selected calendars in `window` with its event's title,
   * read from the providers now (for readers allowed to see details; titles are never cached). A
   * connection that cannot be read is left out: busy time itself still comes from the cache, so the
   * blocks stay right and only some titles are missing.
   */
  async titles(principalId: string, window: Interval): Promise<readonly TitledInterval[]> {
    const conns = (await connectionsOf(this.db, principalId)).filter((c) => c.status === 'connected');
    if (conns.length === 0) return [];
    const zone = await this.zoneOf(principalId);
    const found = await Promise.all(
      conns.map(async (conn) => {
        const selected = (await calendarsOfConnection(this.db, conn.id)).filter((c) => c.selected);
        try {
          const r = await this.gateway.busy({ ...conn, time_zone: zone }, selected, window, {
            withTitles: true,
          });
          return r.events ?? [];
        } catch (err) {
          this.log.error({ err, connection: conn.id }, 'reading event titles failed');
          return [];
        }
      }),
    );
    return found.flat().sort((a, b) => a.start - b.start || a.end - b.end);
  }

  /** Background work: the refresh queue, the sweep that feeds it, and cleanup of old OAuth flows. */
  work(): { jobs: JobContribution[]; schedules: ScheduleContribution[] } {
    const sweepMs = Math.max(1000, Math.min(60_000, Math.floor(this.opts.ttlMs / 2)));
    return {
      jobs: [
        {
          queue: REFRESH_QUEUE,
          handler: async (job: Job<{ connection_id: string }>) => {
            try {
              await this.refresh(job.payload.connection_id);
            } catch (err) {
              if (!isProviderFailure(err)) this.log.error({ err }, 'calendar busy refresh failed');
            } finally {
              await clearRefreshQueued(this.db, job.payload.connection_id);
            }
          },
          options: { concurrency: 4, leaseMs: 60_000 },
        },
      ],
      schedules: [
        { name: 'calendar-busy-sweep', everyMs: sweepMs, run: () => this.sweep() },
        {
          name: 'calendar-oauth-flow-cleanup',
          everyMs: 3_600_000,
          run: () => deleteOldFlows(this.db, new Date(this.clock.nowMs() - DAY)),
        },
      ],
    };
  }

  /** Queues a background refresh of every hot connection whose cache is past half its TTL. */
  async sweep(): Promise<number> {
    const now = this.clock.now();
    const ms = now.getTime();
    return this.db.transaction().execute(async (trx) => {
      const ids = await claimDueForRefresh(
        trx,
        now,
        new Date(ms - this.opts.ttlMs / 2),
        new Date(ms - HOT_MS),
        new Date(ms + QUEUED_MS),
        500,
      );
      await enqueueMany(
        trx,
        REFRESH_QUEUE,
        ids.map((id) => ({ payload: { connection_id: id }, runAt: now })),
      );
      return ids.length;
    });
  }

  /** Queues one background refresh (after connecting, or a change of selection). */
  async queueRefresh(db: Db | Tx, connectionId: string): Promise<void> {
    await enqueue(db, REFRESH_QUEUE, { connection_id: connectionId }, this.clock.now());
  }

  private prepare(row: BusyReadRow): PreparedRow {
    const keys = [...row.selected_keys].sort();
    const c = row.cache;
    return {
      id: row.id,
      provider: row.provider,
      status: row.status,
      status_reason: row.status_reason,
      last_error: row.last_error,
      lastUsedAt: row.last_used_at.getTime(),
      retryAt: row.retry_at?.getTime() ?? 0,
      anySelected: keys.length > 0,
      cache:
        c !== null && sameKeys(c.busy.keys, keys)
          ? {
              start: c.window_start.getTime(),
              end: c.window_end.getTime(),
              fetchedAt: c.fetched_at.getTime(),
              busy: this.busyData(row.id, c.busy.intervals),
            }
          : null,
    };
  }

  /** The connection's BusyData: the one already known when its intervals are unchanged. */
  private busyData(connectionId: string, tuples: readonly [number, number][]): BusyData {
    const known = this.known.get(connectionId);
    if (known !== undefined && sameIntervals(known.intervals, tuples)) return known;
    const data: BusyData = {
      intervals: normalize(tuples.map(([start, end]) => ({ start, end }))),
      clipped: [],
    };
    if (this.known.size >= MAX_KNOWN_CONNECTIONS) this.known.clear();
    this.known.set(connectionId, data);
    return data;
  }

  /** Starts keeping principals' busy reads in memory, dropped through NOTIFY (see the top of this file). */
  listen(notifier: Notifier): Promise<void> {
    return this.reads.listen(notifier);
  }

  /**
   * The principals of `ids` with a connected writable (not ICS) connection, as this process's memory
   * holds their connections now; undefined when it does not hold them all (meetings.ts).
   */
  writableKnown(ids: readonly string[]): Set<string> | undefined {
    const writable = new Set<string>();
    for (const id of ids) {
      const rows = this.reads.get(id);
      if (rows === undefined) return undefined;
      if (rows.some((r) => r.provider !== 'ics' && r.status === 'connected')) writable.add(id);
    }
    return writable;
  }

  async busy(principalId: string, window: Interval, opts: BusyOptions = {}): Promise<BusyAnswer | null> {
    let rows = this.reads.get(principalId);
    if (rows === undefined) {
      const generation = this.reads.generation;
      rows = (await busyReadRows(this.db, principalId)).map((r) => this.prepare(r));
      this.reads.store(generation, [[principalId, rows]]);
    }
    if (rows.length === 0) return null;
    if (rows.length === 1) return this.answer(principalId, rows[0]!, window, opts.unclipped === true);
    // Several connections merge into a new list per request, never a whole one: merging whole lists
    // would only merge more, so each is cut to the window.
    const answers = await Promise.all(rows.map((r) => this.answer(principalId, r, window, false)));
    let intervals: readonly Interval[] = answers[0]!.intervals;
    let stale = false;
    let asOf = Number.POSITIVE_INFINITY;
    for (let i = 0; i < answers.length; i++) {
      const a = answers[i]!;
      if (i > 0) intervals = union(intervals, a.intervals);
      if (a.stale) stale = true;
      if (a.asOf < asOf) asOf = a.asOf;
    }
    return { intervals, stale, asOf };
  }

  private async answer(
    principalId: string,
    row: PreparedRow,
    window: Interval,
    unclipped: boolean,
  ): Promise<BusyAnswer> {
    const nowMs = this.clock.nowMs();
    if (row.status === 'connected' && nowMs - row.lastUsedAt >= TOUCH_MS) {
      row.lastUsedAt = nowMs; // before the write, so that concurrent reads do not repeat it
      await touchConnection(this.db, row.id, new Date(nowMs));
    }
    if (!row.anySelected) return { intervals: [], stale: false, asOf: nowMs };
    const cache = row.cache;
    const usable = cache !== null && cache.start <= window.start && cache.end >= window.end;
    const fetchedAt = cache ? cache.fetchedAt : 0;
    const fromCache = (stale: boolean): BusyAnswer =>
      cache
        ? {
            intervals: unclipped ? cache.busy.intervals : clipCached(cache, window),
            whole: { intervals: cache.busy.intervals, start: cache.start, end: cache.end },
            stale,
            asOf: fetchedAt,
          }
        : { intervals: [], stale, asOf: fetchedAt };
    if (usable && nowMs - fetchedAt < this.opts.ttlMs) return fromCache(false);
    const staleOk = usable && nowMs - fetchedAt <= MAX_STALE_MS;

    if (row.status === 'disconnected') {
      if (staleOk) return fromCache(true);
      throw unavailable(
        principalId,
        row,
        `The ${row.provider} calendar connection ${row.id} was disconnected (${row.status_reason ?? 'revoked'}) and ` +
          'no recent busy time is known; reconnect the calendar',
        'calendar_disconnected',
        300,
      );
    }
    const retryAt = row.retryAt;
    if (retryAt > nowMs) {
      if (staleOk) return fromCache(true);
      throw unavailable(
        principalId,
        row,
        `The ${row.provider} calendar connection ${row.id} could not be read (${row.last_error ?? 'provider error'}) ` +
          'and no busy time is cached; retry later',
        'calendar_unavailable',
        Math.max(1, Math.ceil((retryAt - nowMs) / 1000)),
      );
    }
    try {
      const fetched = await this.refresh(row.id, window);
      return { intervals: clip(fetched.intervals, window), stale: false, asOf: fetched.fetched_at };
    } catch (err) {
      if (staleOk) return fromCache(true);
      if (!isProviderFailure(err)) throw err;
      const lost = err instanceof ConnectionLost;
      throw unavailable(
        principalId,
        row,
        lost
          ? `The ${row.provider} calendar connection ${row.id} was disconnected (${err.reason}); reconnect the calendar`
          : `The ${row.provider} calendar connection ${row.id} could not be read (${describe(err)}) and no busy ` +
              'time is cached; retry later',
        lost ? 'calendar_disconnected' : 'calendar_unavailable',
        lost ? 300 : Math.max(1, Math.ceil(retryDelayMs(err, 0) / 1000)),
      );
    }
  }

  /**
   * Fetches the connection's busy time from its provider now and stores it (the rolling window; or
   * only `asked` when that lies outside it, without storing). One fetch per connection at a time in
   * this process; concurrent callers share it. Failures are recorded (backoff, disconnection) and
   * rethrown.
   */
  refresh(connectionId: string, asked?: Interval): Promise<SyncOutcome> {
    const nowMs = this.clock.nowMs();
    const rolling = cacheWindow(nowMs);
    const inside = !asked || (asked.start >= rolling.start && asked.end <= rolling.end);
    const window = inside ? rolling : asked;
    const key = inside ? connectionId : `${connectionId}:${window.start}:${window.end}`;
    let p = this.inflight.get(key);
    if (!p) {
      p = this.fetchAndStore(connectionId, window, inside).finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  private async fetchAndStore(connectionId: string, window: Interval, store: boolean): Promise<SyncOutcome> {
    const conn = await findConnection(this.db, connectionId);
    if (!conn) throw new ConnectionLost('deleted');
    const selected = (await calendarsOfConnection(this.db, connectionId)).filter((c) => c.selected);
    const keys = [...new Set(selected.map((c) => c.source_key))].sort();
    const zone = await this.zoneOf(conn.principal_id);
    const now = this.clock.now();
    try {
      const res = await this.gateway.busy({ ...conn, time_zone: zone }, selected, window);
      const intervals = normalizedCopy(res.intervals);
      if (store) {
        const tuples = intervals.map((i): [number, number] => [i.start, i.end]);
        await writeCache(this.db, connectionId, window, { keys, intervals: tuples }, now);
      }
      await recordSyncSuccess(this.db, connectionId, now);
      await setCalendarErrors(this.db, connectionId, res.warnings);
      return { connection_id: connectionId, intervals, fetched_at: now.getTime() };
    } catch (err) {
      await this.recordFailure(conn, err, now);
      throw err;
    } finally {
      // The NOTIFY of these writes drops the entry too, but only once it arrives; reads in between
      // would see the old cache and fetch again.
      this.reads.invalidate(conn.principal_id);
    }
  }

  /**
   * Drops this process's copy of a principal's connections and busy time, after a change to them
   * committed: the NOTIFY drops it in every process, but only once it arrives, and the request that
   * made the change must see it from its very next read.
   */
  forget(principalId: string): void {
    this.reads.invalidate(principalId);
  }

  private async recordFailure(conn: ConnectionRow, err: unknown, now: Date): Promise<void> {
    if (err instanceof ConnectionLost) return; // the gateway marked it disconnected
    if (err instanceof CalendarReadError) await setCalendarErrors(this.db, conn.id, err.errors);
    const retryAt = new Date(now.getTime() + retryDelayMs(err, conn.failure_count));
    await recordSyncFailure(this.db, conn.id, describe(err), now, retryAt);
  }
}

/** How long to leave a provider alone after `err`: its Retry-After, or exponential backoff. */
export function retryDelayMs(err: unknown, failuresBefore: number): number {
  const told = err instanceof ProviderError ? err.retryAfterMs : undefined;
  if (told !== undefined) return Math.min(3_600_000, Math.max(1000, told));
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(failuresBefore, 10));
}

/** Failures that come from the provider or the network (recorded, degraded to stale or 503). */
export function isProviderFailure(err: unknown): boolean {
  return (
    err instanceof ProviderError ||
    err instanceof OAuthError ||
    err instanceof ConnectionLost ||
    err instanceof CalendarReadError
  );
}
