import { type Kysely, sql } from 'kysely';

/**
 * Calendar write-through (docs/design.md#calendar-write-through).
 *
 * - `calendars.is_destination`: the calendar a principal's meetings are written into (at most one
 *   per principal; without one, the primary calendar of the principal's oldest writable connection).
 * - `calendar_meetings`: what should be in the principals' calendars, one row per meeting (a booking),
 *   written in the meeting's own transaction; `version` rises with every change, `live` false means
 *   "remove it".
 * - `calendar_meeting_events`: what is in one principal's calendar for a meeting (the provider's
 *   event id or href and etag), and how writing it went (`pending | synced | failed | removed`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE calendars ADD COLUMN is_destination boolean NOT NULL DEFAULT false;
    CREATE UNIQUE INDEX calendars_one_destination_idx ON calendars (principal_id) WHERE is_destination;

    CREATE TABLE calendar_meetings (
      key text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      principal_ids uuid[] NOT NULL,
      title text NOT NULL,
      description text,
      location text,
      attendees jsonb NOT NULL DEFAULT '[]',
      start_time timestamptz NOT NULL,
      end_time timestamptz NOT NULL,
      live boolean NOT NULL,
      version integer NOT NULL,
      -- The version the write job last finished a pass over (every principal written or failed).
      done_version integer NOT NULL DEFAULT 0,
      -- One writer per meeting: the write job holding it until then (a lease, not a held lock).
      writer_until timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CHECK (end_time > start_time)
    );

    CREATE TABLE calendar_meeting_events (
      meeting_key text NOT NULL REFERENCES calendar_meetings (key) ON DELETE CASCADE,
      principal_id uuid NOT NULL,
      connection_id text REFERENCES calendar_connections (id) ON DELETE SET NULL,
      provider text NOT NULL,
      calendar_external_id text NOT NULL,
      external_id text,
      etag text,
      status text NOT NULL CHECK (status IN ('pending', 'synced', 'failed', 'removed')),
      written_version integer NOT NULL DEFAULT 0,
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (meeting_key, principal_id)
    );
    CREATE INDEX calendar_meeting_events_connection_idx ON calendar_meeting_events (connection_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE calendar_meeting_events;
    DROP TABLE calendar_meetings;
    DROP INDEX calendars_one_destination_idx;
    ALTER TABLE calendars DROP COLUMN is_destination;
  `.execute(db);
}
