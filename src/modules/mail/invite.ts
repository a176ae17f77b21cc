/**
 * Calendar invites (iTIP, RFC 5546) as the text/calendar part of a mail, built with ical-generator.
 * One VEVENT per invite (a series' may be followed by its overrides); its UID stays the same over a booking's life and its SEQUENCE rises with each
 * change, so calendar clients update (REQUEST) or remove (CANCEL) the one event they already have.
 * Instants are written in UTC; the reader's zone goes in X-WR-TIMEZONE, among the calendar's own
 * properties before its first component (clients that read it stop there), and the text ends with
 * CRLF as every content line must (RFC 5545 §3.1).
 * A recurring series (docs/api.md#recurring-series) is one VEVENT with RRULE and EXDATE, and an
 * occurrence changed alone a VEVENT with RECURRENCE-ID of the same UID; both are written in the
 * series' zone (DTSTART;TZID=…) with that zone's VTIMEZONE (timezones-ical-library), so clients repeat
 * the wall-clock time across DST as the series does (src/lib/recurrence.ts). A series' VEVENT may be
 * followed by overrides (RECURRENCE-ID) of the occurrences moved so far, one VEVENT each, as RFC 5546
 * §3.2.2 has a REQUEST of a whole recurring event carry them.
 */
import ical, {
  ICalAttendeeRole,
  ICalAttendeeStatus,
  ICalCalendarMethod,
  ICalEventStatus,
} from 'ical-generator';
import { DateTime } from 'luxon';
import { tzlib_get_ical_block, tzlib_get_timezones } from 'timezones-ical-library';
import { publicName } from '../../lib/mail-text.js';
import { toWall } from '../../lib/schedule.js';
import type { InviteSpec } from './api.js';

/** VTIMEZONE blocks by zone (the library builds one in ~0.2 ms; a series' mails ask for one zone). */
const vtimezones = new Map<string, string | null>();
/** The zones the library has a VTIMEZONE for (made when first asked). */
let known: Set<string> | undefined;
/** Zones Luxon was asked about (~0.1 ms a question): whether each is one. */
const validZones = new Map<string, boolean>();

function isZone(zone: string): boolean {
  let valid = validZones.get(zone);
  if (valid === undefined) {
    valid = DateTime.local().setZone(zone).isValid;
    if (validZones.size >= 500) validZones.clear();
    validZones.set(zone, valid);
  }
  return valid;
}

/**
 * The VTIMEZONE of an IANA zone (CRLF lines, no CRLF after its last), or null when the library does
 * not know the zone: then the TZID stands alone, which calendar clients resolve by its IANA name. A
 * link (Africa/Accra) is answered with its canonical zone's rules, named as asked.
 */
export function vtimezone(zone: string): string | null {
  let block = vtimezones.get(zone);
  if (block === undefined) {
    // Asked only for a zone it knows (it logs an error for any other).
    if (!known) {
      const names = tzlib_get_timezones(false);
      known = new Set(Array.isArray(names) ? names : []);
    }
    const got = known.has(zone) ? tzlib_get_ical_block(zone) : '';
    const text = Array.isArray(got) ? (got[0] ?? '') : '';
    block = text.startsWith('BEGIN:VTIMEZONE')
      ? text
          .trimEnd()
          .replace(/^TZID:.*$/m, `TZID:${zone}`)
          .replace(/^X-LIC-LOCATION:.*$/m, `X-LIC-LOCATION:${zone}`)
      : null;
    if (vtimezones.size >= 500) vtimezones.clear(); // IANA names: few, but never unbounded
    vtimezones.set(zone, block);
  }
  return block;
}

/** An RRULE value as recurrence.ts writes it: NAME=VALUE parts, nothing that could end the line. */
const RRULE_VALUE = /^[A-Z]+=[A-Z0-9,+-]+(;[A-Z]+=[A-Z0-9,+-]+)*$/;

/** The zone a spec's times are written in: its series' (recurrence or recurrence id), else none (UTC). */
function seriesZone(spec: InviteSpec): string | null {
  const zone = spec.recurrence?.timezone ?? spec.recurrenceId?.timezone ?? null;
  if (zone === null) return null;
  if (spec.recurrence && spec.recurrenceId && spec.recurrenceId.timezone !== zone) {
    throw new Error('invite: recurrence and recurrenceId name different zones');
  }
  if (!isZone(zone)) throw new Error(`invite: unknown time zone "${zone}"`);
  return zone;
}

/**
 * Local date-time of instant `ms` in `zone` as a TZID= value is written (`20270316T090000`), by the
 * wall-clock arithmetic recurrence.ts uses (a Luxon format costs ~0.2 ms; a series may have many).
 */
function localStamp(ms: number, zone: string): string {
  return new Date(toWall(zone, ms)).toISOString().replace(/[-:]/g, '').slice(0, 15);
}

