import type { ColumnType, Generated } from 'kysely';

/**
 * Table types. Modules add their own tables to `DB` by declaration merging in their own files:
 *   declare module '../../db/types.js' { interface DB { webhooks: WebhooksTable } }
 */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type Json<T = unknown> = ColumnType<T, string, string>;

export interface PrincipalsTable {
  id: string;
  kind: 'account' | 'host' | 'user';
  account_id: string;
  display_name: string;
  email: string | null;
  timezone: string;
  status: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface AccountsTable {
  id: string;
  name: string;
  plan: 'free' | 'premium' | 'enterprise';
  rate_limit_per_hour: number | null;
  created_at: Timestamp;
}

export interface UsersTable {
  id: string;
  account_id: string;
  email: string;
  password_hash: string;
  created_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  key_type: 'secret' | 'publishable';
  scopes: string[];
  key_hash: string;
  prefix: string;
  last4: string;
  rate_limit_per_hour: number | null;
  allowed_domains: string[];
  expires_at: Timestamp | null;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
}

export interface RateLimitWindowsTable {
  subject: string;
  window_start: Timestamp;
  consumed: number;
  last_grant: number;
}

export interface ApiKeyUsageTable {
  key_id: string;
  bucket: Timestamp;
  requests: number;
  rate_limited: number;
  s2xx: number;
  s4xx: number;
  s5xx: number;
  last_used_at: Timestamp;
}

export interface IdempotencyKeysTable {
  scope: string;
  key: string;
  method: string;
  path: string;
  body_hash: string;
  state: 'in_flight' | 'done';
  response_status: number | null;
  response_headers: Json<Record<string, string>> | null;
  response_body: string | null;
  created_at: Timestamp;
  locked_until: Timestamp;
}

export interface JobsTable {
  id: Generated<string>;
  queue: string;
  payload: Json;
  run_at: Timestamp;
  attempts: number;
  locked_by: string | null;
  locked_until: Timestamp | null;
  last_error: string | null;
  created_at: Timestamp;
}

export interface JobSchedulesTable {
  name: string;
  next_run_at: Timestamp;
}

export interface DB {
  principals: PrincipalsTable;
  accounts: AccountsTable;
  users: UsersTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  rate_limit_windows: RateLimitWindowsTable;
  api_key_usage: ApiKeyUsageTable;
  idempotency_keys: IdempotencyKeysTable;
  jobs: JobsTable;
  job_schedules: JobSchedulesTable;
}
