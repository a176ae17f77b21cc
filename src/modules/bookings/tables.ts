/** Table types of the bookings module (migration 0008_bookings), merged into the database type. */
import type { ColumnType, Generated } from 'kysely';
import type { Json, Timestamp } from '../../db/types.js';

export type BookingStatus = 'pending_payment' | 'confirmed' | 'cancelled' | 'expired';
export type WaitlistStatus = 'waiting' | 'offered' | 'booked' | 'expired' | 'removed';

export interface BookingsTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  id: string;
  account_id: string;
  /** The host the booking is attributed to. */
  principal_id: string;
  /** Every principal it occupies (all hosts of a collective link). */
  host_ids: string[];
  booking_link_id: string | null;
  status: BookingStatus;
  start_time: Timestamp;
  end_time: Timestamp;
  customer_email: string;
  customer_name: string;
  customer_timezone: string | null;
  notes: string | null;
  answers: Json<Record<string, string | boolean>>;
  metadata: Json<Record<string, string>>;
  payment_amount: number | null;
  payment_currency: string | null;
  checkout_url: string | null;
  payment_expires_at: Timestamp | null;
  cancellation_reason: string | null;
  cancelled_at: Timestamp | null;
  /** SHA-256 (hex) of the attendee's self-service token; the token itself is never stored. */
  manage_token_hash: string;
  /** 128 random bits the manage token is made from (tokens.ts). */
  manage_nonce: string;
  /** The invite's SEQUENCE: rises with every change mailed to the attendees. */
  sequence: number;
  waitlist_entry_id: string | null;
  /** What it is called (migration 0013): the link's or proposal's title, or "Meeting with <hosts>". */
  title: Generated<string | null>;
  /** The accepted proposal that made it (migration 0012), else null. */
  proposal_id: Generated<string | null>;
  /** Paid bookings (migration 0010): the Checkout Session, the connected account charged (or null). */
  stripe_session_id: Generated<string | null>;
  stripe_account_id: Generated<string | null>;
  stripe_payment_intent: Generated<string | null>;
  paid_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** pending: a refund job is queued; succeeded: Stripe accepted it; failed: it gave up. */
  refund_status: Generated<RefundStatus | null>;
  refund_id: Generated<string | null>;
  refund_error: Generated<string | null>;
  /** The recurring series it is an occurrence of (migration 0026), else null. */
  series_id: Generated<string | null>;
  /** An occurrence: its start as the series' rule made it (the invite's RECURRENCE-ID), kept when moved. */
  occurrence_start: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The seated session it holds a seat in (migration 0026), else null. */
  seat_session_id: Generated<string | null>;
  /** Addresses invited beside the customer (migration 0028): mailed and on the invite; lowercase. */
  guests: Generated<string[]>;
  /** The parties marked as not having come (migration 0028): a set of `customer`, `host`. */
  no_show: Generated<NoShowParty[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type NoShowParty = 'customer' | 'host';

export type RecurrenceFrequency = 'daily' | 'weekly' | 'monthly';

/** A recurring series (migration 0026, docs/api.md#recurring-series): the rule its occurrences follow. */
export interface BookingSeriesTable {
  id: string;
  account_id: string;
  livemode: Generated<boolean>;
  /** The host the series is attributed to (its first occurrence's). */
  principal_id: string;
  booking_link_id: string | null;
  frequency: RecurrenceFrequency;
  interval: number;
  count: number;
  /** The zone whose wall-clock time the occurrences keep. */
  timezone: string;
  /** The series invite's SEQUENCE: rises with each change of any occurrence. */
  sequence: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/**
 * One slot of a seated link (migration 0026, docs/design.md#series-and-seats): it owns the hosts'
 * occupancy from its first seat to its last cancellation; `seats_taken` never exceeds `capacity`.
 */
export interface SeatSessionsTable {
  id: string;
  account_id: string;
  livemode: Generated<boolean>;
  booking_link_id: string;
  start_time: Timestamp;
  end_time: Timestamp;
  host_ids: string[];
  capacity: number;
  seats_taken: number;
  created_at: Timestamp;
}

export type RefundStatus = 'pending' | 'succeeded' | 'failed';

export interface BookingOccupancyTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  /** The booking (`booking_…`) or waitlist hold (`wl_…`) holding the time. */
  owner_id: string;
  principal_id: string;
  /** tstzrange text, e.g. `[2054-01-01 10:00:00+00,2054-01-01 10:30:00+00)`. */
  during: string;
}

export interface WaitlistEntriesTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  id: string;
  /** Order of arrival (identity; bigint arrives as a string). */
  seq: Generated<string>;
  account_id: string;
  booking_link_id: string;
  customer_email: string;
  customer_name: string;
  notes: string | null;
  preferred_from: Timestamp;
  preferred_to: Timestamp;
  status: WaitlistStatus;
  offer_start: Timestamp | null;
  offer_end: Timestamp | null;
  offer_host_ids: string[] | null;
  offer_principal_id: string | null;
  offer_expires_at: Timestamp | null;
  claim_token_hash: string | null;
  booking_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    bookings: BookingsTable;
    booking_occupancy: BookingOccupancyTable;
    waitlist_entries: WaitlistEntriesTable;
    booking_series: BookingSeriesTable;
    seat_sessions: SeatSessionsTable;
  }
}
