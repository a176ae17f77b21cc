/** The accounts module's public surface (docs/architecture.md#modules). */
export type { AccountService as AccountsApi, SessionClaims } from './service.js';
