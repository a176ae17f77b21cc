/**
 * Table types of the apiKeys module (migration 0001_platform), merged into the database type. The
 * platform's usage recorder (src/platform/usage.ts) adds to `api_key_usage` per request in raw SQL; the
 * module reads it (key stats) and purges it (retention).
 */
import type { Generated } from 'kysely';
import type { Timestamp } from '../../db/types.js';

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  key_type: 'secret' | 'publishable';
  /** 'test' keys act in test mode (migration 0024, docs/api.md#test-mode). */
  environment: Generated<'live' | 'test'>;
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

declare module '../../db/types.js' {
  interface DB {
    api_keys: ApiKeysTable;
    api_key_usage: ApiKeyUsageTable;
  }
}
