import { type Kysely, sql } from 'kysely';

/**
 * Principals module: the locked reads of a booking (principals' lockedProfiles) in one round trip.
 * The function locks the principals' rows FOR SHARE (in id order, as before), then reads them with
 * their schedules in a second statement. Two statements are needed, not one: under READ COMMITTED a
 * statement that waited for a lock still reads joined tables as they were when it started, so a
 * schedule committed by the change it waited for would be missed; a VOLATILE function's statements
 * each take a fresh snapshot, so the second one sees it, as a second statement from the client did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION principals_locked_profiles(ids uuid[])
    RETURNS TABLE (id uuid, kind text, account_id uuid, display_name text, email text, timezone text,
      deleted_at timestamptz, s_timezone text, weekly jsonb, overrides jsonb,
      buffer_before_minutes integer, buffer_after_minutes integer, minimum_notice_minutes integer,
      max_days_ahead integer)
    LANGUAGE plpgsql VOLATILE AS $$
    #variable_conflict use_column
    BEGIN
      PERFORM 1 FROM principals p WHERE p.id = ANY(ids) ORDER BY p.id FOR SHARE;
      RETURN QUERY
        SELECT p.id, p.kind, p.account_id, p.display_name, p.email, p.timezone, p.deleted_at,
          s.timezone, s.weekly, s.overrides, s.buffer_before_minutes, s.buffer_after_minutes,
          s.minimum_notice_minutes, s.max_days_ahead
        FROM principals p LEFT JOIN schedules s ON s.principal_id = p.id
        WHERE p.id = ANY(ids);
    END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION principals_locked_profiles(uuid[])`.execute(db);
}
