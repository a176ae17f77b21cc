import { type Kysely, sql } from 'kysely';

/**
 * Proposals and polls (docs/api.md#proposals-and-polls; docs/design.md#proposals-and-polls).
 *
 * - `proposals`: one row per proposal; every change of a proposal locks this row first, so answers,
 *   votes, the requester's close and the reaper are applied one at a time and a poll resolves once.
 *   `thread_id` groups a proposal with its counter-proposals; `open_token_hash` is an open poll's
 *   multi-use link; `resolution` is the stored result of a poll (docs/api.md#events fields).
 * - `proposal_slots`: the offered times, in the order given.
 * - `proposal_participants`: who answers. A standard participant is a principal; a named-poll invitee
 *   an address; an open-poll voter is added when voting (one per address, a unique index). Magic-link
 *   tokens are stored hashed and used once (`token_used_at`, set with the answer it carried).
 * - `bookings.proposal_id`: the bookings an accepted proposal made (cancelled with it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE proposals (
      id text PRIMARY KEY,
      thread_id text NOT NULL,
      parent_id text REFERENCES proposals (id),
      mode text NOT NULL CHECK (mode IN ('standard', 'poll')),
      poll_variant text CHECK (poll_variant IN ('named', 'open')),
      status text NOT NULL CHECK (status IN ('proposed', 'accepted', 'rejected', 'countered', 'cancelled', 'expired')),
      requester_id uuid NOT NULL REFERENCES principals (id),
      requester_account_id uuid NOT NULL REFERENCES accounts (id),
      title text,
      message text,
      metadata jsonb NOT NULL DEFAULT '{}',
      selected_slot_id text,
      open_token_hash text UNIQUE,
      resolution jsonb,
      booking_error text,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      resolved_at timestamptz,
      CHECK ((mode = 'poll') = (poll_variant IS NOT NULL))
    );
    CREATE INDEX proposals_requester_idx ON proposals (requester_id, created_at DESC, id DESC);
    CREATE INDEX proposals_thread_idx ON proposals (thread_id, created_at, id);
    CREATE INDEX proposals_due_idx ON proposals (expires_at) WHERE status = 'proposed';

    CREATE TABLE proposal_slots (
      id text PRIMARY KEY,
      proposal_id text NOT NULL REFERENCES proposals (id),
      position integer NOT NULL,
      start_time timestamptz NOT NULL,
      end_time timestamptz NOT NULL,
      UNIQUE (proposal_id, position),
      CHECK (end_time > start_time)
    );

    CREATE TABLE proposal_participants (
      id text PRIMARY KEY,
      proposal_id text NOT NULL REFERENCES proposals (id),
      position integer NOT NULL,
      principal_id uuid REFERENCES principals (id),
      account_id uuid REFERENCES accounts (id),
      email text,
      name text NOT NULL,
      response text NOT NULL CHECK (response IN ('pending', 'accepted', 'rejected', 'countered', 'voted')),
      voted_slot_id text REFERENCES proposal_slots (id),
      message text,
      token_hash text UNIQUE,
      token_used_at timestamptz,
      responded_at timestamptz,
      CHECK (principal_id IS NOT NULL OR email IS NOT NULL)
    );
    CREATE INDEX proposal_participants_proposal_idx ON proposal_participants (proposal_id, position);
    CREATE UNIQUE INDEX proposal_participants_principal_idx
      ON proposal_participants (proposal_id, principal_id) WHERE principal_id IS NOT NULL;
    CREATE UNIQUE INDEX proposal_participants_email_idx
      ON proposal_participants (proposal_id, lower(email)) WHERE email IS NOT NULL;
    CREATE INDEX proposal_participants_principal_lookup_idx
      ON proposal_participants (principal_id) WHERE principal_id IS NOT NULL;

    ALTER TABLE bookings ADD COLUMN proposal_id text REFERENCES proposals (id);
    CREATE INDEX bookings_proposal_idx ON bookings (proposal_id) WHERE proposal_id IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX bookings_proposal_idx;
    ALTER TABLE bookings DROP COLUMN proposal_id;
    DROP TABLE proposal_participants;
    DROP TABLE proposal_slots;
    DROP TABLE proposals;
  `.execute(db);
}
