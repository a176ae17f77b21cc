/**
 * A principal's calendar connections: who a request acts for, storing a new connection with its
 * calendars (OAuth, CalDAV and ICS connect all end here), the calendar list and selection, manual
 * sync, disconnect, and which principals have a working connection.
 */
import type { Db } from '../../db/store.js';
import { enqueueMany } from '../../jobs/runner.js';
import type { Actor } from '../../platform/actor.js';
import type { Clock } from '../../platform/clock.js';
import { AppError, Forbidden, NotFound, Unprocessable } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { type CalendarBusySource, isProviderFailure } from './busy-cache.js';
import type { ListedCalendar } from './gateway.js';
import { REVOKE_QUEUE } from './jobs.js';
import type { MeetingWriter } from './meetings.js';
import type { PrincipalDirectory } from './principals.js';
import {
  type CalendarRow,
  type ConnectionRow,
  calendarsOfPrincipal,
  connectedPrincipals,
  connectionsOf,
  deleteConnections,
  lockProviderAccounts,
  providerAccountsInUse,
  findCalendar,
  findConnection,
  recordSyncSuccess,
  setDestination,
  setSelected,
  syncCalendars,
  upsertConnection,
  writeCache,
} from './repo.js';
import type { ProviderName } from './tables.js';

export const PROVIDERS: readonly ProviderName[] = ['google', 'microsoft', 'caldav', 'ics'];

/**
 * Whether `caller` may change the calendars of `principalId`, one it may act for (docs/api.md#test-mode):
 * a host's calendars follow the host, so a test-mode caller changes those of its (test) hosts; the
 * principals shared by both modes — the caller's own (its account's, a user's) — it reads and syncs but
 * never changes: 403 `live_mode_only`. Live callers: no check. No statement: whom a caller may act for
 * is the caller itself or a host of its mode (the principals module's `mayActFor`).
 */
export function mayChange(caller: Actor, principalId: string): void {
  if (caller.livemode) return;
  const id = principalId.toLowerCase();
  if (id !== caller.principalId.toLowerCase() && id !== caller.accountId.toLowerCase()) return;
  throw new Forbidden(
    'A test key cannot change the calendars of a principal shared with live mode; connect test calendars to a test host',
    { code: 'live_mode_only' },
  );
}

export function presentCalendar(row: CalendarRow, provider: ProviderName) {
  return {
    id: row.id,
    name: row.name,
    provider,
    primary: row.is_primary,
    selected: row.selected,
    destination: row.is_destination,
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

/** A connection as a connect flow found it, before it is stored. */
export interface NewConnection {
  provider: ProviderName;
  dedupe_key: string;
  display: string;
  credentials_enc: string;
  token_expires_at: Date | null;
  server_url: string | null;
}

/** Busy time read while connecting, stored as the connection's first cache. */
export interface BusySeed {
  intervals: [number, number][];
  window: { start: number; end: number };
}

export interface ConnectionsDeps {
  db: Db;
  clock: Clock;
  directory: PrincipalDirectory;
  busySource: Pick<CalendarBusySource, 'queueRefresh' | 'refresh' | 'forget'>;
  meetings: Pick<MeetingWriter, 'retryFailed'>;
}

export class Connections {
  private readonly meetings: ConnectionsDeps['meetings'];
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly directory: PrincipalDirectory;
  private readonly busySource: ConnectionsDeps['busySource'];

  constructor(deps: ConnectionsDeps) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.directory = deps.directory;
    this.busySource = deps.busySource;
    this.meetings = deps.meetings;
  }

  // ---------------------------------------------------------------------------------------------
  // Who

  /**
   * The principal a request acts for: the caller itself, or (with `principal_id`) a live host its
   * account manages. Anything else is 403, whether or not the principal exists.
   */
  async actorFor(caller: Actor, principalId: string | undefined): Promise<Actor> {
    if (principalId === undefined) return caller;
    if (await this.directory.mayActFor(caller, principalId)) {
      return { ...caller, principalId };
    }
    throw new Forbidden('principal_id is neither you nor a host your account manages');
  }

  /**
   * As `actorFor`, to change the principal's calendars (connect, select, disconnect): a test-mode
   * caller changes only its test hosts' calendars (`mayChange`).
   */
  async changingFor(caller: Actor, principalId: string | undefined): Promise<Actor> {
    const actor = await this.actorFor(caller, principalId);
    mayChange(caller, actor.principalId);
    return actor;
  }

  /** For the principals module: which of `ids` have a working calendar connection. */
  connected(ids: readonly string[]): Promise<ReadonlySet<string>> {
    return connectedPrincipals(this.db, ids);
  }

  async isConnected(principalId: string): Promise<boolean> {
    return (await connectedPrincipals(this.db, [principalId])).has(principalId);
  }

  // ---------------------------------------------------------------------------------------------
  // Storing a new connection

  /** Stores (or refreshes) a connection with its calendars; queues or seeds its busy cache. */
  async store(
    actor: Actor,
    c: NewConnection,
    listed: ListedCalendar[],
    seed?: BusySeed,
  ): Promise<ConnectionRow> {
    const now = this.clock.now();
    const zone = await this.directory.timeZoneOf(actor.principalId);
    const stored = await this.db.transaction().execute(async (trx) => {
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
      // Writes that failed while the calendar was disconnected are tried again.
      await this.meetings.retryFailed(trx, actor.principalId);
      return (await findConnection(trx, conn.id)) ?? conn;
    });
    this.busySource.forget(actor.principalId);
    return stored;
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
    caller: Actor,
    id: string,
  ): Promise<{ row: CalendarRow; conn: ConnectionRow }> {
    const row = await findCalendar(this.db, caller.accountId, id);
    const mine = row !== undefined && (await this.directory.mayActFor(caller, row.principal_id));
    const conn = row && mine ? await findConnection(this.db, row.connection_id) : undefined;
    if (!row || !conn) throw new NotFound('No calendar with this id');
    return { row, conn };
  }

  async getCalendar(caller: Actor, id: string): Promise<PresentedCalendar> {
    const { row, conn } = await this.accessibleCalendar(caller, id);
    return presentCalendar(row, conn.provider);
  }

  /**
   * Selects or deselects a calendar for busy checking (the cache for the new selection is fetched in
   * the background) and/or makes it the principal's destination for written meetings.
   */
  async updateCalendar(
    caller: Actor,
    id: string,
    change: { selected?: boolean | undefined; destination?: boolean | undefined },
  ): Promise<PresentedCalendar> {
    const { row, conn } = await this.accessibleCalendar(caller, id);
    mayChange(caller, row.principal_id);
    if (change.destination === true && conn.provider === 'ics') {
      throw new Unprocessable('ICS feeds are read-only: meetings cannot be written into them', {
        code: 'calendar_read_only',
      });
    }
    const selectionChanges = change.selected !== undefined && change.selected !== row.selected;
    const destinationChanges = change.destination !== undefined && change.destination !== row.is_destination;
    if (!selectionChanges && !destinationChanges) return presentCalendar(row, conn.provider);
    const now = this.clock.now();
    const updated = await this.db.transaction().execute(async (trx) => {
      let r = row;
      if (selectionChanges) {
        r = await setSelected(trx, id, change.selected!, now);
        if (conn.status === 'connected') await this.busySource.queueRefresh(trx, conn.id);
      }
      if (destinationChanges) r = await setDestination(trx, r, change.destination!, now);
      return r;
    });
    if (selectionChanges) this.busySource.forget(row.principal_id);
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
    this.busySource.forget(actor.principalId);
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
}
