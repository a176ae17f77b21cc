/**
 * Retention of handled Stripe event ids (docs/operations.md, Retention). An id is what makes a Stripe
 * event take effect once; Stripe stops retrying an event after three days, so ids older than
 * KAIROS_STRIPE_EVENT_RETENTION_DAYS (default 30) guard against nothing and go.
 */
import { purgeEveryMs } from '../../db/purge.js';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import type { ScheduleContribution } from '../module.js';
import { purgeEventIds } from './repo.js';

export async function purgeStripeEvents(db: Db, clock: Clock, retentionMs: number): Promise<number> {
  const before = new Date(clock.nowMs() - retentionMs);
  return purgeEventIds(db, before);
}

export function stripeEventRetentionSchedule(
  db: Db,
  clock: Clock,
  retentionMs: number,
): ScheduleContribution {
  return {
    name: 'stripe-event-retention',
    everyMs: purgeEveryMs(retentionMs),
    run: () => purgeStripeEvents(db, clock, retentionMs),
  };
}
