import { type Kysely, sql } from 'kysely';

/**
 * Calendars module: connections (Google, Microsoft, CalDAV, ICS feeds), their calendars, the busy-time
 * cache and pending OAuth flows. Credentials (OAuth tokens, CalDAV passwords, ICS feed URLs, PKCE
 * verifiers) are stored only as AES-256-GCM envelopes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE calendar_connections (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      principal_id uuid NOT NULL REFERENCES principals (id),
      provider text NOT NULL CHECK (provider IN ('google', 'microsoft', 'caldav', 'ics')),
      dedupe_key text NOT NULL,
      display text NOT NULL,
      status text NOT NULL CHECK (status IN ('connected', 'disconnected')),
      status_reason text,
      credentials_enc text,
      token_expires_at timestamptz,
      server_url text,
      time_zone text NOT NULL DEFAULT 'UTC',
      last_used_at timestamptz NOT NULL,
      last_sync_at timestamptz,
      last_error text,
      last_error_at timestamptz,
      failure_count integer NOT NULL DEFAULT 0,
      retry_at timestamptz,
      refresh_queued_until timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (principal_id, provider, dedupe_key)
    );
    CREATE INDEX calendar_connections_account_idx ON calendar_connections (account_id);
    CREATE INDEX calendar_connections_sweep_idx ON calendar_connections (last_sync_at)
      WHERE status = 'connected';

    CREATE TABLE calendars (
      id text PRIMARY KEY,
      connection_id text NOT NULL REFERENCES calendar_connections (id) ON DELETE CASCADE,
      account_id uuid NOT NULL REFERENCES accounts (id),
      principal_id uuid NOT NULL REFERENCES principals (id),
      external_id text NOT NULL,
      source_key text NOT NULL,
      name text NOT NULL,
      is_primary boolean NOT NULL,
      selected boolean NOT NULL,
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (connection_id, external_id)
    );
    CREATE INDEX calendars_principal_idx ON calendars (principal_id, created_at);

    CREATE TABLE calendar_busy_cache (
      connection_id text PRIMARY KEY REFERENCES calendar_connections (id) ON DELETE CASCADE,
      window_start timestamptz NOT NULL,
      window_end timestamptz NOT NULL,
      busy jsonb NOT NULL,
      fetched_at timestamptz NOT NULL
    );

    CREATE TABLE calendar_oauth_flows (
      id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      principal_id uuid NOT NULL REFERENCES principals (id),
      provider text NOT NULL CHECK (provider IN ('google', 'microsoft')),
      verifier_enc text NOT NULL,
      redirect_uri text,
      client_state text,
      via_link boolean NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      consumed_at timestamptz
    );
    CREATE INDEX calendar_oauth_flows_expiry_idx ON calendar_oauth_flows (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE calendar_oauth_flows;
    DROP TABLE calendar_busy_cache;
    DROP TABLE calendars;
    DROP TABLE calendar_connections;
  `.execute(db);
}
