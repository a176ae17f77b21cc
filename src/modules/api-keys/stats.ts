import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import { WINDOW_MS } from '../../platform/rate-limit.js';
import type { UsageRecorder } from '../../platform/usage.js';
import { findUsageBucket, sumUsage } from './repo.js';

const WINDOWS = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 } as const;

export class ApiKeyStatsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly usage: UsageRecorder,
  ) {}

  /** Sums the hourly usage buckets that fall in the window (bucket granularity: one hour). */
  async stats(keyId: string, limit: number, window: keyof typeof WINDOWS) {
    await this.usage.flush();
    const now = this.clock.nowMs();
    const end = new Date(now);
    const start = new Date(Math.floor((now - WINDOWS[window]) / WINDOW_MS) * WINDOW_MS + WINDOW_MS);
    const row = await sumUsage(this.db, keyId, start);
    // Spent in the current rate-limit window: the current hourly bucket, minus the refused requests.
    const current = await findUsageBucket(this.db, keyId, new Date(Math.floor(now / WINDOW_MS) * WINDOW_MS));
    return {
      key_id: keyId,
      window,
      window_start: start.toISOString(),
      window_end: end.toISOString(),
      requests: row.requests,
      rate_limited: row.rate_limited,
      by_status: { '2xx': row.s2xx, '4xx': row.s4xx, '5xx': row.s5xx },
      last_used_at: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
      rate_limit_per_hour: limit,
      remaining: Math.max(0, limit - ((current?.requests ?? 0) - (current?.rate_limited ?? 0))),
    };
  }
}
