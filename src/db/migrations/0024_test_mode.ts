import { type Kysely, sql } from 'kysely';

/**
 * Test mode (docs/api.md#test-mode). API keys get an `environment`; every object a test key makes is
 * stored with `livemode = false` beside the live ones (same tables, one column), so a test object is
 * found only by a caller of its mode. The account's and users' own principals stay live and shared;
 * a host's schedule and calendars follow the host.
 *
 * The exclusion constraint on `booking_occupancy` is per mode: a test booking never takes time from a
 * live one. `mail_outbox` keeps a test mail as `suppressed`: stored, never sent. `test_clocks` holds
 * each account's test clock as an offset from real time (zero when absent).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE api_keys ADD COLUMN environment text NOT NULL DEFAULT 'live'
      CHECK (environment IN ('live', 'test'));

    ALTER TABLE principals ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE booking_links ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE bookings ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE waitlist_entries ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE webhooks ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE events ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE proposals ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE consents ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE network_connections ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE network_invitations ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE mail_outbox ADD COLUMN livemode boolean NOT NULL DEFAULT true;

    ALTER TABLE booking_occupancy ADD COLUMN livemode boolean NOT NULL DEFAULT true;
    ALTER TABLE booking_occupancy DROP CONSTRAINT booking_occupancy_no_overlap;
    ALTER TABLE booking_occupancy ADD CONSTRAINT booking_occupancy_no_overlap
      EXCLUDE USING gist (principal_id WITH =, livemode WITH =, during WITH &&);

    ALTER TABLE mail_outbox DROP CONSTRAINT IF EXISTS mail_outbox_status_check;
    ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_status_check
      CHECK (status IN ('pending', 'sent', 'logged', 'failed', 'skipped', 'suppressed'));

    CREATE TABLE test_clocks (
      account_id uuid PRIMARY KEY REFERENCES accounts (id),
      offset_ms bigint NOT NULL DEFAULT 0 CHECK (offset_ms >= 0),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE test_clocks;
    DELETE FROM mail_outbox WHERE status = 'suppressed';
    ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_status_check;
    ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_status_check
      CHECK (status IN ('pending', 'sent', 'logged', 'failed', 'skipped'));
    DELETE FROM booking_occupancy WHERE NOT livemode;
    ALTER TABLE booking_occupancy DROP CONSTRAINT booking_occupancy_no_overlap;
    ALTER TABLE booking_occupancy ADD CONSTRAINT booking_occupancy_no_overlap
      EXCLUDE USING gist (principal_id WITH =, during WITH &&);
    ALTER TABLE booking_occupancy DROP COLUMN livemode;
    ALTER TABLE mail_outbox DROP COLUMN livemode;
    ALTER TABLE network_invitations DROP COLUMN livemode;
    ALTER TABLE network_connections DROP COLUMN livemode;
    ALTER TABLE consents DROP COLUMN livemode;
    ALTER TABLE proposals DROP COLUMN livemode;
    ALTER TABLE events DROP COLUMN livemode;
    ALTER TABLE webhooks DROP COLUMN livemode;
    ALTER TABLE waitlist_entries DROP COLUMN livemode;
    ALTER TABLE bookings DROP COLUMN livemode;
    ALTER TABLE booking_links DROP COLUMN livemode;
    ALTER TABLE principals DROP COLUMN livemode;
    ALTER TABLE api_keys DROP COLUMN environment;
  `.execute(db);
}
