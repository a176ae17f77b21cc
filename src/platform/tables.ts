/** Table types of the platform (migrations 0001_platform, 0024_test_mode), merged into the database type. */
import type { ColumnType } from 'kysely';
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

/** Each account's test clock (docs/api.md#test-clock): test-mode time is real time plus `offset_ms`. */
export interface TestClocksTable {
  account_id: string;
  offset_ms: ColumnType<string, number | undefined, number>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

declare module '../db/types.js' {
  interface DB {
    rate_limit_windows: RateLimitWindowsTable;
    idempotency_keys: IdempotencyKeysTable;
    test_clocks: TestClocksTable;
  }
}
