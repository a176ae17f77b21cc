import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import { WINDOW_MS } from '../../platform/rate-limit.js';
import type { UsageRecorder } from '../../platform/usage.js';
import { usageBuckets } from './repo.js';

const WINDOWS = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 } as const;

export class ApiKeyStatsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly usage: UsageRecorder,
  ) {}

  /**
   * The key's usage in the window from its hourly buckets (granularity: one hour): the totals, and
   * one entry per hour of the window, oldest first, hours without requests included as zeros.
   */
  async stats(keyId: string, limit: number, window: keyof typeof WINDOWS) {
    await this.usage.flush();
    const now = this.clock.nowMs();
    const currentHour = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    const start = new Date(Math.floor((now - WINDOWS[window]) / WINDOW_MS) * WINDOW_MS + WINDOW_MS);
    const buckets = await usageBuckets(this.db, keyId, start);
    const byHour = new Map(buckets.map((b) => [new Date(b.bucket).getTime(), b]));
    const totals = { requests: 0, rate_limited: 0, s2xx: 0, s4xx: 0, s5xx: 0 };
    let lastUsed: number | null = null;
    for (const b of buckets) {
      totals.requests += b.requests;
      totals.rate_limited += b.rate_limited;
      totals.s2xx += b.s2xx;
      totals.s4xx += b.s4xx;
      totals.s5xx += b.s5xx;
      if (b.last_used_at) lastUsed = Math.max(lastUsed ?? 0, new Date(b.last_used_at).getTime());
    }
    const series = [];
    for (let hour = start.getTime(); hour <= currentHour; hour += WINDOW_MS) {
      const b = byHour.get(hour);
      series.push({
        start: new Date(hour).toISOString(),
        requests: b?.requests ?? 0,
        rate_limited: b?.rate_limited ?? 0,
      });
    }
    // Spent in the current rate-limit window: the current hourly bucket, minus the refused requests.
    const current = byHour.get(currentHour);
    return {
      key_id: keyId,
      window,
      window_start: start.toISOString(),
      window_end: new Date(now).toISOString(),
      requests: totals.requests,
      rate_limited: totals.rate_limited,
      by_status: { '2xx': totals.s2xx, '4xx': totals.s4xx, '5xx': totals.s5xx },
      last_used_at: lastUsed === null ? null : new Date(lastUsed).toISOString(),
      rate_limit_per_hour: limit,
      remaining: Math.max(0, limit - ((current?.requests ?? 0) - (current?.rate_limited ?? 0))),
      series,
    };
  }
}
