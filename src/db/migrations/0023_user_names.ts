import { type Kysely, sql } from 'kysely';

/**
 * Accounts module: a user's own `name` (null until given; docs/api.md#sessions). A user created without
 * one was shown by its sign-in e-mail (its principal's display name), which public pages and
 * customers' mails must never show: such principals take their account's name instead, as new users
 * without a name do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE users ADD COLUMN name text`.execute(db);
  await sql`UPDATE principals p SET display_name = a.name
    FROM accounts a
    WHERE p.kind = 'user' AND a.id = p.account_id AND lower(p.display_name) = lower(p.email)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE users DROP COLUMN name`.execute(db);
}
