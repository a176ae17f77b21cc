/**
 * Talks to the calendar providers for one connection: lists calendars at connect time and reads busy
 * time, with OAuth access tokens refreshed before they expire and once more on a 401. A refresh that
 * the provider answers with `invalid_grant` (or a CalDAV/ICS credential that is rejected) marks the
 * connection disconnected and surfaces as `ConnectionLost` — never as an empty busy list.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import { decryptSecret, encryptSecret } from '../../platform/crypto.js';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { guardedFetch, timedFetch } from './guarded-fetch.js';
import {
  type CaldavCredentials,
  caldavBusy,
  caldavDiscover,
  fetchIcs,
  GOOGLE_CALENDAR_SCOPES,
  googleListCalendars,
  type HttpFetch,
  type Interval,
  MICROSOFT_CALENDAR_SCOPES,
  microsoftListCalendars,
  type OAuthConfig,
  OAuthError,
  ProviderError,
  refreshToken,
  revokeToken,
} from './providers/index.js';
import { caldavDeleteEvent, caldavPutEvent } from './providers/caldav.js';
import type { EventSpec, WrittenEvent } from './providers/events.js';
import { parseIcsEvents } from './providers/ics.js';
import type { BusyResult, TitledInterval } from './providers/types.js';
import { normalizedCopy } from '../../lib/intervals.js';
import {
  googleDeleteEvent,
  googleEventsBusy,
  googleInsertEvent,
  googlePatchEvent,
} from './providers/google-events.js';
import {
  graphCreateEvent,
  graphDeleteEvent,
  graphEventsBusy,
  graphUpdateEvent,
} from './providers/microsoft-events.js';
import { type ConnectionRow, lockConnection, markDisconnected, updateTokens } from './repo.js';
import type { OAuthProviderName, ProviderName } from './tables.js';

/** Refresh an access token when it has less than this left. */
export const TOKEN_REFRESH_MARGIN_MS = 2 * 60_000;
/** Largest CalDAV or ICS answer read. */
export const MAX_FEED_BYTES = 10 * 1024 * 1024;

export interface OAuthCredentials {
  kind: 'oauth';
  access_token: string;
  refresh_token?: string;
  /** epoch ms */
  expires_at: number;
}
export interface CaldavStoredCredentials {
  kind: 'caldav';
  username: string;
  password: string;
}
export interface IcsCredentials {
  kind: 'ics';
  url: string;
}
export type Credentials = OAuthCredentials | CaldavStoredCredentials | IcsCredentials;

/** The connection cannot be used any more (refresh token revoked, password rejected): reconnect it. */
export class ConnectionLost extends Error {
  override readonly name = 'ConnectionLost';
  constructor(readonly reason: string) {
    super(`calendar connection lost: ${reason}`);
  }
}

/** Some selected calendars could not be read; `errors` maps source key → the provider's reason. */
export class CalendarReadError extends Error {
  override readonly name = 'CalendarReadError';
  constructor(readonly errors: Map<string, string>) {
    super(`calendars could not be read: ${[...errors].map(([k, r]) => `${k} (${r})`).join(', ')}`);
  }
}

/** A calendar as a provider lists it, ready to store. */
export interface ListedCalendar {
  external_id: string;
  source_key: string;
  name: string;
  is_primary: boolean;
  selected: boolean;
}

export interface BusyFetch {
  intervals: Interval[];
  /** With `withTitles`: every busy occurrence with its event's title (unmerged). */
  events?: TitledInterval[];
  /** Problems that did not make the answer wrong (e.g. unreadable objects skipped), per source key. */
  warnings: Map<string, string>;
}

/** One selected source to read: its key and the provider id behind it. */
export interface Source {
  source_key: string;
  external_id: string;
}

/** CalDAV reasons that only mean "some objects were skipped". */
const SOFT_REASON = /^unreadable_objects:/;