/** The event's repetition in `zone`: RRULE, and EXDATE (in order, each once) when there are any. */
function repetition(recurrence: NonNullable<InviteSpec['recurrence']>, zone: string): string {
  if (!RRULE_VALUE.test(recurrence.rrule)) throw new Error(`invite: not an RRULE value: ${recurrence.rrule}`);
  const ex = [...new Set(recurrence.exdates.map((d) => d.getTime()))].sort((a, b) => a - b);
  const exdate = ex.map((ms) => localStamp(ms, zone)).join(',');
  return `RRULE:${recurrence.rrule}${ex.length > 0 ? `\r\nEXDATE;TZID=${zone}:${exdate}` : ''}`;
}

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
 * A series' overrides in order of RECURRENCE-ID, checked: only with `recurrence`, each ending after it
 * starts, no RECURRENCE-ID twice nor one of an EXDATE.
 */
function overridesOf(spec: InviteSpec): NonNullable<InviteSpec['overrides']> {
  const overrides = spec.overrides ?? [];
  if (overrides.length === 0) return [];
  if (!spec.recurrence) throw new Error('invite: overrides need a recurrence');
  const ids = new Set<number>();
  const exdates = new Set(spec.recurrence.exdates.map((d) => d.getTime()));
  for (const o of overrides) {
    if (!(o.end.getTime() > o.start.getTime()))
      throw new Error('invite: an override must end after it starts');
    const id = o.recurrenceId.getTime();
    if (ids.has(id) || exdates.has(id)) {
      throw new Error(`invite: occurrence ${o.recurrenceId.toISOString()} overridden twice or excluded`);
    }
    ids.add(id);
  }
  return [...overrides].sort((a, b) => a.recurrenceId.getTime() - b.recurrenceId.getTime());
}

/**
 * The ical-generator calendar of `spec`, its event and, after it, its overrides (`events`: all of
 * them in order). `buildInvite` writes its text; the test compares that with `calendar.toString()`
 * (which writes X-WR-TIMEZONE after the events and no CRLF after END:VCALENDAR: the two differences
 * buildInvite makes on purpose).
 */
export function inviteCalendar(spec: InviteSpec, stamp: Date) {
  if (!(spec.end.getTime() > spec.start.getTime())) throw new Error('invite: end must be after start');
  if (!Number.isInteger(spec.sequence) || spec.sequence < 0) {
    throw new Error('invite: sequence must be a non-negative integer');
  }
  const cancel = spec.method === 'CANCEL';
  const zone = seriesZone(spec);
  const overrides = overridesOf(spec);
  const calendar = ical({
    prodId: { company: 'kairos', product: 'kairos', language: 'EN' },
    method: cancel ? ICalCalendarMethod.CANCEL : ICalCalendarMethod.REQUEST,
    x: spec.timezone ? { 'X-WR-TIMEZONE': spec.timezone } : undefined,
    // The series' zone's VTIMEZONE, written for the zone its event names (nothing else sets one).
    ...(zone ? { timezone: { name: null, generator: vtimezone } } : {}),
  });
  // In a series' zone, its times as that zone's wall clock (ical-generator writes a Date's UTC fields).
  const at = (d: Date) => (zone ? DateTime.fromJSDate(d, { zone }) : d);
  // What the series' event and its overrides share: UID, SEQUENCE, DTSTAMP, what and who.
  const common = {
    id: spec.uid,
    sequence: spec.sequence,
    stamp,
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
  };
  const event = calendar.createEvent({
    ...common,
    start: at(spec.start),
    end: at(spec.end),
    ...(zone
      ? {
          timezone: zone,
          repeating: spec.recurrence ? repetition(spec.recurrence, zone) : null,
          recurrenceId: spec.recurrenceId ? at(spec.recurrenceId.at) : null,
        }
      : {}),
  });
  // Overrides come with a recurrence only (overridesOf), so with its zone.
  const moved = overrides.map((o) =>
    calendar.createEvent({
      ...common,
      start: at(o.start),
      end: at(o.end),
      timezone: zone,
      recurrenceId: at(o.recurrenceId),
    }),
  );
  return { calendar, event, events: [event, ...moved] };
}

/** The .ics text of `spec`. `stamp`: its DTSTAMP (when it was written; default now). */
export function buildInvite(spec: InviteSpec, opts: { stamp?: Date } = {}): string {
  const { events } = inviteCalendar(spec, opts.stamp ?? new Date());
  const cancel = spec.method === 'CANCEL';
  const zone = seriesZone(spec);
  const block = zone ? vtimezone(zone) : null;
  // What `calendar.toString()` writes, with the same folding done cheaply (see `fold`), the reader's
  // zone before the first component and a CRLF after the last line; a test keeps the two equal but
  // for those.
  const unfolded =
    'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//kairos//kairos//EN\r\n' +
    `METHOD:${cancel ? 'CANCEL' : 'REQUEST'}\r\n` +
    (spec.timezone ? `X-WR-TIMEZONE:${escapeText(spec.timezone)}\r\n` : '') +
    (block ? `${block}\r\n` : '') +
    `${events.map((e) => e.toString()).join('')}END:VCALENDAR\r\n`;
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
