import { type Kysely, sql } from 'kysely';

/**
 * Guests and no-shows of bookings (docs/api.md#bookings): `guests`, the addresses invited beside the
 * customer (each mailed and on the invite, never managing the booking); `no_show`, the parties marked
 * as not having come (`customer`, `host`), a set.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE bookings ADD COLUMN guests text[] NOT NULL DEFAULT '{}';
    ALTER TABLE bookings ADD COLUMN no_show text[] NOT NULL DEFAULT '{}'
      CHECK (no_show <@ ARRAY['customer', 'host']::text[]);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE bookings DROP COLUMN no_show;
    ALTER TABLE bookings DROP COLUMN guests;
  `.execute(db);
}
