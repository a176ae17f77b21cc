/** Table types of the webhooks module (migration 0002_webhooks), merged into the database type. */
import type { Generated } from 'kysely';
import type { Json, Timestamp } from '../../db/types.js';

export interface WebhooksTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  id: string;
  account_id: string;
  /** Who created the subscription: the account itself (API key) or a user (session). */
  principal_id: string;
  url: string;
  events: string[];
  description: string;
  active: boolean;
  /** AES-256-GCM envelope of the current secret. */
  secret_enc: string;
  /** The secret before the last rotation; still signs until previous_secret_expires_at. */
  previous_secret_enc: string | null;
  previous_secret_expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EventsTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  id: string;
  account_id: string;
  /** The one principal the event is for (the organiser of a resolved proposal), or null. */
  principal_id: string | null;
  type: string;
  data: Json<Record<string, unknown>>;
  /** The envelope serialised once; every attempt of every delivery sends exactly these bytes. */
  envelope: string;
  created_at: Timestamp;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  /** Attempts made and recorded. */
  attempt_count: number;
  next_attempt_at: Timestamp | null;
  /** Token of the one attempt job the delivery expects; stale jobs carry another one and do nothing. */
  pending_job: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  number: number;
  manual: boolean;
  at: Timestamp;
  response_status: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
}

declare module '../../db/types.js' {
  interface DB {
    webhooks: WebhooksTable;
    events: EventsTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_attempts: WebhookAttemptsTable;
  }
}
