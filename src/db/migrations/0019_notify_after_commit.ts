import { type Kysely, type RawBuilder, sql } from 'kysely';

/**
 * Notifications sent after commit (src/db/dialect.ts; docs/design.md#store, "Notifications after
 * commit"). A transaction that sends NOTIFY holds a lock for the whole database from its commit
 * record until that record is on disk, so notifying transactions commit one at a time.
 *
 * - `kairos_notify(channel, payload)`: inside a transaction that set `kairos.defer_notify` (the app's
 *   dialect does at BEGIN), it notes the notification in the session setting `kairos.pending_notify`
 *   (undone with the transaction or savepoint, like the notification it stands for; a repeat is not
 *   noted again, and one noted twice would still be delivered once); anywhere else it is
 *   `pg_notify`. A channel or payload holding the separators (U+001E, U+001F) is notified at once.
 *   It answers true. A one-expression SQL function, so PostgreSQL inlines it into the statement that
 *   calls it: as PL/pgSQL (or as a SQL function returning void, which is not inlined) each call cost
 *   several microseconds of the store's time, against about one for `pg_notify`.
 * - `kairos_flush_notify()`: a procedure that sends what is noted and clears it; the app calls it
 *   with COMMIT, in the same message (a CALL answers no row, which the client would parse). It does
 *   not fail: the COMMIT before it has happened, so a failure here must not read as a failed
 *   transaction. A notification it cannot send (a payload too long, a queue over
 *   half full, as when a listener stopped reading) is a warning in the server's log instead; the
 *   listeners' safety nets (entries' lifetimes, the job runner's timer) cover what they miss.
 * - The triggers of 0005, 0007 and 0008 notify through `kairos_notify`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION kairos_notify(channel text, payload text) RETURNS boolean LANGUAGE sql AS $$
      SELECT CASE
        WHEN current_setting('kairos.defer_notify', true) IS DISTINCT FROM 'on'
          OR strpos(channel || payload, chr(30)) > 0 OR strpos(channel || payload, chr(31)) > 0
          THEN pg_notify(channel, payload)::text IS NOT NULL
        WHEN strpos(current_setting('kairos.pending_notify', true), chr(30) || channel || chr(31) || payload || chr(30)) > 0
          THEN true
        ELSE set_config('kairos.pending_notify',
          coalesce(nullif(current_setting('kairos.pending_notify', true), ''), chr(30))
            || channel || chr(31) || payload || chr(30), false) IS NOT NULL
      END
    $$;

    CREATE PROCEDURE kairos_flush_notify() LANGUAGE plpgsql AS $$
    DECLARE
      pending text := nullif(current_setting('kairos.pending_notify', true), '');
      entry text;
    BEGIN
      IF pending IS NULL THEN RETURN; END IF;
      PERFORM set_config('kairos.pending_notify', '', false);
      -- A full queue fails the commit of the notifying transaction, which here is this statement's
      -- (the COMMIT before it has happened): half full is PostgreSQL's own warning mark.
      IF pg_notification_queue_usage() > 0.5 THEN
        RAISE WARNING 'kairos_flush_notify: the notification queue is % full; notifications after commit not sent',
          round(pg_notification_queue_usage() * 100) || '%';
        RETURN;
      END IF;
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
    DROP PROCEDURE kairos_flush_notify();
    DROP FUNCTION kairos_notify(text, text);
  `.execute(db);
}

/**
 * A trigger function of 0005, 0007 or 0008 that announces a row's `column` (its old value and its new
 * one) on `channel`, through `notify`.
 */
function rowNotify(name: string, channel: string, column: string, notify: RawBuilder<unknown>) {
  const [fn, ch, col] = [sql.raw(name), sql.lit(channel), sql.raw(column)];
  return sql`
    CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN PERFORM ${notify}(${ch}, OLD.${col}); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM ${notify}(${ch}, NEW.${col}); END IF;
      RETURN NULL;
    END $$;`;
}

/** The trigger functions of 0005, 0007 and 0008, notifying through `notify`. */
async function triggerFunctions(db: Kysely<unknown>, notify: 'kairos_notify' | 'pg_notify'): Promise<void> {
  const n = sql.raw(notify);
  await sql`
    ${rowNotify('kairos_busy_notify_principal', 'kairos_busy', 'principal_id::text', n)}

    CREATE OR REPLACE FUNCTION kairos_busy_notify_cache() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE pid uuid;
    BEGIN
      SELECT principal_id INTO pid FROM calendar_connections
        WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.connection_id ELSE NEW.connection_id END;
      IF pid IS NOT NULL THEN PERFORM ${n}('kairos_busy', pid::text); END IF;
      RETURN NULL;
    END $$;

    ${rowNotify('kairos_booking_links_notify', 'kairos_booking_links', 'slug', n)}

    ${rowNotify('kairos_booking_busy_notify', 'kairos_booking_busy', 'principal_id::text', n)}
  `.execute(db);
}
