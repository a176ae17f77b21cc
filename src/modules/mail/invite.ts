/**
 * Calendar invites (iTIP, RFC 5546) as the text/calendar part of a mail, built with ical-generator.
 * One VEVENT per invite; its UID stays the same over a booking's life and its SEQUENCE rises with each
 * change, so calendar clients update (REQUEST) or remove (CANCEL) the one event they already have.
 * Instants are written in UTC; the display zone goes in X-WR-TIMEZONE.
 */
import ical, {
  ICalAttendeeRole,
  ICalAttendeeStatus,
  ICalCalendarMethod,
  ICalEventStatus,
} from 'ical-generator';
import type { InviteSpec } from './api.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it matches
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/**
 * A display name as a parameter value: RFC 5545 parameter values cannot hold a DQUOTE (nor control
 * characters), and ical-generator would put a backslash before it, which no client reads back.
 */
function paramSafe(name: string | null | undefined): string | undefined {
  if (name === null || name === undefined) return undefined;
  const clean = name.replace(/"/g, "'").replace(CONTROL_CHARACTERS, ' ').trim();
  return clean === '' ? undefined : clean;
}

/** The .ics text of `spec`. `stamp`: its DTSTAMP (when it was written; default now). */
export function buildInvite(spec: InviteSpec, opts: { stamp?: Date } = {}): string {
  if (!(spec.end.getTime() > spec.start.getTime())) throw new Error('invite: end must be after start');
  if (!Number.isInteger(spec.sequence) || spec.sequence < 0) {
    throw new Error('invite: sequence must be a non-negative integer');
  }
  const cancel = spec.method === 'CANCEL';
  const calendar = ical({
    prodId: { company: 'kairos', product: 'kairos', language: 'EN' },
    method: cancel ? ICalCalendarMethod.CANCEL : ICalCalendarMethod.REQUEST,
    x: spec.timezone ? { 'X-WR-TIMEZONE': spec.timezone } : undefined,
  });
  calendar.createEvent({
    id: spec.uid,
    sequence: spec.sequence,
    stamp: opts.stamp ?? new Date(),
    start: spec.start,
    end: spec.end,
    summary: spec.summary,
    description: spec.description ?? null,
    url: spec.url ?? null,
    status: cancel ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
    organizer: { name: paramSafe(spec.organizer.name) ?? spec.organizer.email, email: spec.organizer.email },
    attendees: spec.attendees.map((a) => ({
      email: a.email,
      name: paramSafe(a.name) ?? null,
      role: ICalAttendeeRole.REQ,
      // A booking is made by (or for) its attendees: they have accepted it.
      status: cancel ? null : ICalAttendeeStatus.ACCEPTED,
    })),
  });
  return calendar.toString();
}
