/**
 * The authorization-server half shared by the Google and Microsoft emulators: authorization codes
 * bound to client, redirect URI and PKCE challenge; access and refresh tokens; revocation controls.
 * Each emulator supplies its dialect (error bodies, when a refresh token is issued, rotation).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { type EmuResponse, html, json, type RunningServer, redirect } from './http.js';

export interface OAuthDialect {
  /** Token-endpoint error body for `error`. */
  tokenError(error: string, description: string): Record<string, unknown>;
  /** Whether the authorize request asked for offline access (→ a refresh token). */
  wantsRefreshToken(query: URLSearchParams): boolean;
  /** Microsoft issues a new refresh token on every refresh; Google does not. */
  rotateRefreshTokens: boolean;
  /** Scopes granted for the requested ones (Google echoes URLs; Microsoft drops offline_access etc.). */
  grantedScope(requested: string): string;
}

export interface OAuthServerOptions {
  clientId: string;
  clientSecret: string;
  /** Registered redirect URIs; undefined accepts any http(s) URI (handy for the server's tests). */
  redirectUris?: readonly string[];
  tokenLifetimeSeconds: number;
  /** Time source for expiry, default Date.now. */
  now?: () => number;
}

interface AuthCode {
  clientId: string;
  redirectUri: string;
  challenge?: string;
  scope: string;
  user: string;
  refresh: boolean;
  expiresAt: number;
  used: boolean;
  issued: string[];
}

export interface AccessGrant {
  user: string;
  scope: string;
  expiresAt: number;
}

interface RefreshGrant {
  user: string;
  scope: string;
  clientId: string;
  revoked: boolean;
}

export type AccessCheck =
  | { ok: true; grant: AccessGrant }
  | { ok: false; reason: 'missing' | 'invalid' | 'expired' };

export class OAuthServer {
  readonly clientId: string;
  readonly clientSecret: string;
  tokenLifetimeSeconds: number;
  /** Whom the next authorize request signs in as. */
  currentUser = 'user@example.com';
  /** When set, the next authorize redirects with error=access_denied (the user clicked Cancel). */
  denyNext = false;
  readonly counts = { authorize: 0, token: 0, authorizationCode: 0, refresh: 0, tokenErrors: 0 };

  private readonly redirectUris?: readonly string[];
  private readonly now: () => number;
  private readonly codes = new Map<string, AuthCode>();
  private readonly access = new Map<string, AccessGrant>();
  private readonly refresh = new Map<string, RefreshGrant>();

  constructor(
    private readonly dialect: OAuthDialect,
    opts: OAuthServerOptions,
  ) {
    this.clientId = opts.clientId;
    this.clientSecret = opts.clientSecret;
    if (opts.redirectUris) this.redirectUris = opts.redirectUris;
    this.tokenLifetimeSeconds = opts.tokenLifetimeSeconds;
    this.now = opts.now ?? Date.now;
  }

