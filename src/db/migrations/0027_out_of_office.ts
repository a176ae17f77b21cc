import { type Kysely, sql } from 'kysely';

/**
 * Out-of-office ranges (docs/api.md#out-of-office): `out_of_office` (`ooo_…`), a principal's time away,
 * busy everywhere (the `out_of_office` busy source, src/modules/out-of-office/busy.ts). Deleting one
 * removes the row. Every insert and delete announces the principal on `kairos_ooo_busy` (through
 * `kairos_notify`, migration 0019: after commit), so every process drops its copy of that principal's
 * ranges.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE out_of_office (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      livemode boolean NOT NULL DEFAULT true,
      principal_id uuid NOT NULL REFERENCES principals (id),
      start_time timestamptz NOT NULL,
      end_time timestamptz NOT NULL,
      note text,
      created_at timestamptz NOT NULL,
      CHECK (end_time > start_time),
      CHECK (end_time - start_time <= interval '366 days')
    );
    CREATE INDEX out_of_office_principal_idx ON out_of_office (principal_id, start_time);

    CREATE FUNCTION kairos_ooo_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        PERFORM kairos_notify('kairos_ooo_busy', OLD.principal_id::text);
      ELSE
        PERFORM kairos_notify('kairos_ooo_busy', NEW.principal_id::text);
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER out_of_office_notify AFTER INSERT OR DELETE ON out_of_office
      FOR EACH ROW EXECUTE FUNCTION kairos_ooo_notify();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER out_of_office_notify ON out_of_office;
    DROP FUNCTION kairos_ooo_notify();
    DROP TABLE out_of_office;
  `.execute(db);
}
