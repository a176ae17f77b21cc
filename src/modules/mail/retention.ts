/**
 * Retention of the mail outbox (docs/operations.md, Retention): mails that are no longer pending
 * (sent, logged, failed, skipped) go once older than KAIROS_MAIL_RETENTION_DAYS. A pending mail is
 * never purged: its send job still needs it.
 */
import { sql } from 'kysely';
import { purgeEveryMs, purgeInBatches } from '../../db/purge.js';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import type { ScheduleContribution } from '../module.js';

export async function purgeMail(db: Db, clock: Clock, retentionMs: number): Promise<number> {
  const before = new Date(clock.nowMs() - retentionMs);
  return purgeInBatches(db, 'mail_outbox', sql<boolean>`created_at < ${before} AND status <> 'pending'`);
}

export function mailRetentionSchedule(db: Db, clock: Clock, retentionMs: number): ScheduleContribution {
  return {
    name: 'mail-retention',
    everyMs: purgeEveryMs(retentionMs),
    run: () => purgeMail(db, clock, retentionMs),
  };
}
