import { type Kysely, sql } from 'kysely';

/**
 * Booking links (docs/api.md#booking-links, bookingLinks module). A slug is unique among live links
 * only (a partial unique index: a deleted link's slug is free again), and the index decides a race
 * between two creates of one slug. Every write announces the slugs it touched with NOTIFY on
 * `kairos_booking_links` (a trigger, so no write path can forget it): every process drops its cached
 * copy of the link (src/modules/booking-links/service.ts) at commit.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE booking_links (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      slug text NOT NULL CHECK (slug ~ '^[a-z0-9-]{3,64}$'),
      title text NOT NULL,
      description text NOT NULL DEFAULT '',
      durations integer[] NOT NULL CHECK (cardinality(durations) BETWEEN 1 AND 10),
      default_duration integer NOT NULL,
      host_ids uuid[] NOT NULL CHECK (cardinality(host_ids) BETWEEN 1 AND 20),
      assignment text NOT NULL CHECK (assignment IN ('single', 'round_robin', 'collective')),
      questions jsonb NOT NULL DEFAULT '[]',
      price_amount integer CHECK (price_amount BETWEEN 50 AND 99999999),
      price_currency text CHECK (price_currency ~ '^[a-z]{3}$'),
      minimum_notice_minutes integer CHECK (minimum_notice_minutes BETWEEN 0 AND 525600),
      max_days_ahead integer CHECK (max_days_ahead BETWEEN 1 AND 730),
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz,
      CHECK (default_duration = ANY (durations)),
      CHECK ((price_amount IS NULL) = (price_currency IS NULL)),
      CHECK (assignment <> 'single' OR cardinality(host_ids) = 1)
    );
    CREATE UNIQUE INDEX booking_links_slug_live_idx ON booking_links (slug) WHERE deleted_at IS NULL;
    CREATE INDEX booking_links_account_idx ON booking_links (account_id, created_at DESC, id DESC);

    CREATE FUNCTION kairos_booking_links_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('kairos_booking_links', OLD.slug); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('kairos_booking_links', NEW.slug); END IF;
      RETURN NULL;
    END $$;

    CREATE TRIGGER booking_links_notify
      AFTER INSERT OR UPDATE OR DELETE
      ON booking_links FOR EACH ROW EXECUTE FUNCTION kairos_booking_links_notify();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER booking_links_notify ON booking_links;
    DROP FUNCTION kairos_booking_links_notify();
    DROP TABLE booking_links;
  `.execute(db);
}
