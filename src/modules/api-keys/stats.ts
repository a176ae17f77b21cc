import { sql } from 'kysely';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import { WINDOW_MS } from '../../platform/rate-limit.js';
import type { UsageRecorder } from '../../platform/usage.js';

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
    const row = await this.db
      .selectFrom('api_key_usage')
      .select([
        sql<number>`coalesce(sum(requests), 0)::int`.as('requests'),
        sql<number>`coalesce(sum(rate_limited), 0)::int`.as('rate_limited'),
        sql<number>`coalesce(sum(s2xx), 0)::int`.as('s2xx'),
        sql<number>`coalesce(sum(s4xx), 0)::int`.as('s4xx'),
        sql<number>`coalesce(sum(s5xx), 0)::int`.as('s5xx'),
        sql<Date | null>`max(last_used_at)`.as('last_used_at'),
      ])
      .where('key_id', '=', keyId)
      .where('bucket', '>=', start)
      .executeTakeFirstOrThrow();
    // Spent in the current rate-limit window: the current hourly bucket, minus the refused requests.
    const current = await this.db
      .selectFrom('api_key_usage')
      .select(['requests', 'rate_limited'])
      .where('key_id', '=', keyId)
      .where('bucket', '=', new Date(Math.floor(now / WINDOW_MS) * WINDOW_MS))
      .executeTakeFirst();
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
