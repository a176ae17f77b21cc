import { type Kysely, sql } from 'kysely';

/**
 * Mails rendered when they are sent (mail module, docs/design.md#mail): a row may hold an intent —
 * `render`, its renderer's name and data as JSON — instead of its bodies, which the `mail.send` job
 * renders and stores as it sends. Such a row knows its invite's method at commit, not yet its text.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE mail_outbox ADD COLUMN render jsonb`.execute(db);
  // The unnamed table check of 0006 (ics and its method together): found by what it says.
  await sql`
    DO $$
    DECLARE c text;
    BEGIN
      SELECT conname INTO c FROM pg_constraint
      WHERE conrelid = 'mail_outbox'::regclass AND contype = 'c'
        AND pg_get_constraintdef(oid) LIKE '%ics IS NULL%ics_method IS NULL%';
      EXECUTE format('ALTER TABLE mail_outbox DROP CONSTRAINT %I', c);
    END $$`.execute(db);
  await sql`ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_ics_check
    CHECK (render IS NOT NULL OR (ics IS NULL) = (ics_method IS NULL))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_ics_check`.execute(db);
  await sql`ALTER TABLE mail_outbox DROP COLUMN render`.execute(db);
  await sql`ALTER TABLE mail_outbox ADD CHECK ((ics IS NULL) = (ics_method IS NULL))`.execute(db);
}
