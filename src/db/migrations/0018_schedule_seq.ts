import { type Kysely, sql } from 'kysely';
import { up as lockedProfilesFunction } from './0017_locked_profiles.js';

/**
 * Principals module: the locked reads of a booking as one plain statement (docs/design.md,
 * "Bookings: no double booking"). Every schedule write bumps its principal's `schedule_seq` and stores
 * the new value in the schedule's `seq`, in one statement. A booking's statement locks the principal
 * rows and reads their schedules in the same snapshot: when it waited for a schedule change
 * (or one committed after its snapshot was taken), the locked row is the newest version and its
 * `schedule_seq` differs from the `seq` of the schedule it read, so the caller reads that schedule
 * again. Replaces 0017's function, which took a fresh snapshot for every call at several times the
 * store's cost of one statement.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE principals ADD COLUMN schedule_seq bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE schedules ADD COLUMN seq bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`DROP FUNCTION principals_locked_profiles(uuid[])`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await lockedProfilesFunction(db);
  await sql`ALTER TABLE schedules DROP COLUMN seq`.execute(db);
  await sql`ALTER TABLE principals DROP COLUMN schedule_seq`.execute(db);
}
