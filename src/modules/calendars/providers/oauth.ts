/**
 * OAuth 2.0 authorization code flow with PKCE (RFC 6749, RFC 7636 S256) for Google and the
 * Microsoft identity platform. Pure functions over an injected fetch; token storage is the caller's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { type Clock, systemClock } from '../../../platform/clock.js';
import { isRecord, str } from './errors.js';
import { readJsonSafe } from './http.js';
import type { HttpFetch } from './types.js';

export type OAuthProvider = 'google' | 'microsoft';

export interface OAuthConfig {
  provider: OAuthProvider;
  clientId: string;
  clientSecret: string;
  /** Google: https://accounts.google.com/o/oauth2/v2/auth; Microsoft: .../{tenant}/oauth2/v2.0/authorize */
  authorizeUrl: string;
  /** Google: https://oauth2.googleapis.com/token; Microsoft: .../{tenant}/oauth2/v2.0/token */
  tokenUrl: string;
  /**
   * Scopes sent again on a Microsoft refresh (its token endpoint documents `scope` as required
   * there); default MICROSOFT_CALENDAR_SCOPES. Google ignores it.
   */
  scopes?: readonly string[];
}

export interface TokenSet {
  access_token: string;
  /** Google returns one only on the first consent (we force prompt=consent); Microsoft rotates it. */
  refresh_token?: string;
  /** Absolute expiry, epoch ms. */
  expires_at: number;
  scope?: string;
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

/** RFC 6749 5.2 error (`invalid_grant`, `invalid_client`, ...) or a transport failure. */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  /** RFC 6749 error code; `server_error` for an unreadable 5xx, `network_error` when fetch rejected. */
  readonly code: string;
  /** HTTP status of the token endpoint, 0 when no answer. */
  readonly status: number;
  readonly description?: string;

  constructor(code: string, status: number, description?: string, cause?: unknown) {
    super(description ? `${code}: ${description}` : code, cause === undefined ? undefined : { cause });
    this.code = code;
    this.status = status;
    if (description !== undefined) this.description = description;
  }
}

/** 32 random bytes → 43-char base64url verifier; challenge = BASE64URL(SHA256(verifier)). */
export function createPkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: pkceChallenge(verifier) };
}

export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export interface AuthorizeParams {
  redirectUri: string;
  state: string;
  challenge: string;
  scopes: readonly string[];
  /** Optional account hint (email) shown preselected by the provider. */
  loginHint?: string;
}

export function buildAuthorizeUrl(cfg: OAuthConfig, p: AuthorizeParams): string {
  const url = new URL(cfg.authorizeUrl);
  const scopes = [...p.scopes];
  if (cfg.provider === 'microsoft' && !scopes.includes('offline_access')) scopes.push('offline_access');
  const q = url.searchParams;
  q.set('client_id', cfg.clientId);
  q.set('response_type', 'code');
  q.set('redirect_uri', p.redirectUri);
  q.set('scope', scopes.join(' '));
  q.set('state', p.state);
  q.set('code_challenge', p.challenge);
  q.set('code_challenge_method', 'S256');
  if (cfg.provider === 'google') {
    // offline → a refresh token; consent → Google issues it again on a reconnect.
    q.set('access_type', 'offline');
    q.set('prompt', 'consent');
    q.set('include_granted_scopes', 'true');
  } else {
    q.set('response_mode', 'query');
  }
  if (p.loginHint) q.set('login_hint', p.loginHint);
  return url.toString();
}

export interface ExchangeParams {
  code: string;
  verifier: string;
  redirectUri: string;
}

export function exchangeCode(
  cfg: OAuthConfig,
  fetch: HttpFetch,
  p: ExchangeParams,
  clock: Pick<Clock, 'nowMs'> = systemClock,
): Promise<TokenSet> {
  return tokenRequest(
    cfg,
    fetch,
    {
      grant_type: 'authorization_code',
      code: p.code,
      redirect_uri: p.redirectUri,
      code_verifier: p.verifier,
    },
    clock,
  );
}

