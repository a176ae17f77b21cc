/** Table types of the platform (migration 0001_platform), merged into the database type. */
import type { Json, Timestamp } from '../db/types.js';

export interface RateLimitWindowsTable {
  subject: string;
  window_start: Timestamp;
  consumed: number;
  last_grant: number;
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

declare module '../db/types.js' {
  interface DB {
    rate_limit_windows: RateLimitWindowsTable;
    idempotency_keys: IdempotencyKeysTable;
  }
}
