import { type Kysely, sql } from 'kysely';

/**
 * Bookings module: a booking lasts at most a day (1,440 minutes), as every way of making or moving
 * one already checks (docs/api.md#bookings; a proposal's slots are at most 24 hours). Said by the
 * table, it is what lets a list of the bookings ending after a moment start its index scan a day
 * before that moment instead of at the account's first booking (bookings/repo.ts `listBookings`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE bookings ADD CONSTRAINT bookings_at_most_a_day
    CHECK (end_time - start_time <= interval '1440 minutes')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE bookings DROP CONSTRAINT bookings_at_most_a_day`.execute(db);
}
