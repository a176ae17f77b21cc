/**
 * Retention of the mail outbox (docs/operations.md, Retention): mails that are no longer pending
 * (sent, logged, failed, skipped) go once older than KAIROS_MAIL_RETENTION_DAYS. A pending mail is
 * never purged: its send job still needs it.
 */
import { purgeEveryMs } from '../../db/purge.js';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import type { ScheduleContribution } from '../module.js';
import { purgeFinishedMail } from './repo.js';

export async function purgeMail(db: Db, clock: Clock, retentionMs: number): Promise<number> {
  const before = new Date(clock.nowMs() - retentionMs);
  return purgeFinishedMail(db, before);
}

export function mailRetentionSchedule(db: Db, clock: Clock, retentionMs: number): ScheduleContribution {
  return {
    name: 'mail-retention',
    everyMs: purgeEveryMs(retentionMs),
    run: () => purgeMail(db, clock, retentionMs),
  };
}
