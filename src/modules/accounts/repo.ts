/**
 * SQL of the accounts module: accounts, users and sign-in sessions. Principal rows (a user's display
 * name) go through the principals module's API.
 */
import { type Insertable, type Selectable, sql } from 'kysely';
import { purgeInBatches } from '../../db/purge.js';
import type { Db, Tx } from '../../db/store.js';
import type { AccountsTable, SessionsTable, UsersTable } from './tables.js';

type Queryable = Db | Tx;

export type AccountRow = Selectable<AccountsTable>;

/** A user (its display name is its principal's). */
export interface UserRow {
  id: string;
  account_id: string;
  email: string;
  name: string | null;
  created_at: Date;
}

// ---------------------------------------------------------------------------------------------------
// Accounts

export async function insertAccount(db: Queryable, row: Insertable<AccountsTable>): Promise<void> {
  await db.insertInto('accounts').values(row).execute();
}

export async function listAccounts(db: Queryable): Promise<AccountRow[]> {
  return db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function updateAccount(
  db: Queryable,
  id: string,
  set: { plan?: AccountRow['plan']; rate_limit_per_hour?: number | null },
): Promise<AccountRow | undefined> {
  return db.updateTable('accounts').set(set).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function findAccount(db: Queryable, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

// ---------------------------------------------------------------------------------------------------
// Users

/** Whether a user has this e-mail address, compared case-insensitively. */
export async function emailTaken(db: Queryable, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertUser(db: Queryable, row: Insertable<UsersTable>): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

/** The user with this e-mail address (compared case-insensitively) and its password hash, or undefined. */
export async function findUserByEmail(
  db: Queryable,
  email: string,
): Promise<(UserRow & { password_hash: string }) | undefined> {
  return db
    .selectFrom('users')
    .select(['id', 'account_id', 'email', 'name', 'password_hash', 'created_at'])
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export async function findUser(db: Queryable, id: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .select(['id', 'account_id', 'email', 'name', 'created_at'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Sets a user's own name; false when there is no such user. */
export async function setUserName(db: Queryable, id: string, name: string): Promise<boolean> {
  const r = await db.updateTable('users').set({ name }).where('id', '=', id).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** A user's sign-in e-mail, or undefined. */
export async function findUserEmail(db: Queryable, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('email').where('id', '=', id).executeTakeFirst();
  return row?.email;
}

/** The id of the user with this e-mail address (compared case-insensitively), or undefined. */
export async function findUserIdByEmail(db: Queryable, email: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where(sql`lower(email)`, '=', sql<string>`lower(${email})`)
    .executeTakeFirst();
  return row?.id;
}

/** Users, oldest first: of one account, or of every account. */
export async function listUsers(db: Queryable, accountId?: string): Promise<UserRow[]> {
  let q = db.selectFrom('users').select(['id', 'account_id', 'email', 'name', 'created_at']);
  if (accountId !== undefined) q = q.where('account_id', '=', accountId);
  return q.orderBy('created_at').orderBy('id').execute();
}

export async function setPasswordHash(db: Queryable, id: string, passwordHash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

// ---------------------------------------------------------------------------------------------------
// Sessions

export async function insertSession(db: Queryable, row: Insertable<SessionsTable>): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}

/** Sets the session's `revoked_at` (again, if it was revoked already). */
export async function markSessionRevoked(db: Queryable, id: string, now: Date): Promise<void> {
  await db.updateTable('sessions').set({ revoked_at: now }).where('id', '=', id).execute();
}

/** Revokes every live session of a user; answers their ids. */
export async function revokeUserSessions(db: Queryable, userId: string, now: Date): Promise<string[]> {
  const rows = await db
    .updateTable('sessions')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

export async function findSession(
  db: Queryable,
  id: string,
): Promise<Pick<Selectable<SessionsTable>, 'revoked_at' | 'expires_at'> | undefined> {
  return db
    .selectFrom('sessions')
    .select(['revoked_at', 'expires_at'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Deletes, in batches, the sessions that ended (expired or revoked) before `before`; answers how many. */
export async function purgeEndedSessions(db: Db, before: Date): Promise<number> {
  // least() skips a null revoked_at: the session ended at its expiry or its revocation, whichever came first.
  return purgeInBatches(db, 'sessions', sql<boolean>`least(expires_at, revoked_at) < ${before}`);
}
