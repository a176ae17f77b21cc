import { sql } from 'kysely';
import { purgeInBatches } from '../db/purge.js';
import type { Db } from '../db/store.js';
import type { Clock } from './clock.js';

export const WINDOW_MS = 3_600_000;

export interface Decision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Start of the next window (ms). */
  resetAt: number;
}

interface SubjectState {
  windowStart: number;
  limit: number;
  /** Tokens this process holds and may spend without asking the database. */
  lease: number;
  /** Tokens granted to all processes in this window, as of our last lease. */
  consumed: number;
  exhausted: boolean;
  pending: Promise<void> | null;
}

/**
 * Fixed hourly windows shared by every process through PostgreSQL, without a database write per
 * request. Each process leases a batch of tokens from the window's row (`rate_limit_windows`) in one
 * atomic UPDATE that never grants past the limit, then spends them from memory. A lease is at most
 * 1/16 of what is left (and at most 100), so near the limit leases shrink to one token and the limit
 * is exact; the only slack is that tokens leased by a process and not yet spent are not available to
 * the others (at most remaining/16 per process). The total granted never exceeds the limit.
 */
export class RateLimiter {
  private readonly state = new Map<string, SubjectState>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** The decision without waiting, when this process holds a lease (or knows the window is spent); else null. */
  takeCached(subject: string, limit: number): Decision | null {
    const s = this.state.get(subject);
    if (!s || s.limit !== limit) return null;
    const windowStart = Math.floor(this.clock.nowMs() / WINDOW_MS) * WINDOW_MS;
    if (s.windowStart !== windowStart) return null;
    const resetAt = windowStart + WINDOW_MS;
    if (s.lease > 0) {
      s.lease--;
      return { allowed: true, limit, remaining: Math.max(0, limit - s.consumed + s.lease), resetAt };
    }
    if (s.exhausted) return { allowed: false, limit, remaining: 0, resetAt };
    return null;
  }

  async take(subject: string, limit: number): Promise<Decision> {
    for (;;) {
      const decision = this.takeCached(subject, limit);
      if (decision !== null) return decision;
      const s = this.current(subject, limit);
      if (!s.pending) {
        s.pending = this.lease(subject, s).finally(() => {
          s.pending = null;
        });
      }
      await s.pending;
    }
  }

  /** This process's state for the subject in the current window, created when missing or outdated. */
  private current(subject: string, limit: number): SubjectState {
    const windowStart = Math.floor(this.clock.nowMs() / WINDOW_MS) * WINDOW_MS;
    let s = this.state.get(subject);
    if (!s || s.windowStart !== windowStart || s.limit !== limit) {
      s = { windowStart, limit, lease: 0, consumed: 0, exhausted: false, pending: null };
      this.state.set(subject, s);
      if (this.state.size > 50_000) this.evict(windowStart);
    }
    return s;
  }

  private async lease(subject: string, s: SubjectState): Promise<void> {
    const want = Math.max(1, Math.min(100, Math.floor((s.limit - s.consumed) / 16)));
    const windowStart = new Date(s.windowStart);
    for (let attempt = 0; attempt < 3; attempt++) {
      const { rows } = await sql<{ consumed: number; granted: number }>`
        WITH ins AS (
          INSERT INTO rate_limit_windows (subject, window_start, consumed, last_grant)
          VALUES (${subject}, ${windowStart}, LEAST(${want}::int, ${s.limit}::int), LEAST(${want}::int, ${s.limit}::int))
          ON CONFLICT (subject, window_start) DO NOTHING
          RETURNING consumed, last_grant AS granted
        ), upd AS (
          UPDATE rate_limit_windows t
          SET consumed = t.consumed + LEAST(${want}::int, GREATEST(0, ${s.limit}::int - t.consumed)),
              last_grant = LEAST(${want}::int, GREATEST(0, ${s.limit}::int - t.consumed))
          WHERE t.subject = ${subject} AND t.window_start = ${windowStart} AND NOT EXISTS (SELECT 1 FROM ins)
          RETURNING t.consumed, t.last_grant AS granted
        )
        SELECT consumed, granted FROM ins UNION ALL SELECT consumed, granted FROM upd
      `.execute(this.db);
      const row = rows[0];
      if (!row) continue; // the row was inserted concurrently after our snapshot: ask again
      s.consumed = row.consumed;
      s.lease += row.granted;
      if (row.granted === 0) s.exhausted = true;
      return;
    }
    throw new Error('rate limit lease failed');
  }

  private evict(currentWindow: number): void {
    for (const [k, v] of this.state) if (v.windowStart < currentWindow) this.state.delete(k);
  }

  /** Deletes windows that ended more than an hour ago, in bounded batches (src/db/purge.ts). Run periodically. */
  static async cleanup(db: Db, clock: Clock): Promise<number> {
    const before = new Date(clock.nowMs() - 2 * WINDOW_MS);
    return purgeInBatches(db, 'rate_limit_windows', sql<boolean>`window_start < ${before}`);
  }
}
