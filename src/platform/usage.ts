import { sql } from 'kysely';
import type { Db } from '../db/store.js';
import type { Clock } from './clock.js';
import { HOUR } from '../lib/time.js';

interface Counter {
  keyId: string;
  bucket: number;
  requests: number;
  rateLimited: number;
  s2xx: number;
  s4xx: number;
  s5xx: number;
  lastUsedAt: number;
}

/**
 * Per-key request counts for GET /v1/api-keys/{id}/stats, kept in hourly buckets. Counted in memory and
 * written in one batched upsert per second (never on the request path); stats flush first.
 */
export class UsageRecorder {
  /** Counters by hour, then key: a request builds no key string (the key id is its cached caller's). */
  private buffer = new Map<number, Map<string, Counter>>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  start(intervalMs = 1000): void {
    this.timer = setInterval(() => {
      this.flush().catch(this.onError);
    }, intervalMs);
    this.timer.unref();
  }

  record(keyId: string, status: number, rateLimited: boolean): void {
    const now = this.clock.nowMs();
    const bucket = Math.floor(now / HOUR) * HOUR;
    let hour = this.buffer.get(bucket);
    if (!hour) {
      hour = new Map();
      this.buffer.set(bucket, hour);
    }
    let c = hour.get(keyId);
    if (!c) {
      c = { keyId, bucket, requests: 0, rateLimited: 0, s2xx: 0, s4xx: 0, s5xx: 0, lastUsedAt: now };
      hour.set(keyId, c);
    }
    c.requests++;
    if (rateLimited) c.rateLimited++;
    if (status >= 500) c.s5xx++;
    else if (status >= 400) c.s4xx++;
    else if (status >= 200 && status < 300) c.s2xx++;
    c.lastUsedAt = now;
  }

  /** Writes what is buffered. Concurrent calls are serialised. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write()).catch((err) => this.onError(err));
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.buffer.size === 0) return;
    const rows = [...this.buffer.values()].flatMap((hour) => [...hour.values()]);
    this.buffer = new Map();
    await sql`
      INSERT INTO api_key_usage AS u (key_id, bucket, requests, rate_limited, s2xx, s4xx, s5xx, last_used_at)
      SELECT * FROM unnest(
        ${rows.map((r) => r.keyId)}::uuid[], ${rows.map((r) => new Date(r.bucket))}::timestamptz[],
        ${rows.map((r) => r.requests)}::int[], ${rows.map((r) => r.rateLimited)}::int[],
        ${rows.map((r) => r.s2xx)}::int[], ${rows.map((r) => r.s4xx)}::int[], ${rows.map((r) => r.s5xx)}::int[],
        ${rows.map((r) => new Date(r.lastUsedAt))}::timestamptz[])
      ON CONFLICT (key_id, bucket) DO UPDATE SET
        requests = u.requests + excluded.requests,
        rate_limited = u.rate_limited + excluded.rate_limited,
        s2xx = u.s2xx + excluded.s2xx, s4xx = u.s4xx + excluded.s4xx, s5xx = u.s5xx + excluded.s5xx,
        last_used_at = GREATEST(u.last_used_at, excluded.last_used_at)
    `.execute(this.db);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
