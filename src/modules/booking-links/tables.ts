/** Table types of the bookingLinks module (migration 0007_booking_links), merged into the database type. */
import type { ColumnType, Generated } from 'kysely';
import type { Json, Timestamp } from '../../db/types.js';
import type { Assignment, LinkQuestion, LinkRecurrence } from './api.js';

export interface BookingLinksTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  id: string;
  account_id: string;
  /** Unique among live links (partial unique index booking_links_slug_live_idx). */
  slug: string;
  title: string;
  description: string;
  /** Distinct, sorted ascending. */
  durations: number[];
  /** One of `durations`. */
  default_duration: number;
  host_ids: string[];
  assignment: Assignment;
  questions: Json<LinkQuestion[]>;
  /** Minor units; null with price_currency null: free. */
  price_amount: number | null;
  price_currency: string | null;
  minimum_notice_minutes: number | null;
  max_days_ahead: number | null;
  active: boolean;
  /** Recurrence the public surface allows (migration 0026): `{frequencies, max_count}`, or null. */
  recurrence: ColumnType<LinkRecurrence | null, string | null | undefined, string | null>;
  /** A seated link's seats per slot (migration 0026), else null. */
  seat_capacity: Generated<number | null>;
  /** Whether the public slots show `seats_remaining`. */
  seats_show_remaining: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

declare module '../../db/types.js' {
  interface DB {
    booking_links: BookingLinksTable;
  }
}
