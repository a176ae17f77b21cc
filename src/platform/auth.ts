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
 * Which credentials a route accepts (route metadata `config.access`, which every route must declare:
 * the app refuses to start otherwise, and the gate reads it from the matched route, never from the URL):
 * - `unmetered`: no credential looked at and no rate limit (health, readiness, metrics, docs, error pages);
 * - `none`: no credential looked at, rate-limited per client address (sign-in, OpenAPI document, OAuth
 *   callbacks, connect-link pages);
 * - `private`: secret keys and user sessions;
 * - `public`: the public booking surface: anonymous visitors, publishable keys, secret keys, sessions;
 * - `availability`: secret keys, sessions, and publishable keys (for their own account and its hosts,
 *   which the route itself checks with `assertOwnAccountOrHost`).
 */
export type Access = 'unmetered' | 'none' | 'private' | 'public' | 'availability';

/**
 * The path a request target names, as the router sees it: absolute-form scheme and authority dropped
 * (`GET http://host/v1/x` routes like `GET /v1/x`), query and fragment dropped.
 */
export function targetPath(target: string): string {
  let p = target;
  if (p.charCodeAt(0) !== 47 /* '/' */) {
    const abs = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(p);
    if (abs) p = p.slice(abs[0].length) || '/';
  }
  const cut = p.search(/[?#]/);
  return cut === -1 ? p : p.slice(0, cut);
}

/**
 * A request target reduced to a canonical path, for requests that match no route: percent-decoded
 * where it decodes, dot segments resolved, repeated slashes folded, lower-cased. So `//v1/hosts`,
 * `/./v1/hosts`, `/v1%2Fhosts` and `/V1/HOSTS` all count as `/v1/hosts`.
 */
export function canonicalPath(target: string): string {
  let p = targetPath(target);
  try {
    p = decodeURIComponent(p);
  } catch {
    // malformed percent-encoding: keep the text as sent
  }
  const out: string[] = [];
  for (const seg of p.split(/\/+/)) {
    if (seg === '.' || seg === '') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return `/${out.join('/')}`.toLowerCase();
}

/**
 * Access for a request that matches no route (its answer is 404 or 405; no handler runs). Under `/v1/`
 * a missing credential is 401 and a publishable key 403, as on the routes there, whatever spelling of
 * the path was sent; the public booking surface answers everyone 404.
 */
export function accessForUnmatched(target: string): Access {
  const path = canonicalPath(target);
  if (path === '/v1' || path.startsWith('/v1/public/')) return 'public';
  if (path.startsWith('/v1/')) return 'private';
  return 'unmetered';
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

/** Where a revocation is announced to the process that made it, before it answers (a port for services). */
export interface RevocationListener {
  /** `ref` is `key:<id>` or `session:<id>`; called after the revoking transaction committed. */
  revoked(ref: string): void;
}

/**
 * Positive authentication results, in memory for at most a minute. A revocation drops its entry: at
 * once in the process that revoked (`revoked`, before it answers) and in every other process when the
 * NOTIFY arrives; a lost LISTEN connection clears everything. Every drop moves `generation` on, and a
 * lookup that was under way across a drop does not store its (possibly stale) answer.
 */
export class CredentialCache implements RevocationListener {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly byRef = new Map<string, string>();
  private generation = 0;

  constructor(private readonly clock: Clock) {}

  async listen(notifier: Notifier): Promise<void> {
    await notifier.listen(AUTH_CHANNEL, (payload) => this.revoked(payload));
    notifier.onReconnect(() => this.clear());
  }

  revoked(ref: string): void {
    this.generation++;
    const token = this.byRef.get(ref);
    if (token) this.entries.delete(token);
    this.byRef.delete(ref);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.byRef.clear();
  }

  /** A mark to hand back to `store`: an answer read across a revocation is not kept. */
  mark(): number {
    return this.generation;
  }

  get(token: string): Caller | undefined {
    const hit = this.entries.get(token);
    if (!hit) return undefined;
    const now = this.clock.nowMs();
    if (now - hit.cachedAt < CACHE_TTL_MS && (hit.expiresAt === null || hit.expiresAt > now))
      return hit.caller;
    this.entries.delete(token);
    return undefined;
  }

  store(
    mark: number,
    token: string,
    ref: string,
    caller: Caller,
    expiresAt: number | null,
    now: number,
  ): void {
    if (mark !== this.generation) return;
    if (this.entries.size >= CACHE_MAX) this.clear();
    this.entries.set(token, { caller, expiresAt, cachedAt: now });
    this.byRef.set(ref, token);
  }
}

/** Resolves `Authorization: Bearer …` to a Caller, through the credential cache. */
export class Authenticator {
  constructor(
    private readonly keys: ApiKeyService,
    private readonly accounts: AccountService,
    private readonly clock: Clock,
    private readonly jwtKey: Buffer,
    private readonly cache: CredentialCache,
  ) {}

  /** Follows revocations made by other processes (NOTIFY) and LISTEN reconnects. */
  listen(notifier: Notifier): Promise<void> {
    return this.cache.listen(notifier);
  }

  /** The cached caller for a token, if it is cached and still valid; never touches the database. */
  cached(token: string): Caller | undefined {
    return this.cache.get(token);
  }

  /** The caller for a raw token; throws Unauthorized for anything not currently valid. */
  async authenticate(token: string): Promise<Caller> {
    const hit = this.cache.get(token);
    if (hit) return hit;
    const mark = this.cache.mark();
    const now = this.clock.nowMs();
    let result: { caller: Caller; expiresAt: number | null; ref: string };
    if (token.startsWith(SECRET_PREFIX) || token.startsWith(PUBLISHABLE_PREFIX)) {
      result = await this.fromKey(token, now);
    } else if (token.split('.').length === 3) {
      result = await this.fromSession(token, now);
    } else {
      throw new Unauthorized();
    }
    this.cache.store(mark, token, result.ref, result.caller, result.expiresAt, now);
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
  if (access === 'none' || access === 'unmetered') return;
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
