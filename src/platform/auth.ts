import { jwtVerify } from 'jose';
import type { Notifier } from '../db/notify.js';
import type { AccountService } from '../modules/accounts/service.js';
import {
  AUTH_CHANNEL,
  type ApiKeyService,
  PUBLISHABLE_PREFIX,
  PUBLISHABLE_SCOPES,
  planLimit,
  SECRET_PREFIX,
} from '../modules/api-keys/service.js';
import type { Clock } from './clock.js';
import { safeEqual } from './crypto.js';
import { Forbidden, Unauthorized } from './errors.js';

export type CredentialKind = 'secret' | 'publishable' | 'session' | 'anonymous';

/** Who is calling. Every authenticated route gets one on `request.caller`. */
export interface Caller {
  kind: CredentialKind;
  /** The account (business) the credential belongs to; null for anonymous callers. */
  accountId: string | null;
  /** The principal acting: the account for API keys, the user for sessions. */
  principalId: string | null;
  keyId: string | null;
  userId: string | null;
  sessionId: string | null;
  scopes: string[];
  allowedDomains: string[];
  /** Requests per hour for this caller. */
  rateLimit: number;
  /** What the rate limit counts against: `key:<id>`, `user:<id>` or `ip:<addr>`. */
  rateSubject: string;
  /** The account as of authentication (cached with the credential, at most a minute). */
  account: AccountSnapshot | null;
}

export interface AccountSnapshot {
  id: string;
  name: string;
  plan: 'free' | 'premium' | 'enterprise';
  rate_limit_per_hour: number;
  created_at: string;
}

/**
 * Which credentials a route accepts (route metadata `config.access`):
 * - `none`: no credential looked at (health, docs, error pages);
 * - `private`: secret keys and user sessions (the default);
 * - `public`: the public booking surface: anonymous visitors, publishable keys, secret keys, sessions;
 * - `availability`: secret keys, sessions, and publishable keys (for their own account and its hosts,
 *   which the route itself checks with `assertOwnAccountOrHost`).
 */
export type Access = 'none' | 'private' | 'public' | 'availability';

/**
 * Access by path, for routes that declare nothing and for paths with no route yet. The public booking
 * surface and the two availability reads that publishable keys may call are declared here once, so that
 * every route under them gets the rule, and unknown paths elsewhere answer a publishable key with 403.
 */
export function accessForPath(path: string): Access {
  if (!path.startsWith('/v1/')) return 'none';
  if (path === '/healthz' || path === '/readyz' || path === '/metrics') return 'none';
  if (path.startsWith('/errors/') || path === '/docs' || path.startsWith('/docs/')) return 'none';
  if (path === '/v1/openapi.json') return 'none';
  if (path === '/v1/sessions') return 'none';
  if (path.startsWith('/v1/public/')) return 'public';
  if (path === '/v1/availability/slots' || path === '/v1/availability/next') return 'availability';
  return 'private';
}

export const PUBLISHABLE_DETAIL = 'This endpoint requires a secret key or user session';

export function publishableForbidden(): Forbidden {
  return new Forbidden(PUBLISHABLE_DETAIL, {
    key_type: 'publishable',
    available_scopes: [...PUBLISHABLE_SCOPES],
  });
}

/** Does `origin` (a full Origin header) fall under one of `domains` (hostnames; subdomains included)? */
export function originAllowed(origin: string, domains: string[]): boolean {
  let host: string;
  try {
    host = new URL(origin).hostname.toLowerCase();
  } catch {
    return false;
  }
  return domains.some((d) => host === d || host.endsWith(`.${d}`));
}

interface CacheEntry {
  caller: Caller;
  expiresAt: number | null;
  cachedAt: number;
}

const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 100_000;

