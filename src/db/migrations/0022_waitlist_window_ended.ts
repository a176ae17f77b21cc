import { type Kysely, sql } from 'kysely';

/**
 * Bookings module: the waiting entries by the end of their window, across links, for the reaper that
 * marks an entry expired once its window has ended (bookings/repo.ts `windowEndedQuery`; docs/api.md
 * #waitlist). `waitlist_waiting_idx` leads with the link, so it cannot answer "every link's ended
 * windows" without reading each link's. `IF NOT EXISTS`: as in 0021, an operator may build it
 * beforehand with `CREATE INDEX CONCURRENTLY` under this name.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS waitlist_window_end_idx ON waitlist_entries (preferred_to)
    WHERE status = 'waiting'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX waitlist_window_end_idx`.execute(db);
}
