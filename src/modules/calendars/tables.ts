/** Table types of the calendars module (migration 0004_calendars), merged into the database type. */
import type { Json, Timestamp } from '../../db/types.js';

export type ProviderName = 'google' | 'microsoft' | 'caldav' | 'ics';
export type OAuthProviderName = 'google' | 'microsoft';
export type ConnectionStatus = 'connected' | 'disconnected';

/**
 * A cached provider answer: merged busy intervals ([start, end) epoch ms) of the sources whose keys are
 * listed (sorted). A cache entry answers only for exactly that selection.
 */
export interface CachedBusy {
  keys: string[];
  intervals: [number, number][];
}

export interface CalendarConnectionsTable {
  id: string;
  account_id: string;
  principal_id: string;
  provider: ProviderName;
  /** Tells connections of one provider apart: '' for OAuth (one per provider), server|user, feed hash. */
  dedupe_key: string;
  /** What the user recognises: the account's e-mail, user@host, the feed's host. Never a secret. */
  display: string;
  status: ConnectionStatus;
  /** Why it is disconnected (`invalid_grant`, `unauthorized`). */
  status_reason: string | null;
  /** AES-256-GCM envelope of the credentials JSON (tokens, password or feed URL); null once revoked. */
  credentials_enc: string | null;
  token_expires_at: Timestamp | null;
  /** CalDAV server URL as given (no credentials in it). */
  server_url: string | null;
  /** Zone for floating times and all-day events of CalDAV and ICS data. */
  time_zone: string;
  /** Last time availability read this connection (rounded to 10 minutes); background refresh follows it. */
  last_used_at: Timestamp;
  /** Last successful busy fetch. */
  last_sync_at: Timestamp | null;
  last_error: string | null;
  last_error_at: Timestamp | null;
  /** Consecutive failed fetches (backoff). */
  failure_count: number;
  /** No provider call before this (Retry-After of a 429, or backoff after failures). */
  retry_at: Timestamp | null;
  /** A background refresh is queued until then; the sweep does not queue another. */
  refresh_queued_until: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CalendarsTable {
  id: string;
  connection_id: string;
  account_id: string;
  principal_id: string;
  /** The provider's id: Google calendar id, Graph calendar id, CalDAV URL, `feed`. */
  external_id: string;
  /** Which entry of the busy cache holds this calendar's busy time (Graph: the owner's mailbox). */
  source_key: string;
  name: string;
  is_primary: boolean;
  selected: boolean;
  /** The provider's complaint about this calendar at the last fetch (notFound, forbidden ...). */
  last_error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CalendarBusyCacheTable {
  connection_id: string;
  window_start: Timestamp;
  window_end: Timestamp;
  busy: Json<CachedBusy>;
  fetched_at: Timestamp;
}

export interface CalendarOAuthFlowsTable {
  id: string;
  account_id: string;
  principal_id: string;
  provider: OAuthProviderName;
  verifier_enc: string;
  redirect_uri: string | null;
  client_state: string | null;
  via_link: boolean;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
}

declare module '../../db/types.js' {
  interface DB {
    calendar_connections: CalendarConnectionsTable;
    calendars: CalendarsTable;
    calendar_busy_cache: CalendarBusyCacheTable;
    calendar_oauth_flows: CalendarOAuthFlowsTable;
  }
}