  /** GET authorize: validates like the real one, then consents at once and redirects with code+state. */
  authorize(q: URLSearchParams): EmuResponse {
    this.counts.authorize++;
    const clientId = q.get('client_id');
    if (clientId !== this.clientId) return html(401, 'invalid_client: The OAuth client was not found.');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!this.redirectAllowed(redirectUri)) {
      return html(400, `redirect_uri_mismatch: ${redirectUri} is not registered for this client.`);
    }
    const back = (params: Record<string, string>): EmuResponse => {
      const url = new URL(redirectUri);
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      const state = q.get('state');
      if (state !== null) url.searchParams.set('state', state);
      return redirect(url.toString());
    };
    if (q.get('response_type') !== 'code') {
      return back({ error: 'unsupported_response_type', error_description: 'response_type must be code' });
    }
    const scope = (q.get('scope') ?? '').trim();
    if (!scope)
      return back({ error: 'invalid_request', error_description: 'Missing required parameter: scope' });
    const challenge = q.get('code_challenge') ?? undefined;
    const method = q.get('code_challenge_method');
    if (challenge !== undefined) {
      if (method !== 'S256') {
        return back({ error: 'invalid_request', error_description: 'code_challenge_method must be S256' });
      }
      if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
        return back({ error: 'invalid_request', error_description: 'Invalid code_challenge' });
      }
    }
    if (this.denyNext) {
      this.denyNext = false;
      return back({ error: 'access_denied', error_description: 'The user denied the request' });
    }
    const code = `code_${randomBytes(18).toString('base64url')}`;
    const entry: AuthCode = {
      clientId: this.clientId,
      redirectUri,
      scope: this.dialect.grantedScope(scope),
      user: this.currentUser,
      refresh: this.dialect.wantsRefreshToken(q),
      expiresAt: this.now() + 10 * 60_000,
      used: false,
      issued: [],
    };
    if (challenge !== undefined) entry.challenge = challenge;
    this.codes.set(code, entry);
    return back({ code });
  }

  /** POST token (form-encoded), grants authorization_code and refresh_token. */
  token(body: string, headers: IncomingHttpHeaders): EmuResponse {
    this.counts.token++;
    const form = new URLSearchParams(body);
    const fail = (status: number, error: string, description: string): EmuResponse => {
      this.counts.tokenErrors++;
      return json(status, this.dialect.tokenError(error, description), { 'cache-control': 'no-store' });
    };
    const ctype = String(headers['content-type'] ?? '');
    if (!ctype.startsWith('application/x-www-form-urlencoded')) {
      return fail(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
    }
    let clientId = form.get('client_id');
    let secret = form.get('client_secret');
    const basic = /^Basic\s+(.+)$/i.exec(String(headers.authorization ?? ''));
    if (basic?.[1]) {
      const [id, sec] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
      clientId = decodeURIComponent(id ?? '');
      secret = decodeURIComponent(sec ?? '');
    }
    if (clientId !== this.clientId || secret !== this.clientSecret) {
      return fail(401, 'invalid_client', 'Unauthorized: client authentication failed');
    }
    const grant = form.get('grant_type');
    if (grant === 'authorization_code') {
      this.counts.authorizationCode++;
      const code = this.codes.get(form.get('code') ?? '');
      if (!code) return fail(400, 'invalid_grant', 'Malformed auth code.');
      if (code.used) {
        // RFC 6749 4.1.2: a reused code revokes what it issued.
        for (const t of code.issued) {
          this.access.delete(t);
          const r = this.refresh.get(t);
          if (r) r.revoked = true;
        }
        return fail(400, 'invalid_grant', 'Authorization code has already been used.');
      }
      code.used = true;
      if (code.expiresAt <= this.now()) return fail(400, 'invalid_grant', 'Authorization code has expired.');
      if (form.get('redirect_uri') !== code.redirectUri) {
        return fail(400, 'invalid_grant', 'redirect_uri does not match the authorization request.');
      }
      if (code.challenge !== undefined) {
        const verifier = form.get('code_verifier');
        if (!verifier) return fail(400, 'invalid_grant', 'Missing code verifier.');
        const expected = createHash('sha256').update(verifier, 'ascii').digest('base64url');
        if (expected !== code.challenge) return fail(400, 'invalid_grant', 'Invalid code verifier.');
      }
      const out = this.issue(code.user, code.scope, code.refresh);
      code.issued.push(String(out.access_token));
      if (typeof out.refresh_token === 'string') code.issued.push(out.refresh_token);
      return json(200, out, { 'cache-control': 'no-store' });
    }
    if (grant === 'refresh_token') {
      this.counts.refresh++;
      const token = form.get('refresh_token') ?? '';
      const r = this.refresh.get(token);
      if (!r || r.revoked || r.clientId !== clientId) {
        return fail(400, 'invalid_grant', 'Token has been expired or revoked.');
      }
      // A scope on refresh may narrow the grant, never widen it.
      const asked = form.get('scope');
      let scope = r.scope;
      if (asked !== null) {
        const granted = new Set(r.scope.split(' '));
        const wanted = this.dialect.grantedScope(asked).split(' ').filter(Boolean);
        if (wanted.some((w) => !granted.has(w))) {
          return fail(
            400,
            'invalid_scope',
            'The requested scope exceeds the scope granted by the resource owner.',
          );
        }
        if (wanted.length > 0) scope = wanted.join(' ');
      }
      const out = this.issue(r.user, scope, this.dialect.rotateRefreshTokens);
      return json(200, out, { 'cache-control': 'no-store' });
    }
    return fail(400, 'unsupported_grant_type', `Invalid grant_type: ${grant ?? ''}`);
  }

  checkBearer(authorization: string | undefined): AccessCheck {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!m?.[1]) return { ok: false, reason: 'missing' };
    const grant = this.access.get(m[1]);
    if (!grant) return { ok: false, reason: 'invalid' };
    if (grant.expiresAt <= this.now()) return { ok: false, reason: 'expired' };
    return { ok: true, grant };
  }

  expireAccessTokens(): void {
    for (const g of this.access.values()) g.expiresAt = 0;
  }

  revokeRefreshTokens(): void {
    for (const r of this.refresh.values()) r.revoked = true;
  }

  /**
   * Google's revocation endpoint (POST /revoke, form `token=`): an access or refresh token; either
   * ends the whole grant (the user's refresh tokens and access tokens). 400 invalid_token when the
   * token is unknown or already revoked.
   */
  revokeEndpoint(body: string, headers: IncomingHttpHeaders): EmuResponse {
    const ctype = String(headers['content-type'] ?? '');
    if (!ctype.startsWith('application/x-www-form-urlencoded')) {
      return json(400, { error: 'invalid_request', error_description: 'Bad Request' });
    }
    const token = new URLSearchParams(body).get('token') ?? '';
    const r = this.refresh.get(token);
    const user = r && !r.revoked ? r.user : this.access.get(token)?.user;
    if (user === undefined) {
      return json(400, { error: 'invalid_token', error_description: 'Token expired or revoked' });
    }
    for (const x of this.refresh.values()) if (x.user === user) x.revoked = true;
    for (const [t, g] of this.access) if (g.user === user) this.access.delete(t);
    this.revoked.push(token);
    return json(200, {});
  }

  /** Tokens revoked through the revocation endpoint, in order. */
  readonly revoked: string[] = [];

  /** Whether a refresh token still works. */
  refreshTokenValid(token: string): boolean {
    const r = this.refresh.get(token);
    return r !== undefined && !r.revoked;
  }

  /** Mints an access token directly (tests that skip the consent dance). */
  issueAccessToken(user = this.currentUser, scope = 'calendar'): string {
    return String(this.issue(user, scope, false).access_token);
  }

  private issue(user: string, scope: string, withRefresh: boolean): Record<string, unknown> {
    const accessToken = `at_${randomBytes(24).toString('base64url')}`;
    this.access.set(accessToken, { user, scope, expiresAt: this.now() + this.tokenLifetimeSeconds * 1000 });
    const out: Record<string, unknown> = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: this.tokenLifetimeSeconds,
      scope,
    };
    if (withRefresh) {
      const rt = `rt_${randomBytes(24).toString('base64url')}`;
      this.refresh.set(rt, { user, scope, clientId: this.clientId, revoked: false });
      out.refresh_token = rt;
    }
    return out;
  }

  private redirectAllowed(uri: string): boolean {
    if (this.redirectUris) return this.redirectUris.includes(uri);
    try {
      const u = new URL(uri);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hash === '';
    } catch {
      return false;
    }
  }
}

