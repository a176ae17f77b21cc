import { type Kysely, sql } from 'kysely';

/**
 * Test mode for consents and the network (docs/api.md#test-mode): the two modes never see each other's
 * objects, so each uniqueness of 0011_network holds per mode. A pair has at most one active consent,
 * one connection and (per inviter and address) one pending invitation in each mode: a test-mode grant,
 * connection or invitation between the account's shared principals neither merges into nor collides
 * with the live one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX consents_one_active_idx;
    CREATE UNIQUE INDEX consents_one_active_idx ON consents (grantor_id, grantee_id, livemode)
      WHERE status = 'active';

    ALTER TABLE network_connections DROP CONSTRAINT network_connections_pkey;
    ALTER TABLE network_connections ADD PRIMARY KEY (principal_a, principal_b, livemode);

    DROP INDEX network_invitations_one_pending_idx;
    CREATE UNIQUE INDEX network_invitations_one_pending_idx
      ON network_invitations (inviter_id, lower(invitee_email), livemode) WHERE status = 'pending';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DELETE FROM network_invitations WHERE NOT livemode;
    DELETE FROM network_connections WHERE NOT livemode;
    DELETE FROM consents WHERE NOT livemode;
    DROP INDEX network_invitations_one_pending_idx;
    CREATE UNIQUE INDEX network_invitations_one_pending_idx
      ON network_invitations (inviter_id, lower(invitee_email)) WHERE status = 'pending';
    ALTER TABLE network_connections DROP CONSTRAINT network_connections_pkey;
    ALTER TABLE network_connections ADD PRIMARY KEY (principal_a, principal_b);
    DROP INDEX consents_one_active_idx;
    CREATE UNIQUE INDEX consents_one_active_idx ON consents (grantor_id, grantee_id) WHERE status = 'active';
  `.execute(db);
}
