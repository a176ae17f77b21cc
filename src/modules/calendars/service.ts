/**
 * Calendar connections (API-GUIDE.md 4): OAuth connect and callback for Google and Microsoft, CalDAV
 * and ICS connections, host connect links, the calendar list and selection, manual sync, disconnect.
 * Busy time itself is read through `busySource` (busy-cache.ts).
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/store.js';
import { enqueueMany, type JobRunner } from '../../jobs/runner.js';
import type { Clock } from '../../platform/clock.js';
import { encryptSecret, hmacSha256Hex, keyedHash, randomToken, safeEqual } from '../../platform/crypto.js';
import type { DerivedKeys } from '../../platform/keys.js';
import {
  AppError,
  Forbidden,
  NotFound,
  ServiceUnavailable,
  Unprocessable,
  ValidationFailed,
} from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { checkUrl, findOutboundRefused, type OutboundPolicy } from '../../platform/outbound.js';
import { type BusyCacheOptions, CalendarBusySource, cacheWindow, isProviderFailure } from './busy-cache.js';
import { type Credentials, type ListedCalendar, ProviderGateway } from './gateway.js';
import type { PrincipalDirectory } from './principals.js';
import {
  buildAuthorizeUrl,
  createPkce,
  exchangeCode,
  OAuthError,
  ProviderError,
  parseIcsBusy,
} from './providers/index.js';
import {
  type CalendarRow,
  type ConnectionRow,
  calendarsOfConnection,
  calendarsOfPrincipal,
  connectedPrincipals,
  connectionsOf,
  consumeFlow,
  deleteConnections,
  lockProviderAccounts,
  providerAccountsInUse,
  findCalendar,
  findConnection,
  insertFlow,
  recordSyncSuccess,
  setSelected,
  syncCalendars,
  upsertConnection,
  writeCache,
  type FlowRow,
} from './repo.js';
import { signConnectLink, signToken, verifyConnectLink, verifyToken } from './signed.js';
import type { OAuthProviderName, ProviderName } from './tables.js';

export const PROVIDERS: readonly ProviderName[] = ['google', 'microsoft', 'caldav', 'ics'];
export const OAUTH_PROVIDERS: readonly OAuthProviderName[] = ['google', 'microsoft'];
/** How long an OAuth flow (consent screen → callback) may take. */
export const OAUTH_FLOW_MS = 15 * 60_000;
/** Jobs revoking the grants of removed Google connections; tried this many times (2, 4, 8… min apart). */
export const REVOKE_QUEUE = 'calendar-token-revoke';
const REVOKE_ATTEMPTS = 6;
/** Name prefix of the cookie binding a connect-link flow to its browser (the flow id follows). */
const BINDING_COOKIE = 'kairos_connect_';
/** Default and longest lifetime of a host connect link. */
export const CONNECT_LINK_DEFAULT_HOURS = 7 * 24;
export const CONNECT_LINK_MAX_HOURS = 30 * 24;

const PROVIDER_TITLES: Record<ProviderName, string> = {
  google: 'Google Calendar',
  microsoft: 'Microsoft Outlook',
  caldav: 'CalDAV',
  ics: 'ICS feed',
};

/** For whom a calendar request acts: the account and the principal whose calendars these are. */
export interface Actor {
  accountId: string;
  principalId: string;
}

/** The caller as the routes know it. */
export interface CallerRef {
  accountId: string;
  principalId: string;
}

/** What the OAuth callback (or a connect link) answers: a redirect, or a small page for a person. */
export type BrowserOutcome = (
  | { kind: 'redirect'; location: string }
  | {
      kind: 'page';
      status: number;
      title: string;
      message: string;
      links?: { label: string; url: string }[];
    }
) & { cookies?: string[] };

export function presentCalendar(row: CalendarRow, provider: ProviderName) {
  return {
    id: row.id,
    name: row.name,
    provider,
    primary: row.is_primary,
    selected: row.selected,
    connection_id: row.connection_id,
    error: row.last_error,
  };
}
export type PresentedCalendar = ReturnType<typeof presentCalendar>;

export function presentConnection(row: ConnectionRow, calendars: CalendarRow[]) {
  return {
    id: row.id,
    provider: row.provider,
    status: row.status,
    status_reason: row.status_reason,
    account: row.display,
    last_sync: row.last_sync_at ? row.last_sync_at.toISOString() : null,
    last_error: row.last_error,
    retry_at: row.retry_at ? row.retry_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
    calendars: calendars.map((c) => presentCalendar(c, row.provider)),
  };
}
export type PresentedConnection = ReturnType<typeof presentConnection>;

