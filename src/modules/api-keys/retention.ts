/**
 * Retention of per-key usage counters (docs/operations.md, Retention): hourly buckets older than
 * KAIROS_USAGE_RETENTION_DAYS go (`GET /v1/api-keys/{id}/stats` reads at most a week back).
 */
import { purgeEveryMs } from '../../db/purge.js';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import type { ScheduleContribution } from '../module.js';
import { purgeUsageBefore } from './repo.js';

export async function purgeUsage(db: Db, clock: Clock, retentionMs: number): Promise<number> {
  const before = new Date(clock.nowMs() - retentionMs);
  return purgeUsageBefore(db, before);
}

export function usageRetentionSchedule(db: Db, clock: Clock, retentionMs: number): ScheduleContribution {
  return {
    name: 'api-key-usage-retention',
    everyMs: purgeEveryMs(retentionMs),
    run: () => purgeUsage(db, clock, retentionMs),
  };
}
