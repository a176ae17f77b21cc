/**
 * The console module's public surface: types only (docs/architecture.md#modules). The console is a
 * client of the API served under `/console` (README.md, Console); other modules need nothing of it.
 */
import type { AccountsApi } from '../accounts/api.js';

export interface ConsoleApi {
  /**
   * A fresh one-time setup link (`/console/setup?token=…`, a path on this server) while the server
   * has no account; null once it has one. The server logs one when it starts with no account.
   */
  setupLink(): Promise<string | null>;
}

export interface ConsoleNeeds {
  accounts: Pick<AccountsApi, 'listAccounts' | 'createAccount' | 'createUser' | 'createSession'>;
}
