import { type Kysely, sql } from 'kysely';

/**
 * What a booking is called (docs/api.md#bookings): the link's title, the proposal's title, or
 * "Meeting with <hosts>" for a booking made through `POST /v1/bookings` without a link. Stored when
 * the booking is made, so the attendee's page, the mails and the API show the same name later even if
 * the link is renamed. Null for bookings made before this column: they are shown by their link's title.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE bookings ADD COLUMN title text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE bookings DROP COLUMN title`.execute(db);
}
