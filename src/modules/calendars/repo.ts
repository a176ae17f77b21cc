/** SQL of the calendars module: connections, calendars, the busy cache and OAuth flows. */
import { type Insertable, type Selectable, sql } from 'kysely';
import type { Db, Tx } from '../../db/store.js';
import type {
  CachedBusy,
  CalendarConnectionsTable,
  CalendarOAuthFlowsTable,
  CalendarsTable,
  ConnectionStatus,
  ProviderName,
} from './tables.js';
import './tables.js';

type Queryable = Db | Tx;

export type ConnectionRow = Selectable<CalendarConnectionsTable>;

export type CalendarRow = Selectable<CalendarsTable>;

export interface CacheRow {
  window_start: Date;
  window_end: Date;
  busy: CachedBusy;
  fetched_at: Date;
}

/** A connection as the busy source reads it: its state, its cache and its selected source keys. */
export interface BusyReadRow {
  id: string;
  provider: ProviderName;
  status: ConnectionStatus;
  status_reason: string | null;
  last_used_at: Date;
  retry_at: Date | null;
  last_error: string | null;
  selected_keys: string[];
  cache: CacheRow | null;
}

export type FlowRow = Omit<Selectable<CalendarOAuthFlowsTable>, 'created_at' | 'consumed_at'>;

// ---------------------------------------------------------------------------------------------------
// Connections

