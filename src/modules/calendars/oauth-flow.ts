/**
 * Connecting a Google or Microsoft calendar with OAuth: starting an authorization code flow (PKCE)
 * and finishing it when the provider sends the browser back.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/store.js';
import type { Actor } from '../../platform/actor.js';
import type { Clock } from '../../platform/clock.js';
import { encryptSecret, keyedHash, randomToken, safeEqual } from '../../platform/crypto.js';
import { Unprocessable, ValidationFailed } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import type { DerivedKeys } from '../../platform/keys.js';
import type { Connections } from './connections.js';
import type { Credentials, ListedCalendar, ProviderGateway } from './gateway.js';
import { buildAuthorizeUrl, createPkce, exchangeCode, OAuthError, ProviderError } from './providers/index.js';
import { consumeFlow, type FlowRow, insertFlow } from './repo.js';
import { signToken, verifyToken } from './signed.js';
import type { OAuthProviderName, ProviderName } from './tables.js';

export const OAUTH_PROVIDERS: readonly OAuthProviderName[] = ['google', 'microsoft'];
/** How long an OAuth flow (consent screen → callback) may take. */
export const OAUTH_FLOW_MS = 15 * 60_000;
/** Name prefix of the cookie binding a connect-link flow to its browser (the flow id follows). */
const BINDING_COOKIE = 'kairos_connect_';

export const PROVIDER_TITLES: Record<ProviderName, string> = {
  google: 'Google Calendar',
  microsoft: 'Microsoft Outlook',
  caldav: 'CalDAV',
  ics: 'ICS feed',
};

/** What the OAuth callback (or a connect link) answers: a redirect, or a small page for a person. */
export type BrowserOutcome = (
  | { kind: 'redirect'; location: string }
  | {
      kind: 'page';
      status: number;
      title: string;
      message: string;
      links?: { label: string; url: string }[];
      /** Forms posted back (application/x-www-form-urlencoded): CalDAV and ICS on a connect link. */
      forms?: {
        title: string;
        action: string;
        fields: { name: string; label: string; type: 'text' | 'url' | 'password' }[];
        submit: string;
      }[];
    }
) & { cookies?: string[] };

function validRedirectUri(uri: string | undefined, errors: Record<string, string>): void {
  if (uri === undefined) return;
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    errors.redirect_uri = 'must be an absolute URL';
    return;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    errors.redirect_uri = 'must be an http or https URL';
  } else if (parsed.hash !== '') {
    errors.redirect_uri = 'must not have a fragment';
  }
}

export interface OAuthFlowDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'baseUrl'>;
  keys: Pick<DerivedKeys, 'encryptionKey' | 'linkKey'>;
  gateway: Pick<
    ProviderGateway,
    'configured' | 'oauthConfig' | 'tokenFetch' | 'decryptVerifier' | 'listOAuthCalendars' | 'encrypt'
  >;
  connections: Pick<Connections, 'store'>;
}

export class OAuthFlow {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: OAuthFlowDeps['config'];
  private readonly keys: OAuthFlowDeps['keys'];
  private readonly gateway: OAuthFlowDeps['gateway'];
  private readonly connections: OAuthFlowDeps['connections'];

