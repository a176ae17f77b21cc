/** Table types of the calendars module (migration 0004_calendars), merged into the database type. */
import type { Generated } from 'kysely';
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
  /** Meetings are written here (migration 0009; at most one per principal). */
  is_destination: Generated<boolean>;
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

/** A meeting Kairos keeps in its principals' calendars (migration 0009_calendar_writes). */
export interface CalendarMeetingsTable {
  /** The meeting's own id (a booking id). */
  key: string;
  account_id: string;
  principal_ids: string[];
  title: string;
  description: string | null;
  location: string | null;
  attendees: Json<{ name: string | null; email: string }[]>;
  start_time: Timestamp;
  end_time: Timestamp;
  /** False: remove it from every calendar. */
  live: boolean;
  /** Rises with every change. */
  version: number;
  /** The version the write job last finished a pass over. */
  done_version: Generated<number>;
  /** A write job holds the meeting until then. */
  writer_until: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type MeetingEventStatus = 'pending' | 'synced' | 'failed' | 'removed';

/** One principal's copy of a meeting in a provider calendar. */
export interface CalendarMeetingEventsTable {
  meeting_key: string;
  principal_id: string;
  /** Null once the connection was removed. */
  connection_id: string | null;
  provider: ProviderName;
  calendar_external_id: string;
  /** Google/Graph event id or CalDAV href; null until the provider answered a write. */
  external_id: string | null;
  etag: string | null;
  status: MeetingEventStatus;
  /** The meeting version last written (or removed). */
  written_version: number;
  /** Failed attempts since the last success. */
  attempts: number;
  last_error: string | null;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    calendar_connections: CalendarConnectionsTable;
    calendars: CalendarsTable;
    calendar_busy_cache: CalendarBusyCacheTable;
    calendar_oauth_flows: CalendarOAuthFlowsTable;
    calendar_meetings: CalendarMeetingsTable;
    calendar_meeting_events: CalendarMeetingEventsTable;
  }
}
