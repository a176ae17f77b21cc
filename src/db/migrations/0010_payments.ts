import { type Kysely, sql } from 'kysely';

/**
 * Payments (docs/design.md#paid-bookings).
 *
 * - `stripe_events`: the id of every Stripe event handled, inserted in the transaction that handles it,
 *   so each event takes effect once however often, in whatever order and in whichever process it
 *   arrives (a concurrent duplicate waits on the primary key and then finds it taken).
 * - `stripe_accounts`: an account's Stripe Connect (Express) account and its readiness.
 * - bookings gain what a paid booking needs: its Checkout Session, payment intent, the connected
 *   account charged, and the state of its refund.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE stripe_events (
      id text PRIMARY KEY,
      type text NOT NULL,
      stripe_account text,
      received_at timestamptz NOT NULL
    );

    CREATE TABLE stripe_accounts (
      account_id uuid PRIMARY KEY REFERENCES accounts (id),
      stripe_account_id text NOT NULL UNIQUE,
      charges_enabled boolean NOT NULL DEFAULT false,
      payouts_enabled boolean NOT NULL DEFAULT false,
      details_submitted boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );

    ALTER TABLE bookings
      ADD COLUMN stripe_session_id text UNIQUE,
      ADD COLUMN stripe_account_id text,
      ADD COLUMN stripe_payment_intent text,
      ADD COLUMN paid_at timestamptz,
      ADD COLUMN refund_status text CHECK (refund_status IN ('pending', 'succeeded', 'failed')),
      ADD COLUMN refund_id text,
      ADD COLUMN refund_error text;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE bookings
      DROP COLUMN stripe_session_id, DROP COLUMN stripe_account_id, DROP COLUMN stripe_payment_intent,
      DROP COLUMN paid_at, DROP COLUMN refund_status, DROP COLUMN refund_id, DROP COLUMN refund_error;
    DROP TABLE stripe_accounts;
    DROP TABLE stripe_events;
  `.execute(db);
}