/** When the provider does not return a new refresh token (Google), the result has none: keep the old. */
export function refreshToken(
  cfg: OAuthConfig,
  fetch: HttpFetch,
  refreshTokenValue: string,
  clock: Pick<Clock, 'nowMs'> = systemClock,
): Promise<TokenSet> {
  const params: Record<string, string> = { grant_type: 'refresh_token', refresh_token: refreshTokenValue };
  if (cfg.provider === 'microsoft') {
    const scopes = [...(cfg.scopes ?? MICROSOFT_CALENDAR_SCOPES)];
    if (!scopes.includes('offline_access')) scopes.push('offline_access');
    params.scope = scopes.join(' ');
  }
  return tokenRequest(cfg, fetch, params, clock);
}

async function tokenRequest(
  cfg: OAuthConfig,
  fetch: HttpFetch,
  params: Record<string, string>,
  clock: Pick<Clock, 'nowMs'>,
): Promise<TokenSet> {
  // client_secret_post: both Google and Microsoft accept client credentials in the body.
  const body = new URLSearchParams({ ...params, client_id: cfg.clientId, client_secret: cfg.clientSecret });
  const sentAt = clock.nowMs();
  let res: Response;
  try {
    res = await fetch(cfg.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body.toString(),
    });
  } catch (err) {
    throw new OAuthError('network_error', 0, err instanceof Error ? err.message : String(err), err);
  }
  const json = await readJsonSafe(res);
  if (!res.ok) {
    if (isRecord(json) && typeof json.error === 'string') {
      throw new OAuthError(json.error, res.status, str(json.error_description));
    }
    throw new OAuthError(res.status >= 500 ? 'server_error' : 'invalid_response', res.status);
  }
  if (!isRecord(json) || typeof json.access_token !== 'string' || json.access_token === '') {
    throw new OAuthError('invalid_response', res.status, 'token response without access_token');
  }
  if (typeof json.token_type === 'string' && json.token_type.toLowerCase() !== 'bearer') {
    throw new OAuthError('invalid_response', res.status, `unsupported token_type ${json.token_type}`);
  }
  // expires_in is a number per RFC 6749 but some servers send a string; default to one hour.
  const expiresIn = Number(json.expires_in ?? 3600);
  const out: TokenSet = {
    access_token: json.access_token,
    expires_at: sentAt + (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600) * 1000,
  };
  if (typeof json.refresh_token === 'string' && json.refresh_token !== '') {
    out.refresh_token = json.refresh_token;
  }
  if (typeof json.scope === 'string') out.scope = json.scope;
  return out;
}

/**
 * Revokes a token at a revocation endpoint (RFC 7009; Google: POST oauth2.googleapis.com/revoke with
 * `token`, which ends the whole grant). 'revoked' on 200; 'invalid' when the server says the token is
 * unknown or already revoked (400 invalid_token): either way nothing is left to revoke. Throws
 * OAuthError for network failures and other answers, which are worth retrying.
 */
export async function revokeToken(
  revokeUrl: string,
  fetch: HttpFetch,
  token: string,
): Promise<'revoked' | 'invalid'> {
  let res: Response;
  try {
    res = await fetch(revokeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ token }).toString(),
    });
  } catch (err) {
    throw new OAuthError('network_error', 0, err instanceof Error ? err.message : String(err), err);
  }
  const json = await readJsonSafe(res);
  if (res.ok) return 'revoked';
  if (res.status === 400 && isRecord(json) && json.error === 'invalid_token') return 'invalid';
  const code = isRecord(json) && typeof json.error === 'string' ? json.error : 'server_error';
  throw new OAuthError(code, res.status, isRecord(json) ? str(json.error_description) : undefined);
}

/** Production endpoints; tests point the same config fields at the local emulators. */
export const GOOGLE_OAUTH_ENDPOINTS = {
  authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenUrl: 'https://oauth2.googleapis.com/token',
} as const;

export function microsoftOAuthEndpoints(tenant = 'common'): { authorizeUrl: string; tokenUrl: string } {
  const base = `https://login.microsoftonline.com/${encodeURIComponent(tenant)}/oauth2/v2.0`;
  return { authorizeUrl: `${base}/authorize`, tokenUrl: `${base}/token` };
}

/** Read-only access: free/busy plus the calendar list. */
/** Read calendars and busy time; write the events of bookings (calendar write-through). */
export const GOOGLE_CALENDAR_SCOPES = [
  'https://www.googleapis.com/auth/calendar.readonly',
  'https://www.googleapis.com/auth/calendar.events',
] as const;
export const MICROSOFT_CALENDAR_SCOPES = ['offline_access', 'User.Read', 'Calendars.ReadWrite'] as const;
