import { type Kysely, sql } from 'kysely';

/**
 * The mail outbox (mail module): every mail Kairos sends is a row, written in the transaction of what
 * it is about and sent after commit by the `mail.send` job. Without SMTP_URL rows end as `logged`, so
 * nothing is lost; a mail to someone without an address is kept as `skipped`. `seq` orders rows written in the same millisecond (one transaction, a test clock).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE mail_outbox (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      kind text NOT NULL,
      subject_id text,
      to_address text,
      subject text NOT NULL,
      text_body text NOT NULL,
      html_body text NOT NULL,
      ics text,
      ics_method text CHECK (ics_method IN ('REQUEST', 'CANCEL')),
      status text NOT NULL CHECK (status IN ('pending', 'sent', 'logged', 'failed', 'skipped')),
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      created_at timestamptz NOT NULL,
      sent_at timestamptz,
      CHECK ((ics IS NULL) = (ics_method IS NULL)),
      CHECK ((to_address IS NULL) = (status = 'skipped'))
    );
    CREATE INDEX mail_outbox_subject_idx ON mail_outbox (subject_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE mail_outbox;`.execute(db);
}
