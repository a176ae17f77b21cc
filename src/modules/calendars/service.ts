/**
 * Calendar connections (docs/api.md#calendars): OAuth connect and callback for Google and Microsoft, CalDAV
 * and ICS connections, host connect links, the calendar list and selection, manual sync, disconnect.
 * Busy time itself is read through `busySource` (busy-cache.ts).
 *
 * The module's one service, a façade over its parts: oauth-flow.ts (OAuth), connect.ts (CalDAV and
 * ICS), connections.ts (storing, listing, selection, sync, disconnect), connect-links.ts (host connect
 * links) and jobs.ts (background work).
 */
import type { Static } from '@sinclair/typebox';
import type { Tx } from '../../db/store.js';
import type { WriteBatch } from '../../jobs/runner.js';
import type { Actor } from '../../platform/actor.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { type BusyCacheOptions, CalendarBusySource } from './busy-cache.js';
import { CalendarConnect } from './connect.js';
import { ConnectLinks } from './connect-links.js';
import { Connections, type PresentedCalendar, type PresentedConnection } from './connections.js';
import { ProviderGateway } from './gateway.js';
import { calendarWork } from './jobs.js';
import { MeetingWriter } from './meetings.js';
import { type BrowserOutcome, OAuthFlow } from './oauth-flow.js';
import type { PrincipalDirectory } from './principals.js';
import type { CalendarSync, CalendarsApi, CalendarsNeeds, MeetingSpec } from './api.js';
import type { Platform } from '../module.js';
import type {
  CalendarUpdateBody,
  CaldavBody,
  CallbackQuery,
  ConnectLinkBody,
  ConnectQuery,
  IcsBody,
  LinkForm,
} from './schemas.js';
import type { OAuthProviderName } from './tables.js';

export type { BrowserOutcome } from './oauth-flow.js';
/** The caller as the routes know it. */
export type { Actor as CallerRef } from '../../platform/actor.js';

/** What the calendars service takes from the platform. */
export type CalendarsPlatform = Pick<Platform, 'db' | 'clock' | 'config' | 'keys' | 'log' | 'testClocks'>;

export class CalendarService implements CalendarsApi {
  readonly busySource: CalendarBusySource;
  readonly gateway: ProviderGateway;
  private readonly clock: Clock;
  private readonly log: CalendarsPlatform['log'];
  private readonly connections: Connections;
  private readonly oauth: OAuthFlow;
  private readonly connect: CalendarConnect;
  private readonly links: ConnectLinks;
  private readonly meetings: MeetingWriter;

