/** Table types of the accounts module (migrations 0001_platform, 0023_user_names), merged into the database type. */
import type { Timestamp } from '../../db/types.js';

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
  /** The user's own name (migration 0023); null until given. */
  name: string | null;
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

declare module '../../db/types.js' {
  interface DB {
    accounts: AccountsTable;
    users: UsersTable;
    sessions: SessionsTable;
  }
}
