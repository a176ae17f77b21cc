import { type Kysely, sql } from 'kysely';

/**
 * Notifications sent after commit (src/db/dialect.ts; docs/design.md#store, "Notifications after
 * commit"). A transaction that sends NOTIFY holds a lock for the whole database from its commit
 * record until that record is on disk, so notifying transactions commit one at a time.
 *
 * - `kairos_notify(channel, payload)`: inside a transaction that set `kairos.defer_notify` (the app's
 *   dialect does at BEGIN), it notes the notification in the session setting `kairos.pending_notify`
 *   (each once; undone with the transaction or savepoint, like the notification it stands for);
 *   anywhere else it is `pg_notify`. A channel or payload holding the separators (U+001E, U+001F) is
 *   notified at once.
 * - `kairos_flush_notify()`: sends what is noted and clears it; the app sends it with COMMIT, in the
 *   same message. It never fails: the COMMIT before it has happened, so a failure here (a full
 *   notification queue) must not read as a failed transaction; it is logged as a warning instead.
 * - The triggers of 0005, 0007 and 0008 notify through `kairos_notify`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION kairos_notify(channel text, payload text) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      entry text := channel || chr(31) || payload || chr(30);
      pending text;
    BEGIN
      IF current_setting('kairos.defer_notify', true) IS DISTINCT FROM 'on'
         OR strpos(entry, chr(30)) < length(entry) OR strpos(channel || payload, chr(31)) > 0 THEN
        PERFORM pg_notify(channel, payload);
        RETURN;
      END IF;
      pending := coalesce(nullif(current_setting('kairos.pending_notify', true), ''), chr(30));
      IF strpos(pending, chr(30) || entry) = 0 THEN
        PERFORM set_config('kairos.pending_notify', pending || entry, false);
      END IF;
    END $$;

    CREATE FUNCTION kairos_flush_notify() RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      pending text := nullif(current_setting('kairos.pending_notify', true), '');
      entry text;
    BEGIN
      IF pending IS NULL THEN RETURN; END IF;
      PERFORM set_config('kairos.pending_notify', '', false);
      BEGIN
        FOREACH entry IN ARRAY string_to_array(trim(BOTH chr(30) FROM pending), chr(30)) LOOP
          PERFORM pg_notify(split_part(entry, chr(31), 1), split_part(entry, chr(31), 2));
        END LOOP;
      EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'kairos_flush_notify: notifications after commit not sent: %', SQLERRM;
      END;
    END $$;
  `.execute(db);
  await triggerFunctions(db, 'kairos_notify');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await triggerFunctions(db, 'pg_notify');
  await sql`
    DROP FUNCTION kairos_flush_notify();
    DROP FUNCTION kairos_notify(text, text);
  `.execute(db);
}

/** The trigger functions of 0005, 0007 and 0008, notifying through `notify`. */
async function triggerFunctions(db: Kysely<unknown>, notify: 'kairos_notify' | 'pg_notify'): Promise<void> {
  const n = sql.raw(notify);
  await sql`
    CREATE OR REPLACE FUNCTION kairos_busy_notify_principal() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN PERFORM ${n}('kairos_busy', OLD.principal_id::text); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM ${n}('kairos_busy', NEW.principal_id::text); END IF;
      RETURN NULL;
    END $$;

    CREATE OR REPLACE FUNCTION kairos_busy_notify_cache() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE pid uuid;
    BEGIN
      SELECT principal_id INTO pid FROM calendar_connections
        WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.connection_id ELSE NEW.connection_id END;
      IF pid IS NOT NULL THEN PERFORM ${n}('kairos_busy', pid::text); END IF;
      RETURN NULL;
    END $$;

    CREATE OR REPLACE FUNCTION kairos_booking_links_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN PERFORM ${n}('kairos_booking_links', OLD.slug); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM ${n}('kairos_booking_links', NEW.slug); END IF;
      RETURN NULL;
    END $$;

    CREATE OR REPLACE FUNCTION kairos_booking_busy_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN PERFORM ${n}('kairos_booking_busy', OLD.principal_id::text); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM ${n}('kairos_booking_busy', NEW.principal_id::text); END IF;
      RETURN NULL;
    END $$;
  `.execute(db);
}