  constructor(platform: CalendarsPlatform, needs: CalendarsNeeds) {
    const { principals } = needs;
    // The module's one view of principals (principals.ts), answered by the principals module.
    const directory: PrincipalDirectory = {
      mayActFor: (actor, principalId) => principals.access.mayActFor(actor, principalId),
      // A host of the account in that mode: one the account itself, acting in that mode, may act for
      // (the principals module's one access rule, which knows the modes).
      isManagedHost: (accountId, principalId, livemode) => {
        if (principalId.toLowerCase() === accountId.toLowerCase()) return Promise.resolve(false);
        const account: Pick<Actor, 'accountId' | 'principalId' | 'livemode'> = {
          accountId,
          principalId: accountId,
          livemode,
        };
        return principals.access.mayActFor(account, principalId);
      },
      timeZoneOf: (principalId) => principals.storedZoneOf(principalId),
    };
    const deps = { ...platform, directory };
    this.log = deps.log;
    this.clock = deps.clock;
    const policy: OutboundPolicy = { allowPrivateNetwork: deps.config.allowPrivateNetwork };
    this.gateway = new ProviderGateway(deps.db, deps.clock, deps.config, deps.keys.encryptionKey, policy);
    const cache: BusyCacheOptions = { ttlMs: deps.config.busyCacheTtlSeconds * 1000 };
    this.busySource = new CalendarBusySource(deps.db, deps.clock, this.gateway, cache, deps.log, (id) =>
      deps.directory.timeZoneOf(id),
    );
    this.meetings = new MeetingWriter({
      db: deps.db,
      clock: deps.clock,
      gateway: this.gateway,
      timeZoneOf: (id) => deps.directory.timeZoneOf(id),
      log: deps.log,
      writableKnown: (ids) => this.busySource.writableKnown(ids),
    });
    this.connections = new Connections({
      db: deps.db,
      clock: deps.clock,
      directory: deps.directory,
      busySource: this.busySource,
      meetings: this.meetings,
    });
    this.oauth = new OAuthFlow({
      db: deps.db,
      clock: deps.clock,
      config: deps.config,
      keys: deps.keys,
      gateway: this.gateway,
      connections: this.connections,
    });
    this.connect = new CalendarConnect({
      db: deps.db,
      clock: deps.clock,
      keys: deps.keys,
      directory: deps.directory,
      policy,
      gateway: this.gateway,
      connections: this.connections,
    });
    this.links = new ConnectLinks({
      clock: deps.clock,
      testClocks: deps.testClocks,
      config: deps.config,
      keys: deps.keys,
      directory: deps.directory,
      oauth: this.oauth,
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Who

  /**
   * The principal a request acts for: the caller itself, or (with `principal_id`) a live host its
   * account manages. Anything else is 403, whether or not the principal exists.
   */
  actorFor(caller: Actor, principalId: string | undefined): Promise<Actor> {
    return this.connections.actorFor(caller, principalId);
  }

  /**
   * As `actorFor`, to change the principal's calendars: a test-mode caller may not change those of a
   * principal shared with live mode (its own): 403 `live_mode_only` (docs/api.md#test-mode).
   */
  changingFor(caller: Actor, principalId: string | undefined): Promise<Actor> {
    return this.connections.changingFor(caller, principalId);
  }

  /** For the principals module: which of `ids` have a working calendar connection. */
  connected(ids: readonly string[]): Promise<ReadonlySet<string>> {
    return this.connections.connected(ids);
  }

  isConnected(principalId: string): Promise<boolean> {
    return this.connections.isConnected(principalId);
  }

  // ---------------------------------------------------------------------------------------------
  // OAuth

  callbackUrl(provider: OAuthProviderName): string {
    return this.oauth.callbackUrl(provider);
  }

  configuredProviders(): OAuthProviderName[] {
    return this.oauth.configuredProviders();
  }

  /** Starts an authorization code flow with PKCE (S256); see OAuthFlow.startOAuth. */
  startOAuth(
    actor: Actor,
    provider: OAuthProviderName,
    query: Static<typeof ConnectQuery>,
  ): Promise<{ authorize_url: string; expires_at: string }> {
    return this.oauth.startOAuth(actor, provider, {
      ...(query.redirect_uri ? { redirectUri: query.redirect_uri } : {}),
      ...(query.state !== undefined ? { clientState: query.state } : {}),
    });
  }

  /** The provider sent the browser back: check the state, exchange the code, store the connection. */
  finishOAuth(
    provider: OAuthProviderName,
    q: Static<typeof CallbackQuery>,
    cookies: Readonly<Record<string, string>> = {},
  ): Promise<BrowserOutcome> {
    return this.oauth.finishOAuth(provider, q, cookies);
  }

  // ---------------------------------------------------------------------------------------------
  // CalDAV and ICS

  connectCaldav(actor: Actor, input: Static<typeof CaldavBody>): Promise<PresentedConnection> {
    return this.connect.connectCaldav(actor, input);
  }

  connectIcs(actor: Actor, input: Static<typeof IcsBody>): Promise<PresentedConnection> {
    return this.connect.connectIcs(actor, input);
  }

  // ---------------------------------------------------------------------------------------------
  // Listing, selection, sync, disconnect

  list(actor: Actor) {
    return this.connections.list(actor);
  }

  getCalendar(caller: Actor, id: string): Promise<PresentedCalendar> {
    return this.connections.getCalendar(caller, id);
  }

  /** Selects a calendar for busy checking and/or makes it the destination of written meetings. */
  updateCalendar(
    caller: Actor,
    id: string,
    change: Static<typeof CalendarUpdateBody>,
  ): Promise<PresentedCalendar> {
    return this.connections.updateCalendar(caller, id, change);
  }

  /** Fetches busy time from every connection of the principal now. */
  sync(actor: Actor) {
    return this.connections.sync(actor);
  }

  /** Removes the principal's connections of a provider (or one connection by id) with their tokens. */
  disconnect(actor: Actor, which: string): Promise<PresentedConnection[]> {
    return this.connections.disconnect(actor, which);
  }

  /** Background work of the calendars module (jobs.ts, meetings.ts), for the runtime's job runner. */
  work(): ReturnType<typeof calendarWork> {
    const work = calendarWork({
      busySource: this.busySource,
      gateway: this.gateway,
      clock: this.clock,
      log: this.log,
    });
    return { jobs: [...work.jobs, ...this.meetings.queues()], schedules: work.schedules };
  }

  // ---------------------------------------------------------------------------------------------
  // Calendar write-through (meetings.ts): "write this meeting for these principals"

  /**
   * Keeps a meeting in its principals' own calendars (created, or moved/retitled when the key is
   * known), written after `trx` commits by a retried job. Bookings use it; so will proposals.
   * Answers the principals whose calendars will receive it.
   */
  writeMeeting(trx: Tx, spec: MeetingSpec, batch?: WriteBatch): Promise<Set<string>> {
    return this.meetings.writeMeeting(trx, spec, batch);
  }

  /** Removes a meeting from its principals' calendars, after `trx` commits. */
  removeMeeting(trx: Tx, key: string): Promise<Set<string>> {
    return this.meetings.removeMeeting(trx, key);
  }

  /** How writing the meetings went, per principal. */
  calendarSync(keys: readonly string[]): Promise<Map<string, CalendarSync[]>> {
    return this.meetings.syncOf(keys);
  }

  /** Runs the write of one meeting now (tests and support; the job does the same). */
  writeNow(key: string) {
    return this.meetings.run(key);
  }

  // ---------------------------------------------------------------------------------------------
  // Host connect links

  /** A connect link for a host of the caller's account and mode; the link acts in that mode. */
  createConnectLink(
    caller: Actor,
    hostId: string,
    input: Static<typeof ConnectLinkBody>,
  ): Promise<{ url: string; expires_at: string; host_id: string; providers: OAuthProviderName[] }> {
    return this.links.createConnectLink(caller, hostId, input);
  }

  /**
   * A host connects a CalDAV account or an ICS feed through its connect link (the page's forms): the
   * same checks and SSRF rules as the API; a refusal is a page that says why.
   */
  async connectViaLink(token: string, kind: 'caldav' | 'ics', input: LinkForm): Promise<BrowserOutcome> {
    const host = await this.links.hostOf(token);
    try {
      if (kind === 'caldav') {
        await this.connect.connectCaldav(host, {
          server_url: input.server_url ?? '',
          username: input.username ?? '',
          password: input.password ?? '',
        });
      } else {
        await this.connect.connectIcs(host, { url: input.url ?? '' });
      }
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      const fields = err.extras.errors as Record<string, string> | undefined;
      return {
        kind: 'page',
        status: err.status,
        title: 'Not connected',
        message: fields
          ? Object.entries(fields)
              .map(([f, m]) => `${f.replace('_', ' ')} ${m}`)
              .join('; ')
          : err.message,
        links: [{ label: 'Try again', url: `${this.links.pageUrl(token)}` }],
      };
    }
    return {
      kind: 'page',
      status: 200,
      title: 'Calendar connected',
      message: 'Your calendar is connected. You can close this page.',
    };
  }

  /** A host opened their connect link: choose a provider, or start its OAuth flow for the host. */
  openConnectLink(token: string, provider: OAuthProviderName | undefined): Promise<BrowserOutcome> {
    return this.links.openConnectLink(token, provider);
  }
}
