import { type Kysely, sql } from 'kysely';

/**
 * Bookings module: the waiting entries of a link by the end of their window, the only entries freed
 * time can be offered to (docs/design.md#bookings, Waitlist; docs/performance.md, "A long past"). The
 * offer's search (bookings/repo.ts `earliestWaiting`) walked the link's every entry in order of
 * arrival, booked, expired and passed ones included, and so grew with the link's past; with this
 * index it reads only the waiting entries whose window has not ended before the freed time does.
 * `IF NOT EXISTS`: an operator with a large table may build it beforehand with `CREATE INDEX
 * CONCURRENTLY` under this name, which a migration (one transaction) cannot do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS waitlist_waiting_idx ON waitlist_entries (booking_link_id, preferred_to)
    WHERE status = 'waiting'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX waitlist_waiting_idx`.execute(db);
}
