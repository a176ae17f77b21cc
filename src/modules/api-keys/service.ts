import { randomBytes } from 'node:crypto';
import type { Db, Tx } from '../../db/store.js';
import { announceRevocation, PUBLISHABLE_SCOPES, type RevocationListener } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import type { TestClocks } from '../../platform/test-clocks.js';
import { keyedHash } from '../../platform/crypto.js';
import { NotFound, ValidationFailed } from '../../platform/errors.js';
import { uuidv7 } from '../../platform/ids.js';
import { decodeCursor, page } from '../../platform/pagination.js';
import {
  findKey,
  findKeyAccount,
  findKeyByHash,
  insertKey,
  keyExists,
  listKeys,
  liveAllowedDomains,
  revokeKey,
} from './repo.js';
import type {
  ApiKeysApi,
  KeyAccount,
  KeyAccounts,
  KeyCredential,
  KeyEnvironment,
  KeyType,
  Plan,
  PresentedKey,
} from './api.js';
import type { Extensions, Platform } from '../module.js';
import { type CreateKeyBody, SECRET_SCOPES } from './schemas.js';
import type { Static } from '@sinclair/typebox';
import type { ListQuery } from '../../platform/schemas.js';

export const SECRET_PREFIX = 'svc_sk_live_';
export const PUBLISHABLE_PREFIX = 'svc_pk_live_';
/** Test keys' prefixes (docs/api.md#test-mode). */
export const SECRET_TEST_PREFIX = 'svc_sk_test_';
export const PUBLISHABLE_TEST_PREFIX = 'svc_pk_test_';

/** The prefix a key of this type and environment starts with. */
export function keyPrefix(keyType: KeyType, environment: KeyEnvironment): string {
  if (keyType === 'secret') return environment === 'live' ? SECRET_PREFIX : SECRET_TEST_PREFIX;
  return environment === 'live' ? PUBLISHABLE_PREFIX : PUBLISHABLE_TEST_PREFIX;
}
export const PLAN_LIMITS = { free: 100, premium: 1000 } as const;
export const ENTERPRISE_DEFAULT_LIMIT = 10_000;
export const MAX_KEY_RATE_LIMIT = 10_000_000;

export type { KeyType, Plan } from './api.js';

interface KeyRow {
  id: string;
  name: string;
  description: string | null;
  key_type: KeyType;
  environment: KeyEnvironment;
  scopes: string[];
  prefix: string;
  last4: string;
  rate_limit_per_hour: number | null;
  allowed_domains: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
  account_limit: number;
}

/** The API's view of a key: never the secret or its hash. */
export function presentKey(row: KeyRow, now: number): PresentedKey {
  const expiresAt = row.expires_at ? new Date(row.expires_at) : null;
  const status: 'active' | 'revoked' | 'expired' = row.revoked_at
    ? 'revoked'
    : expiresAt && expiresAt.getTime() <= now
      ? 'expired'
      : 'active';
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    key_type: row.key_type,
    environment: row.environment,
    scopes: row.scopes,
    prefix: row.prefix,
    last4: row.last4,
    rate_limit_per_hour: row.rate_limit_per_hour ?? row.account_limit,
    allowed_domains: row.allowed_domains,
    created_at: new Date(row.created_at).toISOString(),
    expires_at: expiresAt ? expiresAt.toISOString() : null,
    revoked_at: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
    status,
  };
}

export function planLimit(plan: Plan, custom: number | null): number {
  if (plan === 'enterprise') return custom ?? ENTERPRISE_DEFAULT_LIMIT;
  return PLAN_LIMITS[plan];
}

const HOSTNAME = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/;

function generateKey(keyType: KeyType, environment: KeyEnvironment): string {
  return keyPrefix(keyType, environment) + randomBytes(32).toString('base64url');
}

export class ApiKeyService implements ApiKeysApi {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly pepper: Buffer;
  private readonly revocations: RevocationListener;
  private readonly testClocks: Pick<TestClocks, 'ensure'>;

  constructor(
    platform: Pick<Platform, 'db' | 'clock' | 'keys' | 'revocations' | 'testClocks'>,
    private readonly extensions: Pick<Extensions, 'all'>,
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.pepper = platform.keys.apiKeyPepper;
    this.revocations = platform.revocations;
    this.testClocks = platform.testClocks;
  }

  /** The accounts behind keys, as the accounts module contributes them (extension point `keyAccounts`). */
  private get accounts(): KeyAccounts {
    const [accounts] = this.extensions.all('keyAccounts');
    if (!accounts) throw new Error('no module contributes keyAccounts (the accounts module does)');
    return accounts;
  }

  private async account(accountId: string, trx?: Tx): Promise<KeyAccount> {
    const acc = await this.accounts.find(accountId, trx);
    if (!acc) throw new NotFound('The account does not exist');
    return acc;
  }

  hash(key: string): string {
    return keyedHash(this.pepper, key);
  }

  private async accountLimit(accountId: string, trx?: Tx): Promise<{ plan: Plan; limit: number }> {
    const acc = await this.account(accountId, trx);
    return { plan: acc.plan, limit: planLimit(acc.plan, acc.rateLimitPerHour) };
  }

