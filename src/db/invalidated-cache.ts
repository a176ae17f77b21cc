/**
 * An in-process cache whose entries other processes can drop: every change to what an entry holds is
 * announced with NOTIFY on the cache's channel (payload: the entry's key), in the writing transaction,
 * so every process drops the entry at commit. While the LISTEN connection is lost nothing is served or
 * stored (notifications sent meanwhile are lost); the cache starts again empty when it is back; entries live at most `ttlMs` as a safety net,
 * and until `listen` has run nothing is cached (there would be no way to hear of changes).
 *
 * Used for principal profiles (principals module) and calendar busy-time reads (calendars module).
 */
import type { Notifier } from './notify.js';

/** The time source the cache is given (the platform's clock, so tests can move time); src/db imports no platform. */
export interface CacheClock {
  nowMs(): number;
}

export interface InvalidatedCacheOptions {
  /** NOTIFY channel whose payloads are keys to drop. */
  channel: string;
  /** Longest an entry is served (default one minute). */
  ttlMs?: number;
  /** The cache is emptied when it would grow past this many entries (default 100,000). */
  maxEntries?: number;
}

export class InvalidatedCache<T> {
  private readonly entries = new Map<string, { value: T; at: number }>();
  private active = false;
  /** Bumped by every invalidation; a read that overlapped one does not store its (maybe older) rows. */
  private gen = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly clock: CacheClock,
    private readonly opts: InvalidatedCacheOptions,
  ) {
    this.ttlMs = opts.ttlMs ?? 60_000;
    this.maxEntries = opts.maxEntries ?? 100_000;
  }

  async listen(notifier: Notifier): Promise<void> {
    if (this.active) return;
    await notifier.listen(this.opts.channel, (key) => this.invalidate(key));
    notifier.onLiveness((live) => {
      this.clear();
      this.active = live;
    });
    this.active = true;
  }

  /** The generation to pass to `store` for a read that starts now. */
  get generation(): number {
    return this.gen;
  }

  get(key: string): T | undefined {
    if (!this.active) return undefined;
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    if (this.clock.nowMs() - hit.at < this.ttlMs) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Stores values read since `generation`, unless an invalidation came in meanwhile. */
  store(generation: number, values: Iterable<[string, T]>): void {
    if (!this.active || generation !== this.gen) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const at = this.clock.nowMs();
    for (const [key, value] of values) this.entries.set(key, { value, at });
  }

  invalidate(key: string): void {
    this.gen++;
    this.entries.delete(key);
  }

  clear(): void {
    this.gen++;
    this.entries.clear();
  }
}
