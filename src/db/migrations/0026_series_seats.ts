import { type Kysely, sql } from 'kysely';

/**
 * Recurring series and seats (docs/api.md#recurring-series, #seats; docs/design.md#series-and-seats).
 *
 * - `booking_series` (`ser_…`): the rule a series was made from. Its occurrences are bookings with
 *   `series_id`, each holding its own occupancy, so the exclusion constraint checks every one.
 * - `seat_sessions` (`sess_…`): one slot of a seated link and how many of its seats are taken. The
 *   session (not each seat) owns one occupancy row per host, inserted with its first seat and deleted
 *   with its last cancellation. `UNIQUE (booking_link_id, start_time)` makes the slot's one session
 *   the row concurrent seats queue on; `CHECK (seats_taken BETWEEN 0 AND capacity)` makes an overfull
 *   session impossible. Seats are bookings with `seat_session_id`.
 * - Booking links say whether they allow recurrence (`recurrence`: `{frequencies, max_count}`) and
 *   whether they are seated (`seat_capacity`, `seats_show_remaining`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE booking_links ADD COLUMN recurrence jsonb;
    ALTER TABLE booking_links ADD COLUMN seat_capacity integer
      CHECK (seat_capacity IS NULL OR seat_capacity BETWEEN 2 AND 500);
    ALTER TABLE booking_links ADD COLUMN seats_show_remaining boolean NOT NULL DEFAULT false;

    CREATE TABLE booking_series (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      livemode boolean NOT NULL DEFAULT true,
      principal_id uuid NOT NULL REFERENCES principals (id),
      booking_link_id text REFERENCES booking_links (id),
      frequency text NOT NULL CHECK (frequency IN ('daily', 'weekly', 'monthly')),
      interval integer NOT NULL CHECK (interval BETWEEN 1 AND 4),
      count integer NOT NULL CHECK (count BETWEEN 2 AND 52),
      timezone text NOT NULL,
      sequence integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX booking_series_account_idx ON booking_series (account_id);

    CREATE TABLE seat_sessions (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      livemode boolean NOT NULL DEFAULT true,
      booking_link_id text NOT NULL REFERENCES booking_links (id),
      start_time timestamptz NOT NULL,
      end_time timestamptz NOT NULL,
      host_ids uuid[] NOT NULL,
      capacity integer NOT NULL CHECK (capacity BETWEEN 2 AND 500),
      seats_taken integer NOT NULL CHECK (seats_taken BETWEEN 0 AND capacity),
      created_at timestamptz NOT NULL,
      CHECK (end_time > start_time),
      UNIQUE (booking_link_id, start_time)
    );

    ALTER TABLE bookings ADD COLUMN series_id text REFERENCES booking_series (id);
    ALTER TABLE bookings ADD COLUMN occurrence_start timestamptz;
    ALTER TABLE bookings ADD COLUMN seat_session_id text;
    CREATE INDEX bookings_series_idx ON bookings (series_id, start_time) WHERE series_id IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX bookings_series_idx;
    ALTER TABLE bookings DROP COLUMN seat_session_id;
    ALTER TABLE bookings DROP COLUMN occurrence_start;
    ALTER TABLE bookings DROP COLUMN series_id;
    DROP TABLE seat_sessions;
    DROP TABLE booking_series;
    ALTER TABLE booking_links DROP COLUMN seats_show_remaining;
    ALTER TABLE booking_links DROP COLUMN seat_capacity;
    ALTER TABLE booking_links DROP COLUMN recurrence;
  `.execute(db);
}
