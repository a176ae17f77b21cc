/**
 * Connecting a CalDAV account (its calendars discovered) or a read-only ICS feed (read once now to
 * check it and seed the busy cache).
 */
import type { Db } from '../../db/store.js';
import type { Actor } from '../../platform/actor.js';
import type { Clock } from '../../platform/clock.js';
import { hmacSha256Hex } from '../../platform/crypto.js';
import { type AppError, ServiceUnavailable, ValidationFailed } from '../../platform/errors.js';
import type { DerivedKeys } from '../../platform/keys.js';
import { checkUrl, findOutboundRefused, type OutboundPolicy } from '../../platform/outbound.js';
import { cacheWindow } from './busy-cache.js';
import { type Connections, type PresentedConnection, presentConnection } from './connections.js';
import type { ListedCalendar, ProviderGateway } from './gateway.js';
import type { PrincipalDirectory } from './principals.js';
import { ProviderError, parseIcsBusy } from './providers/index.js';
import { calendarsOfConnection } from './repo.js';

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

/** Maps a failed connect-time request to a 400 with a field message, or a 503 when worth retrying. */
function connectError(
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

export interface CalendarConnectDeps {
  db: Db;
  clock: Pick<Clock, 'now'>;
  keys: Pick<DerivedKeys, 'linkKey'>;
  directory: Pick<PrincipalDirectory, 'timeZoneOf'>;
  policy: OutboundPolicy;
  gateway: Pick<ProviderGateway, 'discoverCaldav' | 'readIcs' | 'encrypt'>;
  connections: Pick<Connections, 'store'>;
}

export class CalendarConnect {
  private readonly db: Db;
  private readonly clock: CalendarConnectDeps['clock'];
  private readonly keys: CalendarConnectDeps['keys'];
  private readonly directory: CalendarConnectDeps['directory'];
  private readonly policy: OutboundPolicy;
  private readonly gateway: CalendarConnectDeps['gateway'];
  private readonly connections: CalendarConnectDeps['connections'];

  constructor(deps: CalendarConnectDeps) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.keys = deps.keys;
    this.directory = deps.directory;
    this.policy = deps.policy;
    this.gateway = deps.gateway;
    this.connections = deps.connections;
  }

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
      throw connectError(err, 'server_url', {
        unauthorized: { password: 'was rejected by the server (check the username and password)' },
      });
    }
    if (listed.length === 0) {
      throw new ValidationFailed({ server_url: 'has no calendars with events for this user' });
    }
    const host = checked.url.host;
    const conn = await this.connections.store(
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
      throw connectError(err, 'url', {
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
    const conn = await this.connections.store(
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
}
