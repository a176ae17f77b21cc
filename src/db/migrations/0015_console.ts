import { type Kysely, sql } from 'kysely';

/**
 * The console's one-time setup links (README.md, Console): a server
 * with no account logs one link; its token is stored hashed here with an expiry, and the first use of
 * any of them consumes them all (one first account).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE console_setup_tokens (
    token_hash text PRIMARY KEY,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE console_setup_tokens`.execute(db);
}
