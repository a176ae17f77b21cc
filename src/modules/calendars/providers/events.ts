/**
 * What Kairos writes into a provider calendar (bookings today, accepted proposals later), and how it
 * recognises its own events again when it reads busy time (docs/design.md#calendar-write-through):
 * every written event carries a marker, and busy reads skip marked events, because
 * the meeting is already busy time through its booking.
 *
 * - Google: event `id` = `ref` (client-set, so a retried insert answers 409 instead of making a
 *   second event) and `extendedProperties.private[KAIROS_PROPERTY]` = the meeting key.
 * - Microsoft Graph: `transactionId` = `ref` (Graph's retry guard for creates) and a string
 *   single-value extended property `GRAPH_KAIROS_PROPERTY_ID` = the meeting key.
 * - CalDAV: resource `<calendar>/<ref>.ics`, `UID:<ref>@kairos` and `X-KAIROS-MEETING:<meeting key>`.
 */
import { createHash } from 'node:crypto';

/** Google private extended property holding the meeting key. */
export const KAIROS_PROPERTY = 'kairosMeeting';
/** Graph single-value extended property (a named string property in Kairos's own property set). */
export const GRAPH_KAIROS_PROPERTY_ID = 'String {9c3b8f0e-6a3e-4c1d-9d55-6f1a2b7c4e10} Name kairosMeeting';
/** iCalendar property naming the meeting key on CalDAV events. */
export const ICAL_KAIROS_PROPERTY = 'X-KAIROS-MEETING';
/** Suffix of the UID of every CalDAV event Kairos writes. */
export const KAIROS_UID_SUFFIX = '@kairos';

/** A meeting as one principal's calendar receives it. */
export interface EventSpec {
  /**
   * Stable per (meeting, principal): `kairos` + 32 hex digits, so it is a valid Google event id
   * (base32hex, 5–1024 chars), a Graph transactionId and a CalDAV resource name.
   */
  ref: string;
  /** The meeting's key (a booking id), written as the Kairos marker. */
  meetingKey: string;
  title: string;
  description: string | null;
  /** A URL or place, or null. */
  location: string | null;
  /** Epoch ms, [start, end). */
  start: number;
  end: number;
  /** IANA zone the event is shown in (the host's zone). Instants stay UTC. */
  timeZone: string;
  /** Guests (the customer). Only Google receives them as attendees (with sendUpdates=none). */
  attendees: { name: string | null; email: string }[];
  /** Rises with every change (CalDAV SEQUENCE). */
  sequence: number;
}

/** Where a written event lives, as the provider answered. */
export interface WrittenEvent {
  /** Google event id, Graph event id, or the CalDAV resource's absolute URL. */
  id: string;
  /** CalDAV ETag (or Google/Graph etag), when the provider gave one. */
  etag: string | null;
}

/** The stable ref of a meeting's event in one principal's calendar. */
export function eventRef(meetingKey: string, principalId: string): string {
  const hex = createHash('sha256').update(`${meetingKey}\u0000${principalId}`).digest('hex');
  return `kairos${hex.slice(0, 32)}`;
}
