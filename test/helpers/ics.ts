/** ICS text builders for calendar tests, and a local server for a feed. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import type { Interval } from '../../src/lib/intervals.js';
import { iso } from '../../src/lib/time.js';

/** America/New_York as a VTIMEZONE (DST from the second Sunday of March to the first Sunday of November). */
export const NY_VTIMEZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:America/New_York',
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:-0500',
  'TZOFFSETTO:-0400',
  'TZNAME:EDT',
  'DTSTART:19700308T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:-0400',
  'TZOFFSETTO:-0500',
  'TZNAME:EST',
  'DTSTART:19701101T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU',
  'END:STANDARD',
  'END:VTIMEZONE',
];

/** A VCALENDAR around the given lines, joined with `eol` (RFC 5545 says CRLF; servers also send LF). */
export function vcalendar(eol: '\r\n' | '\n', ...body: (string | string[])[]): string {
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//kairos//test//EN',
    ...body.flat(),
    'END:VCALENDAR',
    '',
  ].join(eol);
}

/** A local HTTP server answering `ics` (text/calendar) at every path; `url` names one .ics path of it. */
export async function serveCalendar(ics: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/calendar' }).end(ics),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cal.ics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An empty calendar served while the file's tests run: `url` once its `beforeAll` has run. */
export function useEmptyCalendar(): { readonly url: string } {
  let feed: Awaited<ReturnType<typeof serveCalendar>> | undefined;
  beforeAll(async () => {
    feed = await serveCalendar(vcalendar('\r\n'));
  });
  afterAll(async () => {
    await feed?.close();
  });
  return {
    get url() {
      if (!feed) throw new Error('useEmptyCalendar: the calendar is served from beforeAll on');
      return feed.url;
    },
  };
}

/** Intervals as [start, end] ISO pairs: what a failed comparison prints readably. */
export function isoPairs(xs: readonly Interval[]): [string, string][] {
  return xs.map((x) => [iso(x.start), iso(x.end)]);
}
