import { type Kysely, sql } from 'kysely';

/**
 * Indexes for the retention purges (docs/operations.md, Retention; src/db/purge.ts): each purge finds
 * the rows past their retention by the column it ages them by, without reading the whole table. Indexed
 * columns are never updated (sessions' `least(expires_at, revoked_at)` changes once, on sign-out), so
 * the updates these tables see stay HOT. `IF NOT EXISTS`: an operator with a large table may build them
 * beforehand with `CREATE INDEX CONCURRENTLY` under these names, which a migration (one transaction)
 * cannot do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX IF NOT EXISTS events_created_idx ON events (created_at);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_created_idx ON webhook_deliveries (created_at);
    CREATE INDEX IF NOT EXISTS mail_outbox_created_idx ON mail_outbox (created_at);
    CREATE INDEX IF NOT EXISTS sessions_ended_idx ON sessions ((least(expires_at, revoked_at)));
    CREATE INDEX IF NOT EXISTS api_key_usage_bucket_idx ON api_key_usage (bucket);
    CREATE INDEX IF NOT EXISTS stripe_events_received_idx ON stripe_events (received_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX stripe_events_received_idx, api_key_usage_bucket_idx, sessions_ended_idx,
      mail_outbox_created_idx, webhook_deliveries_created_idx, events_created_idx;
  `.execute(db);
}