  constructor(deps: OAuthFlowDeps) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
    this.keys = deps.keys;
    this.gateway = deps.gateway;
    this.connections = deps.connections;
  }

  callbackUrl(provider: OAuthProviderName): string {
    return `${this.config.baseUrl}/v1/calendars/${provider}/callback`;
  }

  configuredProviders(): OAuthProviderName[] {
    return OAUTH_PROVIDERS.filter((p) => this.gateway.configured(p));
  }

  /**
   * Starts an authorization code flow with PKCE (S256): the verifier stays here (encrypted, one use),
   * and `state` is a signed, expiring reference to it bound to the principal.
   */
  async startOAuth(
    actor: Actor,
    provider: OAuthProviderName,
    opts: { redirectUri?: string; clientState?: string },
  ): Promise<{ authorize_url: string; expires_at: string }> {
    const { authorize_url, expires_at } = await this.beginOAuth(actor, provider, opts);
    return { authorize_url, expires_at };
  }

  /**
   * Starts a flow for a host who opened their connect link: the consent screen to send the browser to,
   * and the cookie that binds the flow to that browser (see finishOAuth).
   */
  async startViaLink(
    actor: Actor,
    provider: OAuthProviderName,
  ): Promise<{ authorize_url: string; cookie: string }> {
    const started = await this.beginOAuth(actor, provider, {
      viaLink: true,
    });
    return {
      authorize_url: started.authorize_url,
      cookie: this.bindingCookie(provider, started.flowId, started.browserBinding!, OAUTH_FLOW_MS / 1000),
    };
  }

  /** Starts a flow; one from a connect link (`viaLink`) also gets a browser binding (see finishOAuth). */
  private async beginOAuth(
    actor: Actor,
    provider: OAuthProviderName,
    opts: { redirectUri?: string; clientState?: string; viaLink?: boolean },
  ): Promise<{ authorize_url: string; expires_at: string; flowId: string; browserBinding?: string }> {
    const errors: Record<string, string> = {};
    validRedirectUri(opts.redirectUri, errors);
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
    if (!this.gateway.configured(provider)) {
      const env = provider === 'google' ? 'GOOGLE' : 'MICROSOFT';
      throw new Unprocessable(
        `${PROVIDER_TITLES[provider]} is not configured on this server (set ${env}_CLIENT_ID and ` +
          `${env}_CLIENT_SECRET)`,
      );
    }
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + OAUTH_FLOW_MS);
    const pkce = createPkce();
    const flowId = prefixedId('oaf', now.getTime());
    // A flow from a connect link runs in the host's browser: bind it there (see finishOAuth).
    const browserBinding = opts.viaLink ? randomToken(32) : undefined;
    await insertFlow(this.db, {
      id: flowId,
      account_id: actor.accountId,
      principal_id: actor.principalId,
      provider,
      verifier_enc: encryptSecret(this.keys.encryptionKey, pkce.verifier),
      redirect_uri: opts.redirectUri ?? null,
      client_state: opts.clientState ?? null,
      via_link: opts.viaLink ?? false,
      created_at: now,
      expires_at: expiresAt,
      consumed_at: null,
    });
    const cfg = this.gateway.oauthConfig(provider);
    const state = signToken(
      this.keys.linkKey,
      'oauth-state',
      {
        f: flowId,
        p: actor.principalId,
        v: provider,
        ...(browserBinding ? { b: keyedHash(this.keys.linkKey, browserBinding) } : {}),
      },
      expiresAt.getTime(),
    );
    const authorizeUrl = buildAuthorizeUrl(cfg, {
      redirectUri: this.callbackUrl(provider),
      state,
      challenge: pkce.challenge,
      scopes: cfg.scopes ?? [],
    });
    return {
      authorize_url: authorizeUrl,
      expires_at: expiresAt.toISOString(),
      flowId,
      ...(browserBinding ? { browserBinding } : {}),
    };
  }

  /** The cookie that binds a connect-link flow to the browser, scoped to the provider's callback. */
  private bindingCookie(provider: OAuthProviderName, flowId: string, value: string, maxAgeSeconds: number) {
    const callback = new URL(this.callbackUrl(provider));
    const secure = callback.protocol === 'https:' ? '; Secure' : '';
    return (
      `${BINDING_COOKIE}${flowId}=${value}; Path=${callback.pathname}; Max-Age=${maxAgeSeconds}; ` +
      `HttpOnly; SameSite=Lax${secure}`
    );
  }

  /** The provider sent the browser back: check the state, exchange the code, store the connection. */
  async finishOAuth(
    provider: OAuthProviderName,
    q: { code?: string; state?: string; error?: string; error_description?: string },
    cookies: Readonly<Record<string, string>> = {},
  ): Promise<BrowserOutcome> {
    if (!q.state) throw new ValidationFailed({ state: 'is required' });
    const nowMs = this.clock.nowMs();
    const payload = verifyToken<{ f: string; p: string; v: string; b?: string }>(
      this.keys.linkKey,
      'oauth-state',
      q.state,
      nowMs,
    );
    if (!payload || payload.v !== provider) {
      throw new ValidationFailed({ state: 'is invalid or has expired; start connecting again' });
    }
    // A flow started from a connect link carries (in its signed state) a keyed hash of the cookie set
    // in the browser that opened the link: only that browser may finish it, so that a consent screen
    // URL passed to someone else cannot connect their calendar to this host. Checked before the flow
    // is used up, so that such an attempt does not spoil the host's own.
    if (payload.b !== undefined) {
      const value = cookies[`${BINDING_COOKIE}${payload.f}`];
      if (value === undefined || !safeEqual(keyedHash(this.keys.linkKey, value), payload.b)) {
        return {
          kind: 'page',
          status: 400,
          title: 'Calendar not connected',
          message:
            'This calendar connection was started in another browser. Open your connect link again ' +
            'in this browser.',
        };
      }
    }
    const flow = await consumeFlow(this.db, payload.f, new Date(nowMs));
    if (!flow || flow.provider !== provider || flow.principal_id !== payload.p) {
      throw new ValidationFailed({ state: 'was already used or has expired; start connecting again' });
    }
    const outcome = await this.completeOAuth(provider, flow, q);
    if (payload.b === undefined) return outcome;
    return { ...outcome, cookies: [this.bindingCookie(provider, flow.id, '', 0)] };
  }

  /** The rest of the callback, once the flow is known to belong to this browser or client. */
  private async completeOAuth(
    provider: OAuthProviderName,
    flow: FlowRow,
    q: { code?: string; error?: string },
  ): Promise<BrowserOutcome> {
    const back = (params: Record<string, string>): BrowserOutcome => {
      const ok = params.status === 'connected';
      if (flow.redirect_uri) {
        const url = new URL(flow.redirect_uri);
        url.searchParams.set('provider', provider);
        for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
        if (flow.client_state !== null) url.searchParams.set('state', flow.client_state);
        return { kind: 'redirect', location: url.toString() };
      }
      return {
        kind: 'page',
        status: ok ? 200 : 400,
        title: ok ? 'Calendar connected' : 'Calendar not connected',
        message: ok
          ? `Your ${PROVIDER_TITLES[provider]} calendar is connected. You can close this window.`
          : `Your ${PROVIDER_TITLES[provider]} calendar was not connected (${params.error}). ` +
            'Open the link again to retry.',
      };
    };
    if (q.error) {
      return back({
        status: 'error',
        error: q.error === 'access_denied' ? 'access_denied' : 'provider_error',
      });
    }
    if (!q.code) return back({ status: 'error', error: 'invalid_request' });

    const cfg = this.gateway.oauthConfig(provider);
    let tokens: Awaited<ReturnType<typeof exchangeCode>>;
    try {
      const verifier = this.gateway.decryptVerifier(flow.verifier_enc);
      tokens = await exchangeCode(
        cfg,
        this.gateway.tokenFetch,
        { code: q.code, verifier, redirectUri: this.callbackUrl(provider) },
        this.clock,
      );
    } catch (err) {
      if (err instanceof OAuthError) return back({ status: 'error', error: 'exchange_failed' });
      throw err;
    }
    let listed: ListedCalendar[];
    try {
      listed = await this.gateway.listOAuthCalendars(provider, tokens.access_token);
    } catch (err) {
      if (err instanceof ProviderError) return back({ status: 'error', error: 'provider_unavailable' });
      throw err;
    }
    const primary = listed.find((c) => c.is_primary);
    const display =
      provider === 'google'
        ? (primary?.external_id ?? 'Google account')
        : (primary?.source_key ?? listed[0]?.source_key ?? 'Microsoft account');
    const creds: Credentials = {
      kind: 'oauth',
      access_token: tokens.access_token,
      expires_at: tokens.expires_at,
      ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
    };
    const conn = await this.connections.store(
      { accountId: flow.account_id, principalId: flow.principal_id, livemode: true, clock: this.clock },
      {
        provider,
        dedupe_key: '',
        display,
        credentials_enc: this.gateway.encrypt(creds),
        token_expires_at: new Date(tokens.expires_at),
        server_url: null,
      },
      listed,
    );
    return back({ status: 'connected', connection_id: conn.id });
  }
}
