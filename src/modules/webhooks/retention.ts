/**
 * Retention of the webhooks module's rows (docs/operations.md, Retention): finished deliveries (and,
 * by cascade, their attempts) past the delivery retention, then events past the event retention that
 * no delivery refers to any more. A pending delivery is never purged, nor the event it sends.
 */
import { sql } from 'kysely';
import { purgeEveryMs, purgeInBatches } from '../../db/purge.js';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import type { ScheduleContribution } from '../module.js';

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
  const deliveries = await purgeInBatches(
    db,
    'webhook_deliveries',
    sql<boolean>`created_at < ${deliveriesBefore} AND status <> 'pending'`,
  );
  const events = await purgeInBatches(
    db,
    'events',
    sql<boolean>`created_at < ${eventsBefore}
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id)`,
  );
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
