/**
 * The API-keys module's public surface: types only (docs/architecture.md#modules). Secret and
 * publishable keys of an account: issued, listed, revoked, resolved for authentication.
 */
import type { Static } from '@sinclair/typebox';
import type { Tx } from '../../db/store.js';
import type { ListQuery } from '../../platform/schemas.js';
import type { ApiKey, ApiKeyList, CreateKeyBody } from './schemas.js';

export type KeyType = 'secret' | 'publishable';
export type Plan = 'free' | 'premium' | 'enterprise';

/** The API's view of a key (docs/api.md#api-keys): never the secret or its hash. */
export type PresentedKey = Static<typeof ApiKey>;

/** The mode a key acts in (docs/api.md#test-mode). */
export type KeyEnvironment = 'live' | 'test';

/** A stored key as authentication reads it: its hash, limits and what it needs of its account. */
export interface KeyCredential {
  id: string;
  account_id: string;
  key_type: KeyType;
  environment: KeyEnvironment;
  scopes: string[];
  key_hash: string;
  rate_limit_per_hour: number | null;
  allowed_domains: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  plan: Plan;
  account_custom_limit: number | null;
  account_name: string;
  account_created_at: Date;
}

/** What the API-keys module does for other modules (and for operators: `kairos keys …`). */
export interface ApiKeysApi {
  /** Creates a key in the account (in `trx` when given); the full value is in the result and nowhere else. */
  create(accountId: string, input: CreateKeyBody, trx?: Tx): Promise<{ key: string; api_key: PresentedKey }>;
  /** The account's keys (revoked and expired too), newest first, a page at a time. */
  list(accountId: string, opts: Static<typeof ListQuery>): Promise<Static<typeof ApiKeyList>>;
  /** Revokes a key: this process at once, every other one as soon as the notification arrives. */
  revoke(accountId: string, id: string): Promise<PresentedKey>;
  /** The account a key belongs to, or null. */
  accountOf(id: string): Promise<string | null>;
  /**
   * The account's allowed domains: every hostname its live publishable keys are locked to (an empty
   * list: none is locked, so any origin).
   */
  allowedDomains(accountId: string): Promise<string[]>;
  /** The key stored under a presented value's hash, or undefined. Compare `key_hash` with `hash(key)`. */
  resolve(key: string): Promise<KeyCredential | undefined>;
  /** The keyed hash a key is stored under. */
  hash(key: string): string;
  /** An account's hourly request limit: its plan's, or on the enterprise plan its own (`custom`) if set. */
  planLimit(plan: Plan, custom: number | null): number;
}

/** The API-keys module needs no other module. */
export type ApiKeysNeeds = Record<never, never>;

/** What the API-keys module needs to know of a key's account: its plan and own limit, name and age. */
export interface KeyAccount {
  plan: Plan;
  /** The account's own hourly limit (enterprise only), else null: the plan's. */
  rateLimitPerHour: number | null;
  name: string;
  createdAt: Date;
}

/**
 * Extension point `keyAccounts`: accounts as the API-keys module needs them, contributed by the
 * accounts module, which owns them and is built after this one (it creates each account's first key).
 */
export interface KeyAccounts {
  /** The account, read in `trx` when given (an account being created), or undefined when there is none. */
  find(accountId: string, trx?: Tx): Promise<KeyAccount | undefined>;
}

declare module '../module.js' {
  interface ExtensionPointTypes {
    keyAccounts: KeyAccounts;
  }
}