  /** Creates a key in the account; the full value is in the result and nowhere else, ever. */
  async create(
    accountId: string,
    input: CreateKeyBody,
    trx?: Tx,
  ): Promise<{ key: string; api_key: PresentedKey }> {
    const db = trx ?? this.db;
    const keyType = input.key_type ?? 'secret';
    const errors: Record<string, string> = {};
    const { plan, limit: accountLimit } = await this.accountLimit(accountId, trx);
    let scopes: string[];
    if (keyType === 'publishable') {
      scopes = [...PUBLISHABLE_SCOPES];
      if (input.scopes?.some((s) => !(PUBLISHABLE_SCOPES as readonly string[]).includes(s))) {
        errors.scopes = `publishable keys carry only ${PUBLISHABLE_SCOPES.join(' and ')}`;
      }
    } else {
      scopes = input.scopes && input.scopes.length > 0 ? [...new Set(input.scopes)] : [...SECRET_SCOPES];
      const bad = scopes.filter((s) => !(SECRET_SCOPES as readonly string[]).includes(s));
      if (bad.length) errors.scopes = `unknown scope ${bad[0]}; secret keys take read and write`;
      scopes.sort();
    }
    const domains = (input.allowed_domains ?? []).map((d) => d.trim().toLowerCase());
    domains.forEach((d, i) => {
      if (!HOSTNAME.test(d)) errors[`allowed_domains.${i}`] = 'must be a hostname such as example.com';
    });
    if (keyType === 'secret' && domains.length > 0) {
      errors.allowed_domains = 'applies to publishable keys only';
    }
    if (input.rate_limit_per_hour != null) {
      const max = plan === 'enterprise' ? MAX_KEY_RATE_LIMIT : accountLimit;
      if (input.rate_limit_per_hour > max) {
        errors.rate_limit_per_hour = `must be at most ${max} on the ${plan} plan`;
      }
    }
    let expiresAt: Date | null = null;
    if (input.expires_at) {
      expiresAt = new Date(input.expires_at);
      if (Number.isNaN(expiresAt.getTime())) errors.expires_at = 'must be an ISO 8601 timestamp';
      else if (expiresAt.getTime() <= this.clock.nowMs()) errors.expires_at = 'must be in the future';
    }
    if (Object.keys(errors).length) throw new ValidationFailed(errors);

    const environment = input.environment ?? 'live';
    // A test key's account gets its test clock now, so the periodic test-mode sweep knows it.
    if (environment === 'test') await this.testClocks.ensure(accountId);
    const key = generateKey(keyType, environment);
    const now = this.clock.now();
    const row = await insertKey(db, {
      id: uuidv7(now.getTime()),
      account_id: accountId,
      name: input.name,
      description: input.description ?? null,
      key_type: keyType,
      environment,
      scopes,
      key_hash: this.hash(key),
      prefix: key.slice(0, 16),
      last4: key.slice(-4),
      rate_limit_per_hour: input.rate_limit_per_hour ?? null,
      allowed_domains: domains,
      expires_at: expiresAt,
      created_at: now,
      revoked_at: null,
    });
    return { key, api_key: presentKey({ ...row, account_limit: accountLimit }, now.getTime()) };
  }

  private present(r: Omit<KeyRow, 'account_limit'>, acc: KeyAccount) {
    return presentKey({ ...r, account_limit: planLimit(acc.plan, acc.rateLimitPerHour) }, this.clock.nowMs());
  }

  async list(accountId: string, opts: Static<typeof ListQuery>) {
    const pos = decodeCursor(opts.cursor, 'uuid');
    const [acc, rows] = await Promise.all([
      this.account(accountId),
      listKeys(this.db, accountId, pos, opts.limit),
    ]);
    const { items, pagination } = page(rows, opts.limit);
    return { api_keys: items.map((r) => this.present(r, acc)), pagination };
  }

  async get(accountId: string, id: string) {
    const [acc, row] = await Promise.all([this.account(accountId), findKey(this.db, accountId, id)]);
    if (!row) throw new NotFound('No API key with this id');
    return this.present(row, acc);
  }

  /** Revokes a key: this process at once, every other one as soon as the notification arrives. */
  async revoke(accountId: string, id: string) {
    await this.db.transaction().execute(async (trx) => {
      const revoked = await revokeKey(trx, accountId, id, this.clock.now());
      if (!revoked && !(await keyExists(trx, accountId, id))) throw new NotFound('No API key with this id');
      await announceRevocation(trx, `key:${id}`);
    });
    // This process stops accepting the key before it answers; the others when the NOTIFY arrives.
    this.revocations.revoked(`key:${id}`);
    return this.get(accountId, id);
  }

  /**
   * The account's allowed domains: every hostname its live publishable keys are locked to (an empty
   * list: none is locked, so any origin). Pages of the account's links take `frame-ancestors` from it.
   */
  async allowedDomains(accountId: string): Promise<string[]> {
    return liveAllowedDomains(this.db, accountId, this.clock.now());
  }

  /** The account a key belongs to, or null (operators revoke keys by id alone: `kairos keys revoke`). */
  async accountOf(id: string): Promise<string | null> {
    return findKeyAccount(this.db, id);
  }

  /** The key behind a presented value, for authentication. */
  async resolve(key: string): Promise<KeyCredential | undefined> {
    const row = await findKeyByHash(this.db, this.hash(key));
    const acc = row && (await this.accounts.find(row.account_id));
    if (!row || !acc) return undefined;
    return {
      ...row,
      plan: acc.plan,
      account_custom_limit: acc.rateLimitPerHour,
      account_name: acc.name,
      account_created_at: acc.createdAt,
    };
  }

  planLimit(plan: Plan, custom: number | null): number {
    return planLimit(plan, custom);
  }
}
