import { type Kysely, sql } from 'kysely';

/**
 * Webhooks: subscriptions, the events outbox, deliveries and their attempts (docs/api.md#webhooks, #events, #signatures-and-retries).
 * Secrets are stored encrypted (AES-256-GCM envelopes), never in clear.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhooks (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      principal_id uuid NOT NULL REFERENCES principals (id),
      url text NOT NULL,
      events text[] NOT NULL,
      description text NOT NULL DEFAULT '',
      active boolean NOT NULL DEFAULT true,
      secret_enc text NOT NULL,
      previous_secret_enc text,
      previous_secret_expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX webhooks_account_idx ON webhooks (account_id, created_at DESC, id DESC);

    CREATE TABLE events (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      principal_id uuid REFERENCES principals (id),
      type text NOT NULL,
      data jsonb NOT NULL,
      envelope text NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX events_account_idx ON events (account_id, created_at DESC);

    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      event_id text NOT NULL REFERENCES events (id),
      event_type text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempt_count integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      pending_job text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (webhook_id, event_id)
    );
    CREATE INDEX webhook_deliveries_history_idx ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
    CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

    CREATE TABLE webhook_attempts (
      delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      number integer NOT NULL CHECK (number > 0),
      manual boolean NOT NULL,
      at timestamptz NOT NULL,
      response_status integer,
      duration_ms integer NOT NULL,
      error text,
      response_body text,
      PRIMARY KEY (delivery_id, number)
    );

    -- The job runner claims and computes its next wake-up per queue: a backlog of webhook jobs must
    -- not make claims in other queues scan it (and the reverse).
    CREATE INDEX jobs_queue_due_idx ON jobs (queue, run_at, id);
    CREATE INDEX jobs_leased_idx ON jobs (queue, locked_until) WHERE locked_until IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX jobs_leased_idx, jobs_queue_due_idx;
    DROP TABLE webhook_attempts, webhook_deliveries, events, webhooks;
  `.execute(db);
}
