import { type Kysely, sql } from 'kysely';

/**
 * Network module: announce every change to who may read whom (consents and connections) with NOTIFY
 * on `kairos_network_access`, payload the principal whose reading rights changed (a consent's
 * grantee, both principals of a connection), so every process drops its copy of that principal's
 * grants at commit (src/modules/network/service.ts, the access rule). Triggers, not calls in the
 * code, so that no write path (a cascade included) can forget it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION kairos_network_access_notify_consent() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('kairos_network_access', OLD.grantee_id::text); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('kairos_network_access', NEW.grantee_id::text); END IF;
      RETURN NULL;
    END $$;

    CREATE FUNCTION kairos_network_access_notify_connection() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('kairos_network_access', OLD.principal_a::text);
        PERFORM pg_notify('kairos_network_access', OLD.principal_b::text);
      END IF;
      IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('kairos_network_access', NEW.principal_a::text);
        PERFORM pg_notify('kairos_network_access', NEW.principal_b::text);
      END IF;
      RETURN NULL;
    END $$;

    CREATE TRIGGER consents_access_notify
      AFTER INSERT OR DELETE OR UPDATE ON consents
      FOR EACH ROW EXECUTE FUNCTION kairos_network_access_notify_consent();

    CREATE TRIGGER network_connections_access_notify
      AFTER INSERT OR DELETE OR UPDATE ON network_connections
      FOR EACH ROW EXECUTE FUNCTION kairos_network_access_notify_connection();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER network_connections_access_notify ON network_connections;
    DROP TRIGGER consents_access_notify ON consents;
    DROP FUNCTION kairos_network_access_notify_connection();
    DROP FUNCTION kairos_network_access_notify_consent();
  `.execute(db);
}
