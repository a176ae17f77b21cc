/**
 * Retention of per-key usage counters (docs/operations.md, Retention): hourly buckets older than
 * KAIROS_USAGE_RETENTION_DAYS go (`GET /v1/api-keys/{id}/stats` reads at most a week back).
 */
import { sql } from 'kysely';
import { purgeEveryMs, purgeInBatches } from '../../db/purge.js';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import type { ScheduleContribution } from '../module.js';

export async function purgeUsage(db: Db, clock: Clock, retentionMs: number): Promise<number> {
  const before = new Date(clock.nowMs() - retentionMs);
  return purgeInBatches(db, 'api_key_usage', sql<boolean>`bucket < ${before}`);
}

export function usageRetentionSchedule(db: Db, clock: Clock, retentionMs: number): ScheduleContribution {
  return {
    name: 'api-key-usage-retention',
    everyMs: purgeEveryMs(retentionMs),
    run: () => purgeUsage(db, clock, retentionMs),
  };
}
