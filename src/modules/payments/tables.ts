/** Table types of the payments module (migration 0010_payments), merged into the database type. */
import type { Timestamp } from '../../db/types.js';

/** Every Stripe event handled, by id: the record that makes each one take effect once. */
export interface StripeEventsTable {
  id: string;
  type: string;
  /** The connected account a Connect event is about, or null. */
  stripe_account: string | null;
  received_at: Timestamp;
}

/** An account's Stripe Connect (Express) account. */
export interface StripeAccountsTable {
  account_id: string;
  stripe_account_id: string;
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    stripe_events: StripeEventsTable;
    stripe_accounts: StripeAccountsTable;
  }
}
