import { type Kysely, sql } from 'kysely';

/**
 * Calendars module: announce every change to what a principal's busy-time read returns (connections,
 * their selected calendars, the busy cache) with NOTIFY on `kairos_busy`, payload the principal id, so
 * every process drops its in-memory copy at commit (src/modules/calendars/busy-cache.ts). Triggers,
 * not calls in the code, so that no write path can forget it. Columns that reads do not use
 * (last_used_at, refresh_queued_until, sync bookkeeping, names) do not fire.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION kairos_busy_notify_principal() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('kairos_busy', OLD.principal_id::text); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('kairos_busy', NEW.principal_id::text); END IF;
      RETURN NULL;
    END $$;

    CREATE FUNCTION kairos_busy_notify_cache() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE pid uuid;
    BEGIN
      SELECT principal_id INTO pid FROM calendar_connections
        WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.connection_id ELSE NEW.connection_id END;
      IF pid IS NOT NULL THEN PERFORM pg_notify('kairos_busy', pid::text); END IF;
      RETURN NULL;
    END $$;

    CREATE TRIGGER calendar_connections_busy_notify
      AFTER INSERT OR DELETE OR UPDATE OF principal_id, status, status_reason, retry_at, last_error
      ON calendar_connections FOR EACH ROW EXECUTE FUNCTION kairos_busy_notify_principal();

    CREATE TRIGGER calendars_busy_notify
      AFTER INSERT OR DELETE OR UPDATE OF principal_id, connection_id, source_key, selected
      ON calendars FOR EACH ROW EXECUTE FUNCTION kairos_busy_notify_principal();

    CREATE TRIGGER calendar_busy_cache_notify
      AFTER INSERT OR DELETE OR UPDATE
      ON calendar_busy_cache FOR EACH ROW EXECUTE FUNCTION kairos_busy_notify_cache();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER calendar_busy_cache_notify ON calendar_busy_cache;
    DROP TRIGGER calendars_busy_notify ON calendars;
    DROP TRIGGER calendar_connections_busy_notify ON calendar_connections;
    DROP FUNCTION kairos_busy_notify_cache();
    DROP FUNCTION kairos_busy_notify_principal();
  `.execute(db);
}
