/**
 * The accounts module's public surface: types only (docs/architecture.md#modules). Accounts
 * (businesses), their users and the users' sign-in sessions.
 */
import type { Static } from '@sinclair/typebox';
import type { ApiKeysApi, Plan, PresentedKey } from '../api-keys/api.js';
import type { PrincipalsApi } from '../principals/api.js';
import type { Account, Session, SessionBody, User } from './schemas.js';

/** The claims of a session JWT: the user, the session row and the account. */
export interface SessionClaims {
  sub: string;
  sid: string;
  acc: string;
}

export type PresentedAccount = Static<typeof Account>;
export type PresentedUser = Static<typeof User>;

/** What the accounts module does for other modules (and for operators: `kairos accounts …`). */
export interface AccountsApi {
  /** Creates an account (a business and a principal) with its first secret key. */
  createAccount(input: {
    name: string;
    plan?: Plan;
    rateLimitPerHour?: number | null;
    timezone?: string;
  }): Promise<{ account: PresentedAccount; api_key: PresentedKey & { key: string } }>;
  getAccount(id: string): Promise<PresentedAccount>;
  /** Every account, oldest first. */
  listAccounts(): Promise<PresentedAccount[]>;
  /** Changes an account's plan and/or its own hourly limit; every process drops its cached credentials. */
  updateAccount(
    id: string,
    change: { plan?: Plan; rateLimitPerHour?: number | null },
  ): Promise<PresentedAccount>;
  createUser(input: {
    accountId: string;
    email: string;
    password: string;
    /** The user's own name; without one, others see the account's name (never the e-mail). */
    name?: string;
  }): Promise<PresentedUser>;
  /** Users, oldest first: of one account (which must exist), or of every account (operators). */
  listUsers(accountId?: string): Promise<PresentedUser[]>;
  /**
   * Sets the password of the user signing in with `email` (operators: `kairos users reset-password`)
   * and revokes the user's live sessions.
   */
  resetPassword(email: string, password: string): Promise<{ user: PresentedUser; sessions_revoked: number }>;
  /** Sets a user's own name, which is also how others see the user from then on. */
  renameUser(userId: string, name: string): Promise<PresentedUser>;
  /** Signs a user in: a short-lived JWT bound to a revocable session row. */
  createSession(body: SessionBody): Promise<Static<typeof Session>>;
  revokeSession(sessionId: string): Promise<void>;
  /** Whether a session is live (not revoked, not expired). */
  sessionActive(sessionId: string): Promise<boolean>;
  getUser(id: string): Promise<PresentedUser>;
  /** A user's sign-in e-mail, or null when there is no such user. */
  userEmail(userId: string): Promise<string | null>;
  /** The user signing in with this e-mail (compared case-insensitively), or null. */
  userIdByEmail(email: string): Promise<string | null>;
}

export interface AccountsNeeds {
  apiKeys: Pick<ApiKeysApi, 'create' | 'planLimit'>;
  principals: Pick<PrincipalsApi, 'insertPrincipal' | 'contacts' | 'renameUser'>;
}
