/**
 * "Add to calendar": an iCalendar file of the booking, made in the browser (RFC 5545). Its UID is the
 * one the booking's e-mail invites carry (`<booking id>@kairos`), so a calendar that already has the
 * invite updates that event instead of adding a second one — and its SEQUENCE is the latest invite's, so
 * after a reschedule the file is not taken for an older version of the event. A series just booked
 * gives one event per occurrence (each its own booking, its own UID); the manage link is the first's.
 */
import type { PublicBooking, SeriesOccurrence } from './api.js';

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

export function icsOf(
  b: PublicBooking,
  manageUrl: string | undefined,
  occurrences?: readonly SeriesOccurrence[],
): string {
  const hosts = b.hosts.map((h) => h.display_name).filter(Boolean);
  const description = [
    hosts.length ? `With ${hosts.join(', ')}` : '',
    manageUrl ? `Reschedule or cancel: ${manageUrl}` : '',
  ]
    .filter(Boolean)
    .join('\n');
  const now = stamp(new Date().toISOString());
  const event = (id: string, start: string, end: string, own: boolean) => [
    'BEGIN:VEVENT',
    `UID:${id}@kairos`,
    `SEQUENCE:${own ? (b.sequence ?? 0) : 0}`,
    `DTSTAMP:${now}`,
    `DTSTART:${stamp(start)}`,
    `DTEND:${stamp(end)}`,
    `SUMMARY:${text(b.title)}`,
    ...(own && description ? [`DESCRIPTION:${text(description)}`] : []),
    ...(own && manageUrl ? [`URL:${manageUrl}`] : []),
    'END:VEVENT',
  ];
  const live = (occurrences ?? []).filter((o) => o.status === 'confirmed' || o.booking_id === b.id);
  const events = live.length
    ? live.flatMap((o) => event(o.booking_id, o.start_time, o.end_time, o.booking_id === b.id))
    : event(b.id, b.start_time, b.end_time, true);
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Kairos//Booking page//EN',
    'CALSCALE:GREGORIAN',
    ...events,
    'END:VCALENDAR',
  ];
  return `${lines.map(fold).join('\r\n')}\r\n`;
}

/** An object URL of the file, for an `<a download>` (revoked when the page goes). */
export function icsHref(
  b: PublicBooking,
  manageUrl: string | undefined,
  occurrences?: readonly SeriesOccurrence[],
): string {
  return URL.createObjectURL(
    new Blob([icsOf(b, manageUrl, occurrences)], { type: 'text/calendar;charset=utf-8' }),
  );
}
