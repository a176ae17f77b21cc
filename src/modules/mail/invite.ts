/**
 * Calendar invites (iTIP, RFC 5546) as the text/calendar part of a mail, built with ical-generator.
 * One VEVENT per invite; its UID stays the same over a booking's life and its SEQUENCE rises with each
 * change, so calendar clients update (REQUEST) or remove (CANCEL) the one event they already have.
 * Instants are written in UTC; the reader's zone goes in X-WR-TIMEZONE, among the calendar's own
 * properties before its event (clients that read it stop at the first component), and the text ends
 * with CRLF as every content line must (RFC 5545 §3.1).
 */
import ical, {
  ICalAttendeeRole,
  ICalAttendeeStatus,
  ICalCalendarMethod,
  ICalEventStatus,
} from 'ical-generator';
import { publicName } from '../../lib/mail-text.js';
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

/**
 * The ical-generator calendar of `spec` and its one event. `buildInvite` writes its text; the test
 * compares that with `calendar.toString()` (which writes X-WR-TIMEZONE after the event and no CRLF
 * after END:VCALENDAR: the two differences buildInvite makes on purpose).
 */
export function inviteCalendar(spec: InviteSpec, stamp: Date) {
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
  const event = calendar.createEvent({
    id: spec.uid,
    sequence: spec.sequence,
    stamp,
    start: spec.start,
    end: spec.end,
    summary: spec.summary,
    description: spec.description ?? null,
    url: spec.url ?? null,
    status: cancel ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
    // Its CN is a name, never the address (which is in its mailto: already).
    organizer: {
      name: paramSafe(publicName(spec.organizer.name, 'Organizer')) ?? 'Organizer',
      email: spec.organizer.email,
    },
    attendees: spec.attendees.map((a) => ({
      email: a.email,
      name: paramSafe(a.name) ?? null,
      role: ICalAttendeeRole.REQ,
      // A booking is made by (or for) its attendees: they have accepted it.
      status: cancel ? null : ICalAttendeeStatus.ACCEPTED,
    })),
  });
  return { calendar, event };
}

/** The .ics text of `spec`. `stamp`: its DTSTAMP (when it was written; default now). */
export function buildInvite(spec: InviteSpec, opts: { stamp?: Date } = {}): string {
  const { event } = inviteCalendar(spec, opts.stamp ?? new Date());
  const cancel = spec.method === 'CANCEL';
  // What `calendar.toString()` writes, with the same folding done cheaply (see `fold`), the zone
  // before the event and a CRLF after the last line; a test keeps the two equal but for those.
  const unfolded =
    'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//kairos//kairos//EN\r\n' +
    `METHOD:${cancel ? 'CANCEL' : 'REQUEST'}\r\n` +
    (spec.timezone ? `X-WR-TIMEZONE:${escapeText(spec.timezone)}\r\n` : '') +
    `${event.toString()}END:VCALENDAR\r\n`;
  return fold(unfolded);
}

/** A TEXT value as ical-generator escapes it (backslash, semicolon, comma; line breaks as \n). */
function escapeText(value: string): string {
  return value.replace(/[\\;,]/g, (c) => `\\${c}`).replace(/\r\n|\r|\n/g, '\\n');
}

const SURROGATE = /[\ud800-\udfff]/;

/** UTF-8 bytes of one character (a surrogate pair, or a lone surrogate written as U+FFFD). */
function utf8Bytes(ch: string): number {
  if (ch.length > 1) return Buffer.byteLength(ch, 'utf8');
  const c = ch.charCodeAt(0);
  return c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
}

/**
 * Lines folded at 75 octets (RFC 5545 §3.1) exactly as ical-generator folds them, which measures
 * every character with a new TextEncoder (~0.3 ms per invite); here a line that fits is left alone
 * and the others are measured by code unit.
 */
export function fold(text: string): string {
  return text
    .split('\r\n')
    .map((line) => {
      // At most 3 octets per code unit as it counts them; surrogates aside, as Buffer counts them.
      if (line.length <= 24 || (!SURROGATE.test(line) && Buffer.byteLength(line, 'utf8') <= 74)) return line;
      let out = '';
      let n = 0;
      for (let r = 0; r < line.length; r++) {
        let ch = line.charAt(r);
        if (ch >= '\ud800' && ch <= '\udbff') ch += line.charAt(++r);
        const bytes = utf8Bytes(ch);
        n += bytes;
        if (n > 74) {
          out += '\r\n ';
          n = bytes;
        }
        out += ch;
      }
      return out;
    })
    .join('\r\n');
}
