/** Table types of the console module (migration 0015_console), merged into the database type. */
import type { Timestamp } from '../../db/types.js';

/** One-time setup links: the SHA-256 of the token (never the token), its expiry and when it was used. */
export interface ConsoleSetupTokensTable {
  token_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

declare module '../../db/types.js' {
  interface DB {
    console_setup_tokens: ConsoleSetupTokensTable;
  }
}