/** failNext(n, status, retryAfter) bookkeeping shared by the API halves. */
export class FailureQueue {
  private remaining = 0;
  private status = 500;
  private retryAfterSeconds: number | undefined;
  private holds = 0;
  private holdMs = 0;

  set(n: number, status: number, retryAfterSeconds?: number): void {
    this.remaining = n;
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
    if (n === 0) this.holds = 0;
  }

  /** The next n API calls are held `ms` before they are answered (see holdNext). */
  hold(n: number, ms: number): void {
    this.holds = n;
    this.holdMs = ms;
  }

  /** Consumes one pending hold, if any: how long to hold the call. */
  takeHold(): number | undefined {
    if (this.holds <= 0) return undefined;
    this.holds--;
    return this.holdMs;
  }

  /** Consumes one pending failure, if any. */
  take(): { status: number; retryAfterSeconds: number | undefined } | undefined {
    if (this.remaining <= 0) return undefined;
    this.remaining--;
    return { status: this.status, retryAfterSeconds: this.retryAfterSeconds };
  }
}

/** The token and failure controls every provider emulator offers. */
export interface AuthControls {
  expireAccessTokens(): void;
  revokeRefreshTokens(): void;
  setTokenLifetime(seconds: number): void;
  /** The next n API calls fail with `status`, in the provider's error format (429 with Retry-After). */
  failNext(n: number, status: number, retryAfterSeconds?: number): void;
  /**
   * The next n API calls are answered only after `ms` (then as usual): a provider slower than the
   * client's time limit (KAIROS_PROVIDER_TIMEOUT_MS), which gives up first.
   */
  holdNext(n: number, ms: number): void;
  /** The next authorize redirects with error=access_denied (the user clicked Cancel). */
  denyNextAuthorization(): void;
}

