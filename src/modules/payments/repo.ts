/** Every SQL statement of the payments module: `stripe_events` and `stripe_accounts` (tables.ts). */
import { type Insertable, sql, type Updateable } from 'kysely';
import { purgeInBatches } from '../../db/purge.js';
import type { Db, Tx } from '../../db/store.js';
import type { StripeAccountsTable, StripeEventsTable } from './tables.js';

/** An account's connected account, as the Connect routes and `payee` read it. */
export interface AccountRow {
  stripe_account_id: string;
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
}

/** Records a Stripe event's id; false when it was recorded before (the event took effect then). */
export async function recordEvent(trx: Tx, row: Insertable<StripeEventsTable>): Promise<boolean> {
  const inserted = await trx
    .insertInto('stripe_events')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** A connected account's readiness as Stripe reports it (`account.updated`). */
export async function updateAccountReadiness(
  trx: Tx,
  stripeAccountId: string,
  set: Updateable<StripeAccountsTable>,
): Promise<void> {
  await trx
    .updateTable('stripe_accounts')
    .set(set)
    .where('stripe_account_id', '=', stripeAccountId)
    .execute();
}

/** Stores an account's connected account unless it has one already (two racing requests end with one). */
export async function insertAccountOnce(db: Db, row: Insertable<StripeAccountsTable>): Promise<void> {
  await db
    .insertInto('stripe_accounts')
    .values(row)
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute();
}

export async function findAccount(db: Db, accountId: string): Promise<AccountRow | undefined> {
  return db
    .selectFrom('stripe_accounts')
    .select(['stripe_account_id', 'charges_enabled', 'payouts_enabled', 'details_submitted'])
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** Deletes the ids of Stripe events received before `before` (retention.ts); answers how many. */
export function purgeEventIds(db: Db, before: Date): Promise<number> {
  return purgeInBatches(db, 'stripe_events', sql<boolean>`received_at < ${before}`);
}
