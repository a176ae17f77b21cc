import { type Kysely, sql } from 'kysely';

/**
 * Principals module: working-hours schedules (docs/api.md#hosts-and-schedules) and an index for listing an account's
 * live hosts. A principal without a row in `schedules` has the default schedule (Mon–Fri 09:00–17:00 in
 * its time zone), computed at read time, so a later change of the principal's zone moves it too.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE schedules (
      principal_id uuid PRIMARY KEY REFERENCES principals (id),
      timezone text NOT NULL,
      weekly jsonb NOT NULL,
      overrides jsonb NOT NULL,
      buffer_before_minutes integer NOT NULL CHECK (buffer_before_minutes >= 0),
      buffer_after_minutes integer NOT NULL CHECK (buffer_after_minutes >= 0),
      minimum_notice_minutes integer NOT NULL CHECK (minimum_notice_minutes >= 0),
      max_days_ahead integer NOT NULL CHECK (max_days_ahead > 0),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );

    CREATE INDEX principals_live_hosts_idx ON principals (account_id, created_at DESC, id DESC)
      WHERE kind = 'host' AND deleted_at IS NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX principals_live_hosts_idx;
    DROP TABLE schedules;
  `.execute(db);
}
