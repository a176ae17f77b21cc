/**
 * Retention of sign-in sessions (docs/operations.md, Retention): a session goes once it has been
 * expired or revoked for KAIROS_EXPIRED_RETENTION_DAYS (default one day). Its token is refused either
 * way: a session without a row is not active.
 */
import { purgeEveryMs } from '../../db/purge.js';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import type { ScheduleContribution } from '../module.js';
import { purgeEndedSessions } from './repo.js';

export async function purgeSessions(db: Db, clock: Clock, retentionMs: number): Promise<number> {
  const before = new Date(clock.nowMs() - retentionMs);
  return purgeEndedSessions(db, before);
}

export function sessionRetentionSchedule(db: Db, clock: Clock, retentionMs: number): ScheduleContribution {
  return {
    name: 'session-retention',
    everyMs: purgeEveryMs(retentionMs),
    run: () => purgeSessions(db, clock, retentionMs),
  };
}