/**
 * Resolves `Authorization: Bearer …` to a Caller. Positive results are cached in memory for at most a
 * minute; revocations (key or session) are announced with NOTIFY and drop the entry in every process at
 * once; a lost LISTEN connection clears the whole cache when it comes back.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly byRef = new Map<string, string>();

  constructor(
    private readonly keys: ApiKeyService,
    private readonly accounts: AccountService,
    private readonly clock: Clock,
    private readonly jwtKey: Buffer,
  ) {}

  async listen(notifier: Notifier): Promise<void> {
    await notifier.listen(AUTH_CHANNEL, (payload) => this.invalidate(payload));
    notifier.onReconnect(() => this.clear());
  }

  invalidate(ref: string): void {
    const token = this.byRef.get(ref);
    if (token) this.cache.delete(token);
    this.byRef.delete(ref);
  }

  clear(): void {
    this.cache.clear();
    this.byRef.clear();
  }

  /** The cached caller for a token, if it is cached and still valid; never touches the database. */
  cached(token: string): Caller | undefined {
    const hit = this.cache.get(token);
    if (!hit) return undefined;
    const now = this.clock.nowMs();
    if (now - hit.cachedAt < CACHE_TTL_MS && (hit.expiresAt === null || hit.expiresAt > now))
      return hit.caller;
    return undefined;
  }

  /** The caller for a raw token; throws Unauthorized for anything not currently valid. */
  async authenticate(token: string): Promise<Caller> {
    const hit = this.cached(token);
    if (hit) return hit;
    const now = this.clock.nowMs();
    this.cache.delete(token);
    let result: { caller: Caller; expiresAt: number | null; ref: string };
    if (token.startsWith(SECRET_PREFIX) || token.startsWith(PUBLISHABLE_PREFIX)) {
      result = await this.fromKey(token, now);
    } else if (token.split('.').length === 3) {
      result = await this.fromSession(token, now);
    } else {
      throw new Unauthorized();
    }
    if (this.cache.size >= CACHE_MAX) this.clear();
    this.cache.set(token, { caller: result.caller, expiresAt: result.expiresAt, cachedAt: now });
    this.byRef.set(result.ref, token);
    return result.caller;
  }

  private async fromKey(token: string, now: number) {
    if (token.length > 200) throw new Unauthorized();
    const row = await this.keys.resolve(token);
    if (!row || !safeEqual(row.key_hash, this.keys.hash(token))) throw new Unauthorized();
    const expiresAt = row.expires_at ? new Date(row.expires_at).getTime() : null;
    if (row.revoked_at !== null || (expiresAt !== null && expiresAt <= now)) throw new Unauthorized();
    if (!token.startsWith(row.key_type === 'secret' ? SECRET_PREFIX : PUBLISHABLE_PREFIX))
      throw new Unauthorized();
    const caller: Caller = {
      kind: row.key_type,
      accountId: row.account_id,
      principalId: row.account_id,
      keyId: row.id,
      userId: null,
      sessionId: null,
      scopes: row.scopes,
      allowedDomains: row.allowed_domains,
      rateLimit: row.rate_limit_per_hour ?? planLimit(row.plan, row.account_custom_limit),
      rateSubject: `key:${row.id}`,
      account: {
        id: row.account_id,
        name: row.account_name,
        plan: row.plan,
        rate_limit_per_hour: planLimit(row.plan, row.account_custom_limit),
        created_at: new Date(row.account_created_at).toISOString(),
      },
    };
    return { caller, expiresAt, ref: `key:${row.id}` };
  }

  private async fromSession(token: string, now: number) {
    let claims: { sub?: string; sid?: unknown; acc?: unknown; exp?: number };
    try {
      ({ payload: claims } = await jwtVerify(token, this.jwtKey, {
        algorithms: ['HS256'],
        issuer: 'kairos',
        currentDate: new Date(now),
      }));
    } catch {
      throw new Unauthorized();
    }
    const { sub, sid, acc, exp } = claims;
    if (typeof sub !== 'string' || typeof sid !== 'string' || typeof acc !== 'string')
      throw new Unauthorized();
    if (!(await this.accounts.sessionActive(sid))) throw new Unauthorized();
    const account = await this.accounts.getAccount(acc);
    const caller: Caller = {
      kind: 'session',
      accountId: acc,
      principalId: sub,
      keyId: null,
      userId: sub,
      sessionId: sid,
      scopes: ['read', 'write'],
      allowedDomains: [],
      rateLimit: account.rate_limit_per_hour,
      rateSubject: `user:${sub}`,
      account,
    };
    return { caller, expiresAt: exp ? exp * 1000 : null, ref: `session:${sid}` };
  }
}

export function anonymousCaller(ip: string, limit: number): Caller {
  return {
    kind: 'anonymous',
    accountId: null,
    principalId: null,
    keyId: null,
    userId: null,
    sessionId: null,
    scopes: [],
    allowedDomains: [],
    rateLimit: limit,
    rateSubject: `ip:${ip}`,
    account: null,
  };
}

/** Checks the credential kind against the route's access rule, the key's scopes and its allowed origins. */
export function authorize(caller: Caller, access: Access, method: string, origin: string | undefined): void {
  if (access === 'none') return;
  if (caller.kind === 'anonymous') {
    if (access !== 'public') throw new Unauthorized();
    return;
  }
  if (caller.kind === 'publishable') {
    if (access === 'private') throw publishableForbidden();
    if (
      origin !== undefined &&
      caller.allowedDomains.length > 0 &&
      !originAllowed(origin, caller.allowedDomains)
    ) {
      throw new Forbidden(`Origin ${origin} is not in this key's allowed domains`, {
        key_type: 'publishable',
      });
    }
    return;
  }
  const needed = method === 'GET' || method === 'HEAD' ? 'read' : 'write';
  if (!caller.scopes.includes(needed)) {
    throw new Forbidden(`This key lacks the ${needed} scope this request requires`, {
      required_scope: needed,
    });
  }
}
