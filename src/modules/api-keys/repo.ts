/** SQL of the api-keys module: keys and their hourly usage buckets (accounts come through `keyAccounts`). */
import { type Insertable, type Selectable, sql } from 'kysely';
import { purgeInBatches } from '../../db/purge.js';
import type { Db, Tx } from '../../db/store.js';
import type { ApiKeysTable } from './tables.js';
import { type CursorPosition, newestFirstAfter } from '../../platform/pagination.js';

type Queryable = Db | Tx;

export type ApiKeyRow = Selectable<ApiKeysTable>;

// ---------------------------------------------------------------------------------------------------
// Keys

export async function insertKey(db: Queryable, row: Insertable<ApiKeysTable>): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Keys as the API shows them (never the hash). */
function selectKeys(db: Queryable) {
  return db
    .selectFrom('api_keys as k')
    .select([
      'k.id',
      'k.name',
      'k.description',
      'k.key_type',
      'k.environment',
      'k.scopes',
      'k.prefix',
      'k.last4',
      'k.rate_limit_per_hour',
      'k.allowed_domains',
      'k.expires_at',
      'k.revoked_at',
      'k.created_at',
    ]);
}

/** The account's keys (revoked and expired too), newest first, `limit + 1` rows from after `pos`. */
export async function listKeys(db: Queryable, accountId: string, pos: CursorPosition | null, limit: number) {
  const q = selectKeys(db).where('k.account_id', '=', accountId);
  return newestFirstAfter(q, pos, limit, 'k').execute();
}

/** One key of the account, or undefined. */
export async function findKey(db: Queryable, accountId: string, id: string) {
  return selectKeys(db).where('k.account_id', '=', accountId).where('k.id', '=', id).executeTakeFirst();
}

/**
 * The distinct hostnames in `allowed_domains` of the account's publishable keys that are neither
 * revoked nor expired at `now`, sorted.
 */
export async function liveAllowedDomains(db: Queryable, accountId: string, now: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(sql<string>`unnest(allowed_domains)`.as('domain'))
    .where('account_id', '=', accountId)
    .where('key_type', '=', 'publishable')
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .execute();
  return [...new Set(rows.map((r) => r.domain))].sort();
}

/** Sets `revoked_at` on the account's key unless it is already revoked; whether a row changed. */
export async function revokeKey(db: Queryable, accountId: string, id: string, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Whether the account has a key with this id (revoked or not). */
export async function keyExists(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

/** The account a key belongs to, or null when there is no such key. */
export async function findKeyAccount(db: Queryable, id: string): Promise<string | null> {
  const row = await db.selectFrom('api_keys').select('account_id').where('id', '=', id).executeTakeFirst();
  return row?.account_id ?? null;
}

/** The key with this hash, with what authentication needs of it, or undefined. */
export async function findKeyByHash(db: Queryable, keyHash: string) {
  return db
    .selectFrom('api_keys as k')
    .select([
      'k.id',
      'k.account_id',
      'k.key_type',
      'k.environment',
      'k.scopes',
      'k.key_hash',
      'k.rate_limit_per_hour',
      'k.allowed_domains',
      'k.expires_at',
      'k.revoked_at',
    ])
    .where('k.key_hash', '=', keyHash)
    .executeTakeFirst();
}

// ---------------------------------------------------------------------------------------------------
// Usage

export interface UsageTotals {
  requests: number;
  rate_limited: number;
  s2xx: number;
  s4xx: number;
  s5xx: number;
  last_used_at: Date | null;
}

/** One hourly usage bucket of a key. */
export interface UsageBucket extends UsageTotals {
  bucket: Date;
}

/** The key's hourly usage buckets from `start` on, oldest first (hours without requests have none). */
export async function usageBuckets(db: Queryable, keyId: string, start: Date): Promise<UsageBucket[]> {
  return db
    .selectFrom('api_key_usage')
    .select(['bucket', 'requests', 'rate_limited', 's2xx', 's4xx', 's5xx', 'last_used_at'])
    .where('key_id', '=', keyId)
    .where('bucket', '>=', start)
    .orderBy('bucket', 'asc')
    .execute();
}

/** Deletes, in batches, the hourly usage buckets older than `before`; answers how many. */
export async function purgeUsageBefore(db: Db, before: Date): Promise<number> {
  return purgeInBatches(db, 'api_key_usage', sql<boolean>`bucket < ${before}`);
}
