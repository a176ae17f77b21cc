/**
 * The calendars module's public surface (docs/architecture.md#modules): types only. What other modules
 * may call (`CalendarsApi`, implemented by the calendars service) and what it needs (`CalendarsNeeds`).
 */
import type { Tx } from '../../db/store.js';
import type { WriteBatch } from '../../jobs/runner.js';
import type { PrincipalsApi } from '../principals/api.js';
import type { MeetingEventStatus, ProviderName } from './tables.js';

/** What calendars need: may an actor act for a principal (a host: of its mode), and its stored zone. */
export interface CalendarsNeeds {
  principals: Pick<PrincipalsApi, 'storedZoneOf'> & {
    access: Pick<PrincipalsApi['access'], 'mayActFor'>;
  };
}

/** What to keep in the principals' calendars. */
export interface MeetingSpec {
  /** The meeting's own id (a booking id); one meeting per key. */
  key: string;
  accountId: string;
  principalIds: readonly string[];
  title: string;
  description?: string | null;
  /** A URL or place. */
  location?: string | null;
  /** Guests (customers); only Google receives them as attendees, without notifications. */
  attendees: readonly { name: string | null; email: string }[];
  start: Date;
  end: Date;
  /**
   * The mode of what it is about (docs/api.md#test-mode): a test-mode meeting is never written to a calendar. Absent: live.
   */
  livemode?: boolean;
}

/** How writing a meeting into one principal's calendar went. */
export interface CalendarSync {
  principal_id: string;
  provider: ProviderName | null;
  status: MeetingEventStatus;
  error: string | null;
  updated_at: string | null;
}

export interface CalendarsApi {
  /**
   * Keeps a meeting in its principals' own calendars (created, or moved/retitled when the key is
   * known), written after `trx` commits by a retried job. Answers the principals whose calendars will
   * receive it. With `batch`, its statement may join the caller's batch (sent when the caller runs it).
   * A test-mode meeting (`livemode: false`) is written nowhere, stores nothing and answers no one.
   */
  writeMeeting(trx: Tx, spec: MeetingSpec, batch?: WriteBatch): Promise<Set<string>>;
  /** Removes a meeting from its principals' calendars, after `trx` commits. */
  removeMeeting(trx: Tx, key: string): Promise<Set<string>>;
  /** How writing the meetings went, per principal. */
  calendarSync(keys: readonly string[]): Promise<Map<string, CalendarSync[]>>;
  /** Whether the principal has a working calendar connection. */
  isConnected(principalId: string): Promise<boolean>;
}
