import { type Kysely, sql } from 'kysely';

/**
 * Bookings module (docs/api.md#bookings, #waitlist; docs/design.md#bookings).
 *
 * `booking_occupancy` holds the time that is taken: one row per principal a live booking (pending
 * payment or confirmed) or a waitlist hold occupies, padded with that principal's buffers. The
 * exclusion constraint is the guarantee that no two of them overlap for one principal; a cancelled
 * or expired booking deletes its rows. Changes are announced on `kairos_booking_busy` (payload: the
 * principal id) by a trigger, so every process drops its cached busy time at commit.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE EXTENSION IF NOT EXISTS btree_gist;

    CREATE TABLE bookings (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      principal_id uuid NOT NULL REFERENCES principals (id),
      host_ids uuid[] NOT NULL,
      booking_link_id text REFERENCES booking_links (id),
      status text NOT NULL CHECK (status IN ('pending_payment', 'confirmed', 'cancelled', 'expired')),
      start_time timestamptz NOT NULL,
      end_time timestamptz NOT NULL,
      customer_email text NOT NULL,
      customer_name text NOT NULL,
      customer_timezone text,
      notes text,
      answers jsonb NOT NULL DEFAULT '{}',
      metadata jsonb NOT NULL DEFAULT '{}',
      payment_amount integer,
      payment_currency text,
      checkout_url text,
      payment_expires_at timestamptz,
      cancellation_reason text,
      cancelled_at timestamptz,
      manage_token_hash text NOT NULL UNIQUE,
      manage_nonce text NOT NULL,
      sequence integer NOT NULL DEFAULT 0,
      waitlist_entry_id text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CHECK (end_time > start_time)
    );
    CREATE INDEX bookings_account_start_idx ON bookings (account_id, start_time, id);
    CREATE INDEX bookings_principal_start_idx ON bookings (principal_id, start_time);
    CREATE INDEX bookings_link_start_idx ON bookings (booking_link_id, start_time)
      WHERE booking_link_id IS NOT NULL;

    CREATE TABLE booking_occupancy (
      owner_id text NOT NULL,
      principal_id uuid NOT NULL REFERENCES principals (id),
      during tstzrange NOT NULL,
      PRIMARY KEY (owner_id, principal_id),
      CONSTRAINT booking_occupancy_no_overlap EXCLUDE USING gist (principal_id WITH =, during WITH &&)
    );

    CREATE FUNCTION kairos_booking_busy_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('kairos_booking_busy', OLD.principal_id::text); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('kairos_booking_busy', NEW.principal_id::text); END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER booking_occupancy_notify AFTER INSERT OR UPDATE OR DELETE ON booking_occupancy
      FOR EACH ROW EXECUTE FUNCTION kairos_booking_busy_notify();

    CREATE TABLE waitlist_entries (
      id text PRIMARY KEY,
      -- The order of arrival (ids and created_at may tie within a millisecond): offers follow it.
      seq bigint GENERATED ALWAYS AS IDENTITY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      booking_link_id text NOT NULL REFERENCES booking_links (id),
      customer_email text NOT NULL,
      customer_name text NOT NULL,
      notes text,
      preferred_from timestamptz NOT NULL,
      preferred_to timestamptz NOT NULL,
      status text NOT NULL CHECK (status IN ('waiting', 'offered', 'booked', 'expired', 'removed')),
      offer_start timestamptz,
      offer_end timestamptz,
      offer_host_ids uuid[],
      offer_principal_id uuid,
      offer_expires_at timestamptz,
      claim_token_hash text UNIQUE,
      booking_id text REFERENCES bookings (id),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CHECK (preferred_to > preferred_from)
    );
    CREATE INDEX waitlist_link_idx ON waitlist_entries (booking_link_id, seq);
    CREATE INDEX waitlist_offers_idx ON waitlist_entries (offer_expires_at) WHERE status = 'offered';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE waitlist_entries;
    DROP TRIGGER booking_occupancy_notify ON booking_occupancy;
    DROP FUNCTION kairos_booking_busy_notify();
    DROP TABLE booking_occupancy;
    DROP TABLE bookings;
  `.execute(db);
}