export class ProviderGateway {
  readonly userFetch: HttpFetch;
  private readonly apiFetch: HttpFetch;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly encryptionKey: Buffer,
    policy: OutboundPolicy,
  ) {
    // Time limit of one provider request: KAIROS_PROVIDER_TIMEOUT_MS (default 15 s).
    const timeoutMs = config.providerTimeoutMs;
    this.userFetch = guardedFetch(policy, { timeoutMs, maxBodyBytes: MAX_FEED_BYTES });
    this.apiFetch = timedFetch(timeoutMs);
  }

  /** Whether the server has client credentials for the provider. */
  configured(provider: OAuthProviderName): boolean {
    const p = this.config.providers[provider];
    return p.clientId !== '' && p.clientSecret !== '';
  }

  oauthConfig(provider: OAuthProviderName): OAuthConfig {
    const p = this.config.providers[provider];
    return {
      provider,
      clientId: p.clientId,
      clientSecret: p.clientSecret,
      authorizeUrl: p.authorizeUrl,
      tokenUrl: p.tokenUrl,
      scopes: provider === 'google' ? GOOGLE_CALENDAR_SCOPES : MICROSOFT_CALENDAR_SCOPES,
    };
  }

  get tokenFetch(): HttpFetch {
    return this.apiFetch;
  }

  encrypt(creds: Credentials): string {
    return encryptSecret(this.encryptionKey, JSON.stringify(creds));
  }

  decrypt(envelope: string): Credentials {
    return JSON.parse(decryptSecret(this.encryptionKey, envelope)) as Credentials;
  }

  decryptVerifier(envelope: string): string {
    return decryptSecret(this.encryptionKey, envelope);
  }

  /**
   * Revokes the grant behind a removed Google connection's stored credentials (the refresh token, or
   * the access token when there is none). Microsoft has no revocation endpoint for these tokens.
   */
  async revokeGoogle(credentialsEnc: string): Promise<'revoked' | 'invalid' | 'nothing'> {
    const creds = this.decrypt(credentialsEnc);
    if (creds.kind !== 'oauth') return 'nothing';
    const token = creds.refresh_token ?? creds.access_token;
    return revokeToken(this.config.providers.google.revokeUrl, this.apiFetch, token);
  }

  // ---------------------------------------------------------------------------------------------
  // Calendar lists (connect time)

  async listOAuthCalendars(provider: OAuthProviderName, accessToken: string): Promise<ListedCalendar[]> {
    if (provider === 'google') {
      const cals = await googleListCalendars(this.googleCfg(), this.apiFetch, accessToken);
      return cals.map((c) => ({
        external_id: c.id,
        source_key: c.id,
        name: c.summary,
        is_primary: c.primary,
        // Only the primary calendar counts by default: subscribed ones (holidays, colleagues) would
        // block whole days. The user selects others with PATCH /v1/calendars/{id}.
        selected: c.primary,
      }));
    }
    const cals = await microsoftListCalendars(this.graphCfg(), this.apiFetch, accessToken);
    const owner = cals.find((c) => c.isDefault)?.ownerEmail ?? cals.find((c) => c.ownerEmail)?.ownerEmail;
    return cals.map((c) => ({
      external_id: c.id,
      // getSchedule reads a mailbox, not a calendar: every calendar maps to its owner's mailbox.
      source_key: (c.ownerEmail ?? owner ?? 'me').toLowerCase(),
      name: c.name,
      is_primary: c.isDefault,
      selected: c.isDefault,
    }));
  }

  async discoverCaldav(creds: CaldavCredentials): Promise<ListedCalendar[]> {
    const cals = await caldavDiscover(creds, this.userFetch, { clock: this.clock });
    return cals.map((c, i) => ({
      external_id: c.url,
      source_key: c.url,
      name: c.displayName,
      is_primary: i === 0,
      selected: true,
    }));
  }

  async readIcs(url: string): Promise<string> {
    return fetchIcs(this.userFetch, url, { maxBytes: MAX_FEED_BYTES, clock: this.clock });
  }

  // ---------------------------------------------------------------------------------------------
  // Busy time

  /**
   * Busy time of the given sources of one connection in `window`. Throws ConnectionLost,
   * CalendarReadError, ProviderError (rate_limited / unavailable / ...) or OAuthError (transient).
   */
  async busy(
    conn: ConnectionRow,
    sources: readonly Source[],
    window: Interval,
    opts: { withTitles?: boolean } = {},
  ): Promise<BusyFetch> {
    const creds = this.usable(conn);
    if (sources.length === 0)
      return { intervals: [], warnings: new Map(), ...(opts.withTitles ? { events: [] } : {}) };
    const withTitles = opts.withTitles === true;
    let result: BusyResult;
    switch (conn.provider) {
      case 'google':
      case 'microsoft':
        result = await this.withOAuth(conn, creds, (token) =>
          this.oauthBusy(conn.provider, token, sources, window, withTitles),
        );
        break;
      case 'caldav': {
        const c = this.caldavCreds(conn, creds);
        result = await this.lostOnUnauthorized(conn, () =>
          caldavBusy(
            c,
            this.userFetch,
            sources.map((s) => s.external_id),
            window,
            { defaultZone: conn.time_zone, clock: this.clock, withTitles },
          ),
        );
        break;
      }
      case 'ics': {
        if (creds.kind !== 'ics') throw new Error('stored credentials do not match the provider');
        const text = await this.lostOnUnauthorized(conn, () => this.readIcs(creds.url));
        const events = parseIcsEvents(text, window, conn.time_zone);
        result = { busy: normalizedCopy(events), errors: [], ...(withTitles ? { events } : {}) };
        break;
      }
    }
    const hard = new Map<string, string>();
    const warnings = new Map<string, string>();
    const keyOf = new Map(sources.map((s) => [s.external_id.toLowerCase(), s.source_key]));
    for (const e of result.errors) {
      const key = keyOf.get(e.calendarId.toLowerCase()) ?? e.calendarId;
      (SOFT_REASON.test(e.reason) ? warnings : hard).set(key, e.reason);
    }
    if (hard.size > 0) throw new CalendarReadError(hard);
    return { intervals: result.busy, warnings, ...(result.events ? { events: result.events } : {}) };
  }

  // ---------------------------------------------------------------------------------------------
  // Event writes (calendar write-through, meetings.ts)

  /**
   * Creates or updates the meeting's event in one calendar of the connection. `known` is what an
   * earlier write answered (null id: never written, or the answer was lost). Idempotent: Google's
   * event id and the CalDAV resource name derive from `spec.ref`, Graph dedupes creates on it
   * (transactionId). Throws ConnectionLost, ProviderError or OAuthError.
   */
  async writeEvent(
    conn: ConnectionRow,
    calendarExternalId: string,
    spec: EventSpec,
    known: { id: string | null; etag: string | null },
  ): Promise<WrittenEvent> {
    const creds = this.usable(conn);
    switch (conn.provider) {
      case 'google':
        return this.withOAuth(conn, creds, async (token) => {
          if (known.id === null)
            return googleInsertEvent(this.googleCfg(), this.apiFetch, token, calendarExternalId, spec);
          try {
            return await googlePatchEvent(
              this.googleCfg(),
              this.apiFetch,
              token,
              calendarExternalId,
              known.id,
              spec,
            );
          } catch (err) {
            // Deleted in the calendar by its owner: write it again (same id, restored).
            if (!(err instanceof ProviderError && (err.status === 404 || err.status === 410))) throw err;
            return googleInsertEvent(this.googleCfg(), this.apiFetch, token, calendarExternalId, spec);
          }
        });
      case 'microsoft':
        return this.withOAuth(conn, creds, async (token) => {
          if (known.id === null)
            return graphCreateEvent(this.graphCfg(), this.apiFetch, token, calendarExternalId, spec);
          try {
            return await graphUpdateEvent(this.graphCfg(), this.apiFetch, token, known.id, spec);
          } catch (err) {
            if (!(err instanceof ProviderError && err.status === 404)) throw err;
            return graphCreateEvent(this.graphCfg(), this.apiFetch, token, calendarExternalId, spec);
          }
        });
      case 'caldav': {
        const c = this.caldavCreds(conn, creds);
        return this.lostOnUnauthorized(conn, () =>
          caldavPutEvent(
            c,
            this.userFetch,
            calendarExternalId,
            spec,
            { href: known.id, etag: known.etag },
            {
              clock: this.clock,
            },
          ),
        );
      }
      case 'ics':
        throw new ProviderError('bad_request', 0, 'ICS feeds are read-only', { reason: 'read_only' });
    }
  }

  /** Deletes a written event; one already gone counts as deleted. */
  async deleteEvent(
    conn: ConnectionRow,
    calendarExternalId: string,
    known: { id: string | null; etag: string | null },
  ): Promise<void> {
    if (known.id === null) return;
    const id = known.id;
    const creds = this.usable(conn);
    switch (conn.provider) {
      case 'google':
        return this.withOAuth(conn, creds, (token) =>
          googleDeleteEvent(this.googleCfg(), this.apiFetch, token, calendarExternalId, id),
        );
      case 'microsoft':
        return this.withOAuth(conn, creds, (token) =>
          graphDeleteEvent(this.graphCfg(), this.apiFetch, token, id),
        );
      case 'caldav': {
        const c = this.caldavCreds(conn, creds);
        return this.lostOnUnauthorized(conn, () =>
          caldavDeleteEvent(c, this.userFetch, id, known.etag, { clock: this.clock }),
        );
      }
      case 'ics':
        return;
    }
  }

  private usable(conn: ConnectionRow): Credentials {
    if (conn.status !== 'connected' || !conn.credentials_enc) {
      throw new ConnectionLost(conn.status_reason ?? 'disconnected');
    }
    return this.decrypt(conn.credentials_enc);
  }

  private withOAuth<T>(
    conn: ConnectionRow,
    creds: Credentials,
    fn: (token: string) => Promise<T>,
  ): Promise<T> {
    if (creds.kind !== 'oauth') throw new Error('stored credentials do not match the provider');
    return this.withAccessToken(conn, creds, fn);
  }

  private caldavCreds(conn: ConnectionRow, creds: Credentials): CaldavCredentials {
    if (creds.kind !== 'caldav' || !conn.server_url) throw new Error('stored credentials do not match');
    return { serverUrl: conn.server_url, username: creds.username, password: creds.password };
  }

  /**
   * Busy time from the calendars' events (not freeBusy/getSchedule, which cannot tell events apart):
   * the events Kairos wrote itself are skipped, since their meetings are busy time as bookings.
   */
  private oauthBusy(
    provider: ProviderName,
    token: string,
    sources: readonly Source[],
    window: Interval,
    withTitles: boolean,
  ) {
    const calendarIds = [...new Set(sources.map((s) => s.external_id))];
    if (provider === 'google') {
      return googleEventsBusy(this.googleCfg(), this.apiFetch, token, {
        calendarIds,
        timeMin: window.start,
        timeMax: window.end,
        withTitles,
      });
    }
    return graphEventsBusy(this.graphCfg(), this.apiFetch, token, {
      calendarIds,
      start: window.start,
      end: window.end,
      withTitles,
    });
  }

  private async lostOnUnauthorized<T>(conn: ConnectionRow, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ProviderError && err.code === 'unauthorized') {
        await markDisconnected(this.db, conn.id, 'unauthorized', this.clock.now());
        throw new ConnectionLost('unauthorized');
      }
      throw err;
    }
  }

  /** Runs `fn` with a valid access token: refreshed ahead of expiry, and once more after a 401. */
  private async withAccessToken<T>(
    conn: ConnectionRow,
    creds: OAuthCredentials,
    fn: (token: string) => Promise<T>,
  ): Promise<T> {
    let token = creds.access_token;
    if (creds.expires_at - this.clock.nowMs() <= TOKEN_REFRESH_MARGIN_MS)
      token = await this.refresh(conn, token);
    try {
      return await fn(token);
    } catch (err) {
      if (!(err instanceof ProviderError && err.code === 'unauthorized')) throw err;
    }
    token = await this.refresh(conn, token);
    return fn(token);
  }

  /**
   * Refreshes the connection's access token under a row lock, so that processes racing to refresh
   * the same connection make one refresh (Microsoft rotates refresh tokens; a second use of the old
   * one could fail). When another process already refreshed it, its token is used.
   */
  async refresh(conn: Pick<ConnectionRow, 'id' | 'provider'>, staleToken: string): Promise<string> {
    const provider = conn.provider;
    if (provider !== 'google' && provider !== 'microsoft') throw new Error('not an OAuth connection');
    const outcome = await this.db.transaction().execute(async (trx) => {
      const row = await lockConnection(trx, conn.id);
      if (row?.status !== 'connected' || !row.credentials_enc) {
        return { kind: 'lost', reason: row?.status_reason ?? 'disconnected' } as const;
      }
      const creds = this.decrypt(row.credentials_enc);
      if (creds.kind !== 'oauth') throw new Error('stored credentials do not match the provider');
      const nowMs = this.clock.nowMs();
      if (creds.access_token !== staleToken && creds.expires_at - nowMs > TOKEN_REFRESH_MARGIN_MS) {
        return { kind: 'token', token: creds.access_token } as const;
      }
      if (!creds.refresh_token) {
        await markDisconnected(trx, row.id, 'no_refresh_token', this.clock.now());
        return { kind: 'lost', reason: 'no_refresh_token' } as const;
      }
      let fresh: Awaited<ReturnType<typeof refreshToken>>;
      try {
        fresh = await refreshToken(
          this.oauthConfig(provider),
          this.apiFetch,
          creds.refresh_token,
          this.clock,
        );
      } catch (err) {
        if (err instanceof OAuthError && err.code === 'invalid_grant') {
          await markDisconnected(trx, row.id, 'invalid_grant', this.clock.now());
          return { kind: 'lost', reason: 'invalid_grant' } as const;
        }
        return { kind: 'error', error: err } as const;
      }
      const next: OAuthCredentials = {
        kind: 'oauth',
        access_token: fresh.access_token,
        expires_at: fresh.expires_at,
        // Google sends no new refresh token on refresh: keep the old one. Microsoft rotates it.
        ...((fresh.refresh_token ?? creds.refresh_token)
          ? { refresh_token: fresh.refresh_token ?? creds.refresh_token }
          : {}),
      };
      await updateTokens(trx, row.id, this.encrypt(next), new Date(fresh.expires_at), this.clock.now());
      return { kind: 'token', token: fresh.access_token } as const;
    });
    if (outcome.kind === 'lost') throw new ConnectionLost(outcome.reason);
    if (outcome.kind === 'error') throw outcome.error;
    return outcome.token;
  }

  private googleCfg() {
    return { apiUrl: this.config.providers.google.apiUrl, clock: this.clock };
  }

  private graphCfg() {
    return { graphUrl: this.config.providers.microsoft.graphUrl, clock: this.clock };
  }
}