/** AuthControls over an emulator's OAuth server and failure queue. */
export function authControls(oauth: OAuthServer, failures: FailureQueue): AuthControls {
  return {
    expireAccessTokens: () => oauth.expireAccessTokens(),
    revokeRefreshTokens: () => oauth.revokeRefreshTokens(),
    setTokenLifetime(seconds: number) {
      oauth.tokenLifetimeSeconds = seconds;
    },
    failNext: (n: number, status: number, retryAfterSeconds?: number) =>
      failures.set(n, status, retryAfterSeconds),
    holdNext: (n: number, ms: number) => failures.hold(n, ms),
    denyNextAuthorization() {
      oauth.denyNext = true;
    },
  };
}

/**
 * The gate before an emulator's API routes, in the order the real APIs check: the bearer token (a
 * refused one answered by `unauthorized`), then a failure injected with failNext (answered by
 * `failure`, with Retry-After when one was asked for). Every refusal counts in `requests.apiErrors`.
 */
export function apiGate(
  oauth: OAuthServer,
  failures: FailureQueue,
  requests: { apiErrors: number },
  answers: {
    unauthorized(reason: Exclude<AccessCheck, { ok: true }>['reason']): EmuResponse;
    failure(status: number, headers: Record<string, string>): EmuResponse;
  },
): (authorization: string | undefined) => { user: string } | { refused: EmuResponse } {
  return (authorization) => {
    const auth = oauth.checkBearer(authorization);
    if (!auth.ok) {
      requests.apiErrors++;
      return { refused: answers.unauthorized(auth.reason) };
    }
    const f = failures.take();
    if (f) {
      requests.apiErrors++;
      const headers: Record<string, string> =
        f.retryAfterSeconds === undefined ? {} : { 'retry-after': String(f.retryAfterSeconds) };
      return { refused: answers.failure(f.status, headers) };
    }
    return { user: auth.grant.user };
  };
}

/** Holds the calls under `prefix` that holdNext asked to hold. */
export function holdApiCalls(server: RunningServer, prefix: string, failures: FailureQueue): void {
  server.holdRequests((req) => (req.url.pathname.startsWith(prefix) ? failures.takeHold() : undefined));
}