function providerStatus(conns: ConnectionRow[]): 'not_connected' | 'connected' | 'degraded' | 'disconnected' {
  if (conns.length === 0) return 'not_connected';
  if (conns.every((c) => c.status === 'disconnected')) return 'disconnected';
  if (conns.some((c) => c.status === 'disconnected' || c.last_error !== null)) return 'degraded';
  return 'connected';
}

/** The feed's own name (X-WR-CALNAME), unescaped, if it has one. */
function feedName(ics: string): string | undefined {
  const m = /^X-WR-CALNAME(?:;[^:\r\n]*)?:(.*)$/m.exec(ics);
  const name = m?.[1]
    ?.trim()
    .replace(/\\([,;\\])/g, '$1')
    .replace(/\\n/gi, ' ');
  return name ? name.slice(0, 200) : undefined;
}

/** `webcal://` and `webcals://` feeds are fetched over https. */
export function normalizeFeedUrl(url: string): string {
  return url.trim().replace(/^webcals?:\/\//i, 'https://');
}

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

export interface CalendarServiceDeps {
  db: Db;
  clock: Clock;
  config: Config;
  keys: DerivedKeys;
  directory: PrincipalDirectory;
  log: { error(obj: object, msg: string): void };
}

export class CalendarService {
  readonly busySource: CalendarBusySource;
  readonly gateway: ProviderGateway;
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly keys: DerivedKeys;
  private readonly directory: PrincipalDirectory;
  private readonly policy: OutboundPolicy;
  private readonly log: CalendarServiceDeps['log'];

  constructor(deps: CalendarServiceDeps) {
    this.db = deps.db;
    this.log = deps.log;
    this.clock = deps.clock;
    this.config = deps.config;
    this.keys = deps.keys;
    this.directory = deps.directory;
    this.policy = { allowPrivateNetwork: deps.config.allowPrivateNetwork };
    this.gateway = new ProviderGateway(
      deps.db,
      deps.clock,
      deps.config,
      deps.keys.encryptionKey,
      this.policy,
    );
    const cache: BusyCacheOptions = { ttlMs: deps.config.busyCacheTtlSeconds * 1000 };
    this.busySource = new CalendarBusySource(deps.db, deps.clock, this.gateway, cache, deps.log, (id) =>
      deps.directory.timeZoneOf(id),
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Who

  /**
   * The principal a request acts for: the caller itself, or (with `principal_id`) a live host its
   * account manages. Anything else is 403, whether or not the principal exists.
   */
  async actorFor(caller: CallerRef, principalId: string | undefined): Promise<Actor> {
    if (principalId === undefined || principalId === caller.principalId || principalId === caller.accountId) {
      return { accountId: caller.accountId, principalId: principalId ?? caller.principalId };
    }
    if (await this.directory.isManagedHost(caller.accountId, principalId)) {
      return { accountId: caller.accountId, principalId };
    }
    throw new Forbidden('principal_id is neither you nor a host your account manages');
  }

  /** For the principals module: which of `ids` have a working calendar connection. */
  connected(ids: readonly string[]): Promise<ReadonlySet<string>> {
    return connectedPrincipals(this.db, ids);
  }

  async isConnected(principalId: string): Promise<boolean> {
    return (await connectedPrincipals(this.db, [principalId])).has(principalId);
  }

  // ---------------------------------------------------------------------------------------------
  // OAuth

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
    const conn = await this.store(
      { accountId: flow.account_id, principalId: flow.principal_id },
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

  // ---------------------------------------------------------------------------------------------
  // CalDAV and ICS

  async connectCaldav(
    actor: Actor,
    input: { server_url: string; username: string; password: string },
  ): Promise<PresentedConnection> {
    const serverUrl = input.server_url.trim();
    const checked = checkUrl(serverUrl, this.policy);
    if (!checked.ok) throw new ValidationFailed({ server_url: checked.reason });
    const creds = { serverUrl, username: input.username, password: input.password };
    let listed: ListedCalendar[];
    try {
      listed = await this.gateway.discoverCaldav(creds);
    } catch (err) {
      throw this.connectError(err, 'server_url', {
        unauthorized: { password: 'was rejected by the server (check the username and password)' },
      });
    }
    if (listed.length === 0) {
      throw new ValidationFailed({ server_url: 'has no calendars with events for this user' });
    }
    const host = checked.url.host;
    const conn = await this.store(
      actor,
      {
        provider: 'caldav',
        dedupe_key: `${checked.url.origin}${checked.url.pathname}|${input.username.toLowerCase()}`,
        display: `${input.username}@${host}`,
        credentials_enc: this.gateway.encrypt({
          kind: 'caldav',
          username: input.username,
          password: input.password,
        }),
        token_expires_at: null,
        server_url: serverUrl,
      },
      listed,
    );
    return presentConnection(conn, await calendarsOfConnection(this.db, conn.id));
  }

  async connectIcs(actor: Actor, input: { url: string; name?: string }): Promise<PresentedConnection> {
    const url = normalizeFeedUrl(input.url);
    const checked = checkUrl(url, this.policy);
    if (!checked.ok) throw new ValidationFailed({ url: checked.reason });
    let text: string;
    try {
      text = await this.gateway.readIcs(url);
    } catch (err) {
      throw this.connectError(err, 'url', {
        unauthorized: { url: 'was refused by the server (401/403); is it the full secret address?' },
      });
    }
    const zone = await this.directory.timeZoneOf(actor.principalId);
    const now = this.clock.now();
    const window = cacheWindow(now.getTime());
    let busy: ReturnType<typeof parseIcsBusy>;
    try {
      busy = parseIcsBusy(text, window, zone);
    } catch (err) {
      if (err instanceof ProviderError)
        throw new ValidationFailed({ url: `did not return usable iCalendar data` });
      throw err;
    }
    const name = (input.name?.trim() || feedName(text) || checked.url.hostname).slice(0, 200);
    const conn = await this.store(
      actor,
      {
        provider: 'ics',
        dedupe_key: hmacSha256Hex(this.keys.linkKey, `ics-feed:${url}`),
        display: checked.url.hostname,
        credentials_enc: this.gateway.encrypt({ kind: 'ics', url }),
        token_expires_at: null,
        server_url: null,
      },
      [{ external_id: 'feed', source_key: 'feed', name, is_primary: true, selected: true }],
      { intervals: busy.map((i): [number, number] => [i.start, i.end]), window },
    );
    return presentConnection(conn, await calendarsOfConnection(this.db, conn.id));
  }

  /** Maps a failed connect-time request to a 400 with a field message, or a 503 when worth retrying. */
  private connectError(
    err: unknown,
    field: string,
    messages: { unauthorized: Record<string, string> },
  ): AppError {
    const refused = findOutboundRefused(err);
    if (refused) return new ValidationFailed({ [field]: `is not allowed: ${refused.reason}` });
    if (err instanceof ProviderError) {
      if (err.code === 'unauthorized') return new ValidationFailed(messages.unauthorized);
      if (err.code === 'rate_limited' || (err.code === 'unavailable' && err.status >= 500)) {
        return new ServiceUnavailable(`The server answered ${err.status}; retry later`, 30);
      }
      if (err.code === 'unavailable')
        return new ValidationFailed({ [field]: `could not be reached: ${err.message}` });
      return new ValidationFailed({ [field]: err.message });
    }
    if (err instanceof Error) return new ValidationFailed({ [field]: `could not be read: ${err.message}` });
    return new ValidationFailed({ [field]: 'could not be read' });
  }

  /** Stores (or refreshes) a connection with its calendars; queues or seeds its busy cache. */
  private async store(
    actor: Actor,
    c: {
      provider: ProviderName;
      dedupe_key: string;
      display: string;
      credentials_enc: string;
      token_expires_at: Date | null;
      server_url: string | null;
    },
    listed: ListedCalendar[],
    seed?: { intervals: [number, number][]; window: { start: number; end: number } },
  ): Promise<ConnectionRow> {
    const now = this.clock.now();
    const zone = await this.directory.timeZoneOf(actor.principalId);
    return this.db.transaction().execute(async (trx) => {
      const conn = await upsertConnection(trx, {
        id: prefixedId('conn', now.getTime()),
        account_id: actor.accountId,
        principal_id: actor.principalId,
        ...c,
        status: 'connected',
        status_reason: null,
        time_zone: zone,
        last_used_at: now,
        last_sync_at: null,
        last_error: null,
        last_error_at: null,
        failure_count: 0,
        retry_at: null,
        refresh_queued_until: null,
        created_at: now,
        updated_at: now,
      });
      await syncCalendars(
        trx,
        conn,
        listed.map((l) => ({ id: prefixedId('cal', now.getTime()), ...l })),
        now,
      );
      if (seed) {
        const keys = [...new Set(listed.filter((l) => l.selected).map((l) => l.source_key))].sort();
        await writeCache(trx, conn.id, seed.window, { keys, intervals: seed.intervals }, now);
        await recordSyncSuccess(trx, conn.id, now);
      } else {
        await this.busySource.queueRefresh(trx, conn.id);
      }
      return (await findConnection(trx, conn.id)) ?? conn;
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Listing, selection, sync, disconnect

  async list(actor: Actor) {
    const [conns, cals] = await Promise.all([
      connectionsOf(this.db, actor.principalId),
      calendarsOfPrincipal(this.db, actor.principalId),
    ]);
    const byId = new Map(conns.map((c) => [c.id, c]));
    const calendars = cals.flatMap((c) => {
      const conn = byId.get(c.connection_id);
      return conn ? [presentCalendar(c, conn.provider)] : [];
    });
    const providers = PROVIDERS.map((name) => {
      const mine = conns.filter((c) => c.provider === name);
      return {
        name,
        connected: mine.some((c) => c.status === 'connected'),
        status: providerStatus(mine),
        calendar_count: calendars.filter((c) => c.provider === name).length,
      };
    });
    const connections = conns.map((c) =>
      presentConnection(
        c,
        cals.filter((k) => k.connection_id === c.id),
      ),
    );
    return { calendars, providers, connections };
  }

  private async accessibleCalendar(
    caller: CallerRef,
    id: string,
  ): Promise<{ row: CalendarRow; conn: ConnectionRow }> {
    const row = await findCalendar(this.db, caller.accountId, id);
    const mine =
      row !== undefined &&
      (row.principal_id === caller.principalId ||
        row.principal_id === caller.accountId ||
        (await this.directory.isManagedHost(caller.accountId, row.principal_id)));
    const conn = row && mine ? await findConnection(this.db, row.connection_id) : undefined;
    if (!row || !conn) throw new NotFound('No calendar with this id');
    return { row, conn };
  }

  async getCalendar(caller: CallerRef, id: string): Promise<PresentedCalendar> {
    const { row, conn } = await this.accessibleCalendar(caller, id);
    return presentCalendar(row, conn.provider);
  }

  /** Selects or deselects a calendar for busy checking; the cache for the new selection is fetched in the background. */
  async setSelected(caller: CallerRef, id: string, selected: boolean): Promise<PresentedCalendar> {
    const { row, conn } = await this.accessibleCalendar(caller, id);
    if (row.selected === selected) return presentCalendar(row, conn.provider);
    const now = this.clock.now();
    const updated = await this.db.transaction().execute(async (trx) => {
      const r = await setSelected(trx, id, selected, now);
      if (conn.status === 'connected') await this.busySource.queueRefresh(trx, conn.id);
      return r;
    });
    return presentCalendar(updated, conn.provider);
  }

  /** Fetches busy time from every connection of the principal now. */
  async sync(actor: Actor) {
    const conns = await connectionsOf(this.db, actor.principalId);
    if (conns.length === 0) throw new NotFound('No calendar is connected for this principal');
    const nowMs = this.clock.nowMs();
    const results = await Promise.all(
      conns.map(async (c) => {
        const base = { id: c.id, provider: c.provider };
        if (c.status === 'disconnected') {
          return {
            ...base,
            status: 'disconnected' as const,
            busy_blocks: 0,
            error: c.status_reason ?? 'disconnected',
          };
        }
        const retryAt = c.retry_at?.getTime() ?? 0;
        if (retryAt > nowMs && c.last_error?.startsWith('rate_limited')) {
          return {
            ...base,
            status: 'failed' as const,
            busy_blocks: 0,
            error: `rate limited by the provider until ${new Date(retryAt).toISOString()}`,
          };
        }
        try {
          const out = await this.busySource.refresh(c.id);
          return { ...base, status: 'synced' as const, busy_blocks: out.intervals.length, error: null };
        } catch (err) {
          if (!isProviderFailure(err)) throw err;
          const lost = (await findConnection(this.db, c.id))?.status === 'disconnected';
          return {
            ...base,
            status: lost ? ('disconnected' as const) : ('failed' as const),
            busy_blocks: 0,
            error: err instanceof Error ? err.message : String(err),
          };
        }
      }),
    );
    const synced = results.filter((r) => r.status === 'synced');
    if (synced.length === 0) {
      const allLost = results.every((r) => r.status === 'disconnected');
      throw new AppError(
        503,
        'service-unavailable',
        allLost
          ? 'Every calendar connection of this principal is disconnected; reconnect them'
          : `No calendar could be synced: ${results.map((r) => `${r.provider}: ${r.error}`).join('; ')}`,
        { code: allLost ? 'calendar_disconnected' : 'calendar_unavailable' },
        { 'retry-after': '30' },
      );
    }
    return {
      events_synced: synced.reduce((n, r) => n + r.busy_blocks, 0),
      last_sync: new Date(nowMs).toISOString(),
      connections: results,
    };
  }

  /** Removes the principal's connections of a provider (or one connection by id) with their tokens. */
  async disconnect(actor: Actor, which: string): Promise<PresentedConnection[]> {
    const conns = (await connectionsOf(this.db, actor.principalId)).filter(
      (c) => c.provider === which || c.id === which,
    );
    if (conns.length === 0) throw new NotFound(`No ${which} calendar connection for this principal`);
    // Removing the rows and asking Google to revoke the grant commit together: the revocation runs
    // as a job (retried when Google cannot be reached) and carries the credentials still encrypted.
    // Google revokes the whole grant of a Google account to this server, so not while another
    // principal's connection still uses the same account.
    const google = conns.filter((c) => c.provider === 'google' && c.credentials_enc !== null);
    await this.db.transaction().execute(async (trx) => {
      await lockProviderAccounts(
        trx,
        'google',
        google.map((c) => c.display),
      );
      await deleteConnections(
        trx,
        conns.map((c) => c.id),
      );
      const inUse = await providerAccountsInUse(
        trx,
        'google',
        google.map((c) => c.display),
      );
      const revocations = google
        .filter((c) => !inUse.has(c.display))
        .map((c) => ({ payload: { credentials_enc: c.credentials_enc }, runAt: this.clock.now() }));
      await enqueueMany(trx, REVOKE_QUEUE, revocations);
    });
    const now = this.clock.now();
    return conns.map((c) =>
      presentConnection(
        {
          ...c,
          status: 'disconnected',
          status_reason: 'removed',
          credentials_enc: null,
          retry_at: null,
          updated_at: now,
        },
        [],
      ),
    );
  }

  /** Background work of the calendars module: busy-time refreshes and token revocations. */
  register(jobs: Pick<JobRunner, 'register' | 'every'>): void {
    this.busySource.register(jobs);
    jobs.register<{ credentials_enc: string }>(
      REVOKE_QUEUE,
      async (job) => {
        try {
          await this.gateway.revokeGoogle(job.payload.credentials_enc);
        } catch (err) {
          if (!(err instanceof OAuthError) || job.attempts >= REVOKE_ATTEMPTS) {
            this.log.error({ err, attempts: job.attempts }, 'revoking a removed Google grant failed');
            return;
          }
          return { retryAt: new Date(this.clock.nowMs() + 60_000 * 2 ** job.attempts) };
        }
      },
      { concurrency: 4 },
    );
  }

  // ---------------------------------------------------------------------------------------------
  // Host connect links

  async createConnectLink(
    accountId: string,
    hostId: string,
    input: { expires_in_hours?: number },
  ): Promise<{ url: string; expires_at: string; host_id: string; providers: OAuthProviderName[] }> {
    if (!(await this.directory.isManagedHost(accountId, hostId))) throw new NotFound('No host with this id');
    const hours = input.expires_in_hours ?? CONNECT_LINK_DEFAULT_HOURS;
    const expMs = Math.floor((this.clock.nowMs() + hours * 3_600_000) / 1000) * 1000;
    const token = signConnectLink(this.keys.linkKey, { hostId, accountId, expMs });
    return {
      url: `${this.config.baseUrl}/v1/public/connect/${token}`,
      expires_at: new Date(expMs).toISOString(),
      host_id: hostId,
      providers: this.configuredProviders(),
    };
  }

  /** A host opened their connect link: choose a provider, or start its OAuth flow for the host. */
  async openConnectLink(token: string, provider: OAuthProviderName | undefined): Promise<BrowserOutcome> {
    const link = verifyConnectLink(this.keys.linkKey, token, this.clock.nowMs());
    if (!link || !(await this.directory.isManagedHost(link.accountId, link.hostId))) {
      throw new NotFound('This connect link is invalid or has expired; ask for a new one');
    }
    if (provider === undefined) {
      const base = `${this.config.baseUrl}/v1/public/connect/${token}`;
      return {
        kind: 'page',
        status: 200,
        title: 'Connect your calendar',
        message: 'Choose your calendar provider. Your credentials go to the provider only.',
        links: this.configuredProviders().map((p) => ({
          label: PROVIDER_TITLES[p],
          url: `${base}?provider=${p}`,
        })),
      };
    }
    const started = await this.beginOAuth({ accountId: link.accountId, principalId: link.hostId }, provider, {
      viaLink: true,
    });
    return {
      kind: 'redirect',
      location: started.authorize_url,
      cookies: [this.bindingCookie(provider, started.flowId, started.browserBinding!, OAUTH_FLOW_MS / 1000)],
    };
  }
}
