/**
 * "Add to calendar": an iCalendar file of the booking, made in the browser (RFC 5545). Its UID is the
 * one the booking's e-mail invites carry (`<booking id>@kairos`), so a calendar that already has the
 * invite updates that event instead of adding a second one — and its SEQUENCE is the latest invite's, so
 * after a reschedule the file is not taken for an older version of the event. A series just booked is
 * the one event its mail invite is (src/modules/mail/invite.ts): UID `<series id>@kairos`, the first
 * date in the series' zone and an RRULE, so the file and the invite are one event in a calendar.
 * (No VTIMEZONE: the zone is named by its IANA id, which calendar programs resolve themselves.)
 */
import type { PublicBooking, PublicSeries } from './api.js';

const stamp = (iso: string) => new Date(iso).toISOString().replace(/[-:]|\.\d{3}/g, '');

function text(value: string): string {
  return value.replace(/[\\;,]/g, (c) => `\\${c}`).replace(/\r?\n/g, '\\n');
}

/** Folds a content line at 75 octets (continuation lines start with a space). */
function fold(line: string): string {
  const bytes = new TextEncoder();
  const out: string[] = [];
  let current = '';
  for (const ch of line) {
    if (bytes.encode(current + ch).length > (out.length ? 74 : 75)) {
      out.push(current);
      current = '';
    }
    current += ch;
  }
  out.push(current);
  return out.join('\r\n ');
}

/** An instant as the wall clock of `zone` reads it, `YYYYMMDDTHHMMSS` (no Z). */
function wall(iso: string, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(iso));
  const get = (t: string) => (parts.find((p) => p.type === t)?.value ?? '00').padStart(2, '0');
  return `${get('year')}${get('month')}${get('day')}T${get('hour') === '24' ? '00' : get('hour')}${get('minute')}${get('second')}`;
}

/** DTSTART/DTEND/RRULE of a series' event, in its zone (UTC written as UTC). */
function seriesTimes(b: PublicBooking, series: PublicSeries): string[] {
  const r = series.recurrence;
  const at = (name: string, iso: string) =>
    r.timezone === 'UTC' ? `${name}:${stamp(iso)}` : `${name};TZID=${r.timezone}:${wall(iso, r.timezone)}`;
  const first = series.occurrences[0];
  return [
    at('DTSTART', first?.start_time ?? b.start_time),
    at('DTEND', first?.end_time ?? b.end_time),
    `RRULE:FREQ=${r.frequency.toUpperCase()};INTERVAL=${r.interval};COUNT=${r.count}`,
  ];
}

export function icsOf(b: PublicBooking, manageUrl: string | undefined, series?: PublicSeries | null): string {
  const hosts = b.hosts.map((h) => h.display_name).filter(Boolean);
  const description = [
    hosts.length ? `With ${hosts.join(', ')}` : '',
    manageUrl ? `Reschedule or cancel: ${manageUrl}` : '',
  ]
    .filter(Boolean)
    .join('\n');
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Kairos//Booking page//EN',
    'CALSCALE:GREGORIAN',
    'BEGIN:VEVENT',
    `UID:${series ? series.id : b.id}@kairos`,
    `SEQUENCE:${series ? 0 : (b.sequence ?? 0)}`,
    `DTSTAMP:${stamp(new Date().toISOString())}`,
    ...(series ? seriesTimes(b, series) : [`DTSTART:${stamp(b.start_time)}`, `DTEND:${stamp(b.end_time)}`]),
    `SUMMARY:${text(b.title)}`,
    ...(description ? [`DESCRIPTION:${text(description)}`] : []),
    ...(manageUrl ? [`URL:${manageUrl}`] : []),
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  return `${lines.map(fold).join('\r\n')}\r\n`;
}

/** An object URL of the file, for an `<a download>` (revoked when the page goes). */
export function icsHref(
  b: PublicBooking,
  manageUrl: string | undefined,
  series?: PublicSeries | null,
): string {
  return URL.createObjectURL(
    new Blob([icsOf(b, manageUrl, series)], { type: 'text/calendar;charset=utf-8' }),
  );
}
