/**
 * Host connect links: a signed, expiring link through which a host connects their own calendar, and
 * what opening it answers (a provider choice, or the provider's consent screen).
 */
import type { Config } from '../../config.js';
import type { Actor } from '../../platform/actor.js';
import type { Clock } from '../../platform/clock.js';
import { NotFound } from '../../platform/errors.js';
import type { DerivedKeys } from '../../platform/keys.js';
import type { TestClocks } from '../../platform/test-clocks.js';
import { type BrowserOutcome, type OAuthFlow, PROVIDER_TITLES } from './oauth-flow.js';
import type { PrincipalDirectory } from './principals.js';
import { CONNECT_LINK_DEFAULT_HOURS } from './schemas.js';
import { type ConnectLink, signConnectLink, verifyConnectLink } from './signed.js';
import type { OAuthProviderName } from './tables.js';

export interface ConnectLinksDeps {
  clock: Clock;
  testClocks: Pick<TestClocks, 'clockFor'>;
  config: Pick<Config, 'baseUrl'>;
  keys: Pick<DerivedKeys, 'linkKey'>;
  directory: Pick<PrincipalDirectory, 'isManagedHost'>;
  oauth: Pick<OAuthFlow, 'configuredProviders' | 'startViaLink'>;
}

export class ConnectLinks {
  private readonly clock: ConnectLinksDeps['clock'];
  private readonly testClocks: ConnectLinksDeps['testClocks'];
  private readonly config: ConnectLinksDeps['config'];
  private readonly keys: ConnectLinksDeps['keys'];
  private readonly directory: ConnectLinksDeps['directory'];
  private readonly oauth: ConnectLinksDeps['oauth'];

  constructor(deps: ConnectLinksDeps) {
    this.clock = deps.clock;
    this.testClocks = deps.testClocks;
    this.config = deps.config;
    this.keys = deps.keys;
    this.directory = deps.directory;
    this.oauth = deps.oauth;
  }

  /**
   * A link for a host of the caller's account and mode (another mode's host: 404, as another
   * account's). The link carries the mode, signed: it acts for the host in the host's mode. Its expiry
   * is in real time (the person opening it lives there), in either mode.
   */
  async createConnectLink(
    caller: Pick<Actor, 'accountId' | 'livemode'>,
    hostId: string,
    input: { expires_in_hours?: number },
  ): Promise<{ url: string; expires_at: string; host_id: string; providers: OAuthProviderName[] }> {
    const { accountId, livemode } = caller;
    if (!(await this.directory.isManagedHost(accountId, hostId, livemode))) {
      throw new NotFound('No host with this id');
    }
    const hours = input.expires_in_hours ?? CONNECT_LINK_DEFAULT_HOURS;
    const expMs = Math.floor((this.clock.nowMs() + hours * 3_600_000) / 1000) * 1000;
    const token = signConnectLink(this.keys.linkKey, { hostId, accountId, livemode, expMs });
    return {
      url: `${this.config.baseUrl}/v1/public/connect/${token}`,
      expires_at: new Date(expMs).toISOString(),
      host_id: hostId,
      providers: this.oauth.configuredProviders(),
    };
  }

  /** The page of a connect link. */
  pageUrl(token: string): string {
    return `${this.config.baseUrl}/v1/public/connect/${token}`;
  }

  /** The link of a valid token whose host is still a host of its account and mode; else 404. */
  private async validLink(token: string): Promise<ConnectLink> {
    const link = verifyConnectLink(this.keys.linkKey, token, this.clock.nowMs());
    if (!link || !(await this.directory.isManagedHost(link.accountId, link.hostId, link.livemode))) {
      throw new NotFound('This connect link is invalid or has expired; ask for a new one');
    }
    return link;
  }

  /**
   * The host acting as itself in its account and in its mode (docs/api.md#test-mode: a host's
   * calendars are its own, a test host's as a live host's), on that mode's clock.
   */
  private async actorOf(link: ConnectLink): Promise<Actor> {
    return {
      accountId: link.accountId,
      principalId: link.hostId,
      livemode: link.livemode,
      clock: await this.testClocks.clockFor(link.accountId, link.livemode),
    };
  }

  /** The host a valid connect link is for, acting as itself in its account and mode; else 404. */
  async hostOf(token: string): Promise<Actor> {
    return this.actorOf(await this.validLink(token));
  }

  /** A host opened their connect link: choose a provider, or start its OAuth flow for the host. */
  async openConnectLink(token: string, provider: OAuthProviderName | undefined): Promise<BrowserOutcome> {
    const link = await this.validLink(token);
    if (provider === undefined) {
      const base = `${this.config.baseUrl}/v1/public/connect/${token}`;
      const oauth = this.oauth.configuredProviders();
      return {
        kind: 'page',
        status: 200,
        title: 'Connect your calendar',
        message:
          oauth.length > 0
            ? 'Choose your calendar provider (your Google or Microsoft password goes to them only), or connect a CalDAV account or a calendar feed below.'
            : 'Connect a CalDAV account (iCloud, Fastmail, Nextcloud …; use an app-specific password) or a calendar feed (ICS) below.',
        links: oauth.map((p) => ({ label: PROVIDER_TITLES[p], url: `${base}?provider=${p}` })),
        forms: [
          {
            title: 'CalDAV',
            action: `${base}/caldav`,
            fields: [
              { name: 'server_url', label: 'Server URL (https)', type: 'url' },
              { name: 'username', label: 'User name', type: 'text' },
              { name: 'password', label: 'App-specific password', type: 'password' },
            ],
            submit: 'Connect CalDAV',
          },
          {
            title: 'Calendar feed (ICS)',
            action: `${base}/ics`,
            fields: [{ name: 'url', label: 'Feed URL (https or webcal)', type: 'url' }],
            submit: 'Add the feed',
          },
        ],
      };
    }
    const started = await this.oauth.startViaLink(await this.actorOf(link), provider);
    return {
      kind: 'redirect',
      location: started.authorize_url,
      cookies: [started.cookie],
    };
  }
}
