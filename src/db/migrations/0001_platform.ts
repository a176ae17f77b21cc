import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE EXTENSION IF NOT EXISTS btree_gist;

    CREATE TABLE principals (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('account', 'host', 'user')),
      account_id uuid NOT NULL REFERENCES principals (id),
      display_name text NOT NULL,
      email text,
      timezone text NOT NULL DEFAULT 'UTC',
      status text NOT NULL DEFAULT 'active',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    );
    CREATE INDEX principals_account_idx ON principals (account_id, kind, created_at DESC);

    CREATE TABLE accounts (
      id uuid PRIMARY KEY REFERENCES principals (id),
      name text NOT NULL,
      plan text NOT NULL CHECK (plan IN ('free', 'premium', 'enterprise')),
      rate_limit_per_hour integer CHECK (rate_limit_per_hour > 0),
      created_at timestamptz NOT NULL
    );

    CREATE TABLE users (
      id uuid PRIMARY KEY REFERENCES principals (id),
      account_id uuid NOT NULL REFERENCES accounts (id),
      email text NOT NULL,
      password_hash text NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE UNIQUE INDEX users_email_idx ON users (lower(email));

    CREATE TABLE sessions (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz
    );

    CREATE TABLE api_keys (
      id uuid PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts (id),
      name text NOT NULL,
      description text,
      key_type text NOT NULL CHECK (key_type IN ('secret', 'publishable')),
      scopes text[] NOT NULL,
      key_hash text NOT NULL UNIQUE,
      prefix text NOT NULL,
      last4 text NOT NULL,
      rate_limit_per_hour integer CHECK (rate_limit_per_hour > 0),
      allowed_domains text[] NOT NULL DEFAULT '{}',
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    );
    CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at DESC, id DESC);

    CREATE TABLE rate_limit_windows (
      subject text NOT NULL,
      window_start timestamptz NOT NULL,
      consumed integer NOT NULL,
      last_grant integer NOT NULL DEFAULT 0,
      PRIMARY KEY (subject, window_start)
    );

    CREATE TABLE api_key_usage (
      key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
      bucket timestamptz NOT NULL,
      requests integer NOT NULL DEFAULT 0,
      rate_limited integer NOT NULL DEFAULT 0,
      s2xx integer NOT NULL DEFAULT 0,
      s4xx integer NOT NULL DEFAULT 0,
      s5xx integer NOT NULL DEFAULT 0,
      last_used_at timestamptz NOT NULL,
      PRIMARY KEY (key_id, bucket)
    );

    CREATE TABLE idempotency_keys (
      scope text NOT NULL,
      key text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      body_hash text NOT NULL,
      state text NOT NULL CHECK (state IN ('in_flight', 'done')),
      response_status integer,
      response_headers jsonb,
      response_body text,
      created_at timestamptz NOT NULL,
      locked_until timestamptz NOT NULL,
      PRIMARY KEY (scope, key)
    );
    CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

    CREATE TABLE jobs (
      id bigserial PRIMARY KEY,
      queue text NOT NULL,
      payload jsonb NOT NULL DEFAULT '{}',
      run_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      locked_by text,
      locked_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX jobs_due_idx ON jobs (run_at);

    CREATE TABLE job_schedules (
      name text PRIMARY KEY,
      next_run_at timestamptz NOT NULL
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE job_schedules, jobs, idempotency_keys, api_key_usage, rate_limit_windows, api_keys, sessions,
      users, accounts, principals;
  `.execute(db);
}
