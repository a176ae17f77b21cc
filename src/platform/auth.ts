import { sql } from 'kysely';
import type { Notifier } from '../db/notify.js';
import type { Db, Tx } from '../db/store.js';
import type { Clock } from './clock.js';
import { Forbidden, Unauthorized } from './errors.js';

/** Channel on which credential revocations are announced to every process. */
export const AUTH_CHANNEL = 'kairos_auth';
/** What a publishable key may do (named in the 403 a publishable key gets elsewhere). */
export const PUBLISHABLE_SCOPES = ['read:availability', 'create:booking'] as const;

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
  /**
   * False for a test key (docs/api.md#test-mode): everything it reads and makes is of test mode. True
   * for live keys, sessions and anonymous callers (the public surface takes its mode from the link).
   */
  livemode: boolean;
  /**
   * The caller's time: the server's clock, or for a test key its account's test clock (set by the gate
   * per request; docs/api.md#test-clock). Every "now" of a use case acting for this caller reads it.
   */
  clock: Clock;
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

/**
 * Announces a revocation (`key:<id>` or `session:<id>`) to every process, inside the transaction
 * that revokes: the NOTIFY is delivered at commit, so never for a revocation that rolled back.
 * `account:<id>` announces a change of what the account's credentials carry (its plan or hourly
 * limit): every cached credential of the account is dropped and resolved again with the new values.
 */
export async function announceRevocation(db: Db | Tx, ref: string): Promise<void> {
  await sql`SELECT kairos_notify(${AUTH_CHANNEL}, ${ref})`.execute(db);
}

/** Where a revocation is announced to the process that made it, before it answers (a port for services). */
export interface RevocationListener {
  /**
   * `ref` is `key:<id>`, `session:<id>`, or `account:<id>` (every credential of the account: its
   * plan or limit changed); called after the revoking transaction committed.
   */
  revoked(ref: string): void;
}

/** The ref that drops every cached credential of an account (its plan or hourly limit changed). */
export function accountRef(accountId: string): string {
  return `account:${accountId}`;
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
  /** The tokens cached for each account (an `account:<id>` drop takes them all). */
  private readonly byAccount = new Map<string, Set<string>>();
  private generation = 0;

  constructor(private readonly clock: Clock) {}

  /** False while the LISTEN connection is lost: a revocation could go unheard, so nothing is cached. */
  private live = true;

  async listen(notifier: Notifier): Promise<void> {
    await notifier.listen(AUTH_CHANNEL, (payload) => this.revoked(payload));
    notifier.onLiveness((live) => {
      this.clear();
      this.live = live;
    });
  }

  revoked(ref: string): void {
    this.generation++;
    if (ref.startsWith('account:')) {
      const id = ref.slice('account:'.length);
      for (const token of this.byAccount.get(id) ?? []) this.entries.delete(token);
      this.byAccount.delete(id);
      return;
    }
    const token = this.byRef.get(ref);
    if (token) this.entries.delete(token);
    this.byRef.delete(ref);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.byRef.clear();
    this.byAccount.clear();
  }

  /** A mark to hand back to `store`: an answer read across a revocation is not kept. */
  mark(): number {
    return this.generation;
  }

  get(token: string): Caller | undefined {
    if (!this.live) return undefined;
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
    if (mark !== this.generation || !this.live) return;
    if (this.entries.size >= CACHE_MAX) this.clear();
    this.entries.set(token, { caller, expiresAt, cachedAt: now });
    this.byRef.set(ref, token);
    if (caller.accountId !== null) {
      const tokens = this.byAccount.get(caller.accountId);
      if (tokens) tokens.add(token);
      else this.byAccount.set(caller.accountId, new Set([token]));
    }
  }
}

/** What a credential resolves to: the caller, until when it may be cached, and its revocation ref. */
export interface ResolvedCredential {
  caller: Caller;
  /** When the credential expires (ms), or null. */
  expiresAt: number | null;
  /** `key:<id>` or `session:<id>`: what a revocation names. */
  ref: string;
}

/**
 * A kind of credential (API keys, user sessions): the port through which the modules that own them
 * authenticate, so the platform imports no module.
 */
export interface CredentialResolver {
  /** Whether a token has this resolver's form (a prefix, a shape); no I/O. */
  accepts(token: string): boolean;
  /** The caller behind a token it accepts; throws Unauthorized for anything not currently valid. */
  resolve(token: string, nowMs: number): Promise<ResolvedCredential>;
}

/** Resolves `Authorization: Bearer …` to a Caller, through the credential cache. */
export class Authenticator {
  constructor(
    private readonly resolvers: readonly CredentialResolver[],
    private readonly cache: CredentialCache,
    private readonly clock: Clock,
  ) {}

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
    const resolver = this.resolvers.find((r) => r.accepts(token));
    if (!resolver) throw new Unauthorized();
    const result = await resolver.resolve(token, now);
    this.cache.store(mark, token, result.ref, result.caller, result.expiresAt, now);
    return result.caller;
  }
}

export function anonymousCaller(ip: string, limit: number, clock: Clock): Caller {
  return {
    livemode: true,
    clock,
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
export function authorize(
  caller: Caller,
  access: Access,
  method: string,
  origin: string | undefined,
  scope?: 'read' | 'write',
): void {
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
  const needed = scope ?? (method === 'GET' || method === 'HEAD' ? 'read' : 'write');
  if (!caller.scopes.includes(needed)) {
    throw new Forbidden(`This key lacks the ${needed} scope this request requires`, {
      required_scope: needed,
    });
  }
}
