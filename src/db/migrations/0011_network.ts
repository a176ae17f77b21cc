import { type Kysely, sql } from 'kysely';

/**
 * Consents and the network (docs/api.md#consents, #network; docs/design.md#consents-and-the-network).
 *
 * - `consents`: what a grantor lets a grantee do. At most one active consent per (grantor, grantee)
 *   (a partial unique index): granting again merges scopes into it, so racing grants end in one.
 * - `network_connections`: one row per connected pair, stored with the smaller id first.
 * - `network_invitations`: invitations by e-mail; the token is stored hashed; at most one pending
 *   invitation per inviter and address.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE consents (
      id text PRIMARY KEY,
      grantor_id uuid NOT NULL REFERENCES principals (id),
      grantee_id uuid NOT NULL REFERENCES principals (id),
      grantor_account_id uuid NOT NULL REFERENCES accounts (id),
      grantee_account_id uuid NOT NULL REFERENCES accounts (id),
      scopes text[] NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'revoked', 'expired')),
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      revoked_at timestamptz,
      CHECK (grantor_id <> grantee_id)
    );
    CREATE UNIQUE INDEX consents_one_active_idx ON consents (grantor_id, grantee_id) WHERE status = 'active';
    CREATE INDEX consents_grantee_idx ON consents (grantee_id, created_at, id);
    CREATE INDEX consents_grantor_idx ON consents (grantor_id, created_at, id);
    CREATE INDEX consents_expiry_idx ON consents (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;

    CREATE TABLE network_connections (
      principal_a uuid NOT NULL REFERENCES principals (id),
      principal_b uuid NOT NULL REFERENCES principals (id),
      relationship_type text NOT NULL,
      invitation_id text,
      connected_at timestamptz NOT NULL,
      PRIMARY KEY (principal_a, principal_b),
      CHECK (principal_a < principal_b)
    );
    CREATE INDEX network_connections_b_idx ON network_connections (principal_b);

    CREATE TABLE network_invitations (
      id text PRIMARY KEY,
      inviter_id uuid NOT NULL REFERENCES principals (id),
      inviter_account_id uuid NOT NULL REFERENCES accounts (id),
      invitee_email text NOT NULL,
      invitee_name text,
      relationship_type text NOT NULL,
      message text,
      status text NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'expired')),
      token_hash text NOT NULL UNIQUE,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      responded_at timestamptz,
      accepted_by uuid REFERENCES principals (id)
    );
    CREATE UNIQUE INDEX network_invitations_one_pending_idx
      ON network_invitations (inviter_id, lower(invitee_email)) WHERE status = 'pending';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE network_invitations;
    DROP TABLE network_connections;
    DROP TABLE consents;
  `.execute(db);
}