export async function findConnection(db: Queryable, id: string): Promise<ConnectionRow | undefined> {
  return db.selectFrom('calendar_connections').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The connection row locked for update (token refresh). */
export async function lockConnection(trx: Tx, id: string): Promise<ConnectionRow | undefined> {
  return trx
    .selectFrom('calendar_connections')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function connectionsOf(db: Queryable, principalId: string): Promise<ConnectionRow[]> {
  return db
    .selectFrom('calendar_connections')
    .selectAll()
    .where('principal_id', '=', principalId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * Inserts a connection, or, when the principal already has one with the same provider and dedupe key,
 * replaces its credentials and marks it connected again. Returns the row as stored.
 */
export async function upsertConnection(
  db: Queryable,
  row: Insertable<CalendarConnectionsTable>,
): Promise<ConnectionRow> {
  return db
    .insertInto('calendar_connections')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['principal_id', 'provider', 'dedupe_key']).doUpdateSet((eb) => ({
        display: eb.ref('excluded.display'),
        status: eb.ref('excluded.status'),
        status_reason: null,
        credentials_enc: eb.ref('excluded.credentials_enc'),
        token_expires_at: eb.ref('excluded.token_expires_at'),
        server_url: eb.ref('excluded.server_url'),
        time_zone: eb.ref('excluded.time_zone'),
        last_used_at: eb.ref('excluded.last_used_at'),
        last_error: null,
        last_error_at: null,
        failure_count: 0,
        retry_at: null,
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateTokens(
  db: Queryable,
  id: string,
  credentialsEnc: string,
  expiresAt: Date,
  now: Date,
): Promise<void> {
  await db
    .updateTable('calendar_connections')
    .set({ credentials_enc: credentialsEnc, token_expires_at: expiresAt, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Marks a connection disconnected and forgets its credentials (they no longer work). */
export async function markDisconnected(db: Queryable, id: string, reason: string, now: Date): Promise<void> {
  await db
    .updateTable('calendar_connections')
    .set({
      status: 'disconnected',
      status_reason: reason,
      credentials_enc: null,
      token_expires_at: null,
      last_error: reason,
      last_error_at: now,
      retry_at: null,
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
}

export async function recordSyncSuccess(db: Queryable, id: string, now: Date): Promise<void> {
  await db
    .updateTable('calendar_connections')
    .set({ last_sync_at: now, last_error: null, failure_count: 0, retry_at: null })
    .where('id', '=', id)
    .execute();
}

export async function recordSyncFailure(
  db: Queryable,
  id: string,
  error: string,
  now: Date,
  retryAt: Date,
): Promise<void> {
  await db
    .updateTable('calendar_connections')
    .set((eb) => ({
      last_error: error.slice(0, 500),
      last_error_at: now,
      failure_count: eb('failure_count', '+', 1),
      retry_at: retryAt,
    }))
    .where('id', '=', id)
    .execute();
}

export async function touchConnection(db: Queryable, id: string, now: Date): Promise<void> {
  await db.updateTable('calendar_connections').set({ last_used_at: now }).where('id', '=', id).execute();
}

export async function clearRefreshQueued(db: Queryable, id: string): Promise<void> {
  await db
    .updateTable('calendar_connections')
    .set({ refresh_queued_until: null })
    .where('id', '=', id)
    .execute();
}

/**
 * Connections the background refresh should fetch now, marked as queued until `queuedUntil` in the
 * same statement (so two sweeps never queue the same connection twice): connected, read since
 * `usedSince`, last fetched before `syncedBefore` (or never), not backing off, not already queued.
 */
export async function claimDueForRefresh(
  db: Queryable,
  now: Date,
  syncedBefore: Date,
  usedSince: Date,
  queuedUntil: Date,
  limit: number,
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    UPDATE calendar_connections SET refresh_queued_until = ${queuedUntil}
    WHERE id IN (
      SELECT id FROM calendar_connections
      WHERE status = 'connected'
        AND last_used_at >= ${usedSince}
        AND (last_sync_at IS NULL OR last_sync_at < ${syncedBefore})
        AND (retry_at IS NULL OR retry_at <= ${now})
        AND (refresh_queued_until IS NULL OR refresh_queued_until < ${now})
      ORDER BY last_sync_at NULLS FIRST
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id
  `.execute(db);
  return rows.map((r) => r.id);
}

/** Deletes connections (calendars and cache go with them). */
export async function deleteConnections(db: Queryable, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('calendar_connections').where('id', 'in', ids).execute();
}

/**
 * Serializes transactions about the same provider accounts (until commit), so that two principals
 * removing connections of one account at once do not each see the other's and both skip revoking.
 */
export async function lockProviderAccounts(
  trx: Tx,
  provider: ProviderName,
  displays: readonly string[],
): Promise<void> {
  for (const d of [...new Set(displays)].sort()) {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`kairos:${provider}-account:${d}`}))`.execute(trx);
  }
}

/** Which of these accounts (`display`: a Google account's address) still back a connection. */
export async function providerAccountsInUse(
  db: Queryable,
  provider: ProviderName,
  displays: readonly string[],
): Promise<Set<string>> {
  if (displays.length === 0) return new Set();
  const rows = await db
    .selectFrom('calendar_connections')
    .select('display')
    .distinct()
    .where('provider', '=', provider)
    .where('display', 'in', displays)
    .execute();
  return new Set(rows.map((r) => r.display));
}

// ---------------------------------------------------------------------------------------------------
// Calendars

export async function calendarsOfConnection(db: Queryable, connectionId: string): Promise<CalendarRow[]> {
  return db
    .selectFrom('calendars')
    .selectAll()
    .where('connection_id', '=', connectionId)
    .orderBy('is_primary', 'desc')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function calendarsOfPrincipal(db: Queryable, principalId: string): Promise<CalendarRow[]> {
  return db
    .selectFrom('calendars')
    .selectAll()
    .where('principal_id', '=', principalId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function findCalendar(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<CalendarRow | undefined> {
  return db
    .selectFrom('calendars')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export async function setSelected(
  db: Queryable,
  id: string,
  selected: boolean,
  now: Date,
): Promise<CalendarRow> {
  return db
    .updateTable('calendars')
    .set({ selected, updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Makes the calendar its principal's destination (clearing any other first: at most one per
 * principal), or stops it being one.
 */
export async function setDestination(
  trx: Tx,
  row: CalendarRow,
  destination: boolean,
  now: Date,
): Promise<CalendarRow> {
  if (destination) {
    await trx
      .updateTable('calendars')
      .set({ is_destination: false, updated_at: now })
      .where('principal_id', '=', row.principal_id)
      .where('is_destination', '=', true)
      .where('id', '<>', row.id)
      .execute();
  }
  return trx
    .updateTable('calendars')
    .set({ is_destination: destination, updated_at: now })
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface CalendarInput {
  id: string;
  external_id: string;
  source_key: string;
  name: string;
  is_primary: boolean;
  /** Used only for calendars new to this connection; known ones keep the user's choice. */
  selected: boolean;
}

/**
 * Makes the connection's calendars what the provider listed: new ones are added, known ones renamed
 * (keeping `selected`), vanished ones removed.
 */
export async function syncCalendars(
  trx: Tx,
  conn: { id: string; account_id: string; principal_id: string },
  calendars: CalendarInput[],
  now: Date,
): Promise<void> {
  const keep = calendars.map((c) => c.external_id);
  let del = trx.deleteFrom('calendars').where('connection_id', '=', conn.id);
  if (keep.length > 0) del = del.where('external_id', 'not in', keep);
  await del.execute();
  if (calendars.length === 0) return;
  await trx
    .insertInto('calendars')
    .values(
      calendars.map((c) => ({
        id: c.id,
        connection_id: conn.id,
        account_id: conn.account_id,
        principal_id: conn.principal_id,
        external_id: c.external_id,
        source_key: c.source_key,
        name: c.name,
        is_primary: c.is_primary,
        selected: c.selected,
        last_error: null,
        created_at: now,
        updated_at: now,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['connection_id', 'external_id']).doUpdateSet((eb) => ({
        name: eb.ref('excluded.name'),
        source_key: eb.ref('excluded.source_key'),
        is_primary: eb.ref('excluded.is_primary'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/** Records per-calendar errors of the last fetch (null clears). */
export async function setCalendarErrors(
  db: Queryable,
  connectionId: string,
  errors: Map<string, string>,
): Promise<void> {
  await db
    .updateTable('calendars')
    .set({ last_error: null })
    .where('connection_id', '=', connectionId)
    .where('last_error', 'is not', null)
    .execute();
  for (const [sourceKey, reason] of errors) {
    await db
      .updateTable('calendars')
      .set({ last_error: reason.slice(0, 200) })
      .where('connection_id', '=', connectionId)
      .where('source_key', '=', sourceKey)
      .execute();
  }
}

// ---------------------------------------------------------------------------------------------------
// Busy cache

/** Everything the busy source needs for one principal, in one round trip. */
export async function busyReadRows(db: Queryable, principalId: string): Promise<BusyReadRow[]> {
  const { rows } = await sql<{
    id: string;
    provider: ProviderName;
    status: ConnectionStatus;
    status_reason: string | null;
    last_used_at: Date;
    retry_at: Date | null;
    last_error: string | null;
    selected_keys: string[];
    window_start: Date | null;
    window_end: Date | null;
    busy: CachedBusy | null;
    fetched_at: Date | null;
  }>`
    SELECT c.id, c.provider, c.status, c.status_reason, c.last_used_at, c.retry_at, c.last_error,
      coalesce((SELECT array_agg(DISTINCT k.source_key) FROM calendars k
        WHERE k.connection_id = c.id AND k.selected), '{}') AS selected_keys,
      b.window_start, b.window_end, b.busy, b.fetched_at
    FROM calendar_connections c
    LEFT JOIN calendar_busy_cache b ON b.connection_id = c.id
    WHERE c.principal_id = ${principalId}
    ORDER BY c.created_at, c.id
  `.execute(db);
  return rows.map((r) => ({
    id: r.id,
    provider: r.provider,
    status: r.status,
    status_reason: r.status_reason,
    last_used_at: r.last_used_at,
    retry_at: r.retry_at,
    last_error: r.last_error,
    selected_keys: r.selected_keys,
    cache:
      r.window_start && r.window_end && r.busy && r.fetched_at
        ? { window_start: r.window_start, window_end: r.window_end, busy: r.busy, fetched_at: r.fetched_at }
        : null,
  }));
}

export async function readCache(db: Queryable, connectionId: string): Promise<CacheRow | undefined> {
  return db
    .selectFrom('calendar_busy_cache')
    .select(['window_start', 'window_end', 'busy', 'fetched_at'])
    .where('connection_id', '=', connectionId)
    .executeTakeFirst();
}

export async function writeCache(
  db: Queryable,
  connectionId: string,
  window: { start: number; end: number },
  busy: CachedBusy,
  fetchedAt: Date,
): Promise<void> {
  const row = {
    connection_id: connectionId,
    window_start: new Date(window.start),
    window_end: new Date(window.end),
    busy: JSON.stringify(busy),
    fetched_at: fetchedAt,
  };
  await db
    .insertInto('calendar_busy_cache')
    .values(row)
    .onConflict((oc) =>
      oc.column('connection_id').doUpdateSet({
        window_start: row.window_start,
        window_end: row.window_end,
        busy: row.busy,
        fetched_at: row.fetched_at,
      }),
    )
    .execute();
}

// ---------------------------------------------------------------------------------------------------
// OAuth flows

export async function insertFlow(db: Queryable, row: Insertable<CalendarOAuthFlowsTable>): Promise<void> {
  await db.insertInto('calendar_oauth_flows').values(row).execute();
}

/** Consumes a pending flow exactly once; undefined when unknown, expired or already used. */
export async function consumeFlow(db: Queryable, id: string, now: Date): Promise<FlowRow | undefined> {
  return db
    .updateTable('calendar_oauth_flows')
    .set({ consumed_at: now })
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returning([
      'id',
      'account_id',
      'principal_id',
      'provider',
      'verifier_enc',
      'redirect_uri',
      'client_state',
      'via_link',
      'expires_at',
    ])
    .executeTakeFirst();
}

export async function deleteOldFlows(db: Queryable, before: Date): Promise<void> {
  await db.deleteFrom('calendar_oauth_flows').where('expires_at', '<', before).execute();
}

/** Which of `ids` have at least one working calendar connection. */
export async function connectedPrincipals(db: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('calendar_connections')
    .select('principal_id')
    .distinct()
    .where('principal_id', 'in', [...ids])
    .where('status', '=', 'connected')
    .execute();
  return new Set(rows.map((r) => r.principal_id));
}
