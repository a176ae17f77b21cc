/**
 * Retention of the webhooks module's rows (docs/operations.md, Retention): finished deliveries (and,
 * by cascade, their attempts) past the delivery retention, then events past the event retention that
 * no delivery refers to any more. A pending delivery is never purged, nor the event it sends.
 */
import { purgeEveryMs } from '../../db/purge.js';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import type { ScheduleContribution } from '../module.js';
import { purgeFinishedDeliveries, purgeUndeliveredEvents } from './repo.js';

export interface WebhookRetention {
  eventsMs: number;
  deliveriesMs: number;
}

/** Deletes what is past retention; answers how many deliveries and events went. */
export async function purgeWebhookRows(
  db: Db,
  clock: Clock,
  retention: WebhookRetention,
): Promise<{ deliveries: number; events: number }> {
  const nowMs = clock.nowMs();
  const deliveriesBefore = new Date(nowMs - retention.deliveriesMs);
  const eventsBefore = new Date(nowMs - retention.eventsMs);
  const deliveries = await purgeFinishedDeliveries(db, deliveriesBefore);
  const events = await purgeUndeliveredEvents(db, eventsBefore);
  return { deliveries, events };
}

export function webhookRetentionSchedule(
  db: Db,
  clock: Clock,
  retention: WebhookRetention,
): ScheduleContribution {
  return {
    name: 'webhook-retention',
    everyMs: purgeEveryMs(Math.min(retention.eventsMs, retention.deliveriesMs)),
    run: () => purgeWebhookRows(db, clock, retention),
  };
}
