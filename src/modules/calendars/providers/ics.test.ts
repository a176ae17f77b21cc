import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoPairs, NY_VTIMEZONE, vcalendar } from '../../../../test/helpers/ics.js';
import { ProviderError } from './errors.js';
import { fetchIcs, parseIcsBusy, parseIcsEvents } from './ics.js';
import type { Interval } from '../../../lib/intervals.js';

const cal = (...body: (string | string[])[]): string => vcalendar('\r\n', ...body);

function vevent(...props: string[]): string[] {
  return ['BEGIN:VEVENT', 'DTSTAMP:20260101T000000Z', ...props, 'END:VEVENT'];
}

const w = (start: string, end: string): Interval => ({ start: Date.parse(start), end: Date.parse(end) });

describe('parseIcsEvents', () => {
  it('answers every occurrence with its SUMMARY, an override with its own, unmerged and clipped', () => {
    const text = cal(
      vevent(
        'UID:standup',
        'DTSTART:20260302T090000Z',
        'DTEND:20260302T093000Z',
        'RRULE:FREQ=DAILY;COUNT=3',
        'SUMMARY:Standup',
      ),
      vevent(
        'UID:standup',
        'RECURRENCE-ID:20260303T090000Z',
        'DTSTART:20260303T091500Z',
        'DTEND:20260303T094500Z',
        'SUMMARY:Standup (late)',
      ),
      vevent('UID:overlap', 'DTSTART:20260302T091500Z', 'DTEND:20260302T100000Z'),
    );
    const events = parseIcsEvents(text, w('2026-03-02T09:10:00Z', '2026-03-05T00:00:00Z'), 'UTC');
    expect(events.map((e) => [new Date(e.start).toISOString(), e.title])).toEqual([
      ['2026-03-02T09:10:00.000Z', 'Standup'],
      ['2026-03-02T09:15:00.000Z', ''],
      ['2026-03-03T09:15:00.000Z', 'Standup (late)'],
      ['2026-03-04T09:00:00.000Z', 'Standup'],
    ]);
  });
});

describe('parseIcsBusy', () => {
  it('expands a weekly TZID series DST-correctly with its VTIMEZONE and applies EXDATE', () => {
    const text = cal(
      NY_VTIMEZONE,
      vevent(
        'UID:weekly',
        'DTSTART;TZID=America/New_York:20260223T100000',
        'DTEND;TZID=America/New_York:20260223T110000',
        'RRULE:FREQ=WEEKLY;COUNT=6',
        'EXDATE;TZID=America/New_York:20260316T100000',
      ),
    );
    const busy = parseIcsBusy(text, w('2026-02-01T00:00:00Z', '2026-05-01T00:00:00Z'), 'UTC');
    expect(isoPairs(busy)).toEqual([
      ['2026-02-23T15:00:00.000Z', '2026-02-23T16:00:00.000Z'],
      ['2026-03-02T15:00:00.000Z', '2026-03-02T16:00:00.000Z'],
      // DST starts 8 March 2026: 10:00 New York is now 14:00 UTC.
      ['2026-03-09T14:00:00.000Z', '2026-03-09T15:00:00.000Z'],
      ['2026-03-23T14:00:00.000Z', '2026-03-23T15:00:00.000Z'],
      ['2026-03-30T14:00:00.000Z', '2026-03-30T15:00:00.000Z'],
    ]);
  });

  it('expands a TZID without VTIMEZONE through the IANA database, also across the autumn change', () => {
    const text = cal(
      vevent(
        'UID:no-vtz',
        'DTSTART;TZID=America/New_York:20261026T090000',
        'DTEND;TZID=America/New_York:20261026T093000',
        'RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=3',
      ),
    );
    const busy = parseIcsBusy(text, w('2026-10-01T00:00:00Z', '2026-12-01T00:00:00Z'), 'Europe/Berlin');
    expect(isoPairs(busy)).toEqual([
      ['2026-10-26T13:00:00.000Z', '2026-10-26T13:30:00.000Z'],
      // DST ends 1 November 2026: 09:00 EST is 14:00 UTC.
      ['2026-11-02T14:00:00.000Z', '2026-11-02T14:30:00.000Z'],
      ['2026-11-09T14:00:00.000Z', '2026-11-09T14:30:00.000Z'],
    ]);
  });

  it('uses the VTIMEZONE definition for a non-IANA TZID (Outlook style)', () => {
    const outlook = NY_VTIMEZONE.map((l) => (l === 'TZID:America/New_York' ? 'TZID:Custom Eastern' : l));
    const text = cal(
      outlook,
      vevent(
        'UID:outlook',
        'DTSTART;TZID=Custom Eastern:20260706T080000',
        'DTEND;TZID=Custom Eastern:20260706T090000',
      ),
    );
    expect(isoPairs(parseIcsBusy(text, w('2026-07-01T00:00:00Z', '2026-08-01T00:00:00Z'), 'UTC'))).toEqual([
      ['2026-07-06T12:00:00.000Z', '2026-07-06T13:00:00.000Z'],
    ]);
  });

  it('honours a UTC UNTIL against wall-clock occurrences in a TZID zone', () => {
    // 22:00 New York (EDT) is 02:00 UTC the next day; UNTIL at 01:00Z on 24 June excludes 23 June.
    const text = cal(
      vevent(
        'UID:until',
        'DTSTART;TZID=America/New_York:20260602T220000',
        'DTEND;TZID=America/New_York:20260602T230000',
        'RRULE:FREQ=WEEKLY;UNTIL=20260624T010000Z',
      ),
    );
    const busy = parseIcsBusy(text, w('2026-06-01T00:00:00Z', '2026-08-01T00:00:00Z'), 'UTC');
    expect(busy.map((b) => new Date(b.start).toISOString())).toEqual([
      '2026-06-03T02:00:00.000Z',
      '2026-06-10T02:00:00.000Z',
      '2026-06-17T02:00:00.000Z',
    ]);
  });

  it('applies RECURRENCE-ID overrides: moved, cancelled, transparent, and moved in from outside', () => {
    const text = cal(
      vevent(
        'UID:daily',
        'DTSTART:20260601T090000Z',
        'DTEND:20260601T100000Z',
        'RRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR',
      ),
      // Wednesday moved to the afternoon.
      vevent(
        'UID:daily',
        'RECURRENCE-ID:20260603T090000Z',
        'DTSTART:20260603T150000Z',
        'DTEND:20260603T160000Z',
      ),
      // Thursday cancelled.
      vevent(
        'UID:daily',
        'RECURRENCE-ID:20260604T090000Z',
        'DTSTART:20260604T090000Z',
        'DTEND:20260604T100000Z',
        'STATUS:CANCELLED',
      ),
      // Friday kept but marked free.
      vevent(
        'UID:daily',
        'RECURRENCE-ID:20260605T090000Z',
        'DTSTART:20260605T090000Z',
        'DTEND:20260605T100000Z',
        'TRANSP:TRANSPARENT',
      ),
      // Next Monday's instance pulled into this Saturday.
      vevent(
        'UID:daily',
        'RECURRENCE-ID:20260608T090000Z',
        'DTSTART:20260606T120000Z',
        'DTEND:20260606T130000Z',
      ),
    );
    const busy = parseIcsBusy(text, w('2026-06-01T00:00:00Z', '2026-06-08T00:00:00Z'), 'UTC');
    expect(isoPairs(busy)).toEqual([
      ['2026-06-01T09:00:00.000Z', '2026-06-01T10:00:00.000Z'],
      ['2026-06-02T09:00:00.000Z', '2026-06-02T10:00:00.000Z'],
      ['2026-06-03T15:00:00.000Z', '2026-06-03T16:00:00.000Z'],
      ['2026-06-06T12:00:00.000Z', '2026-06-06T13:00:00.000Z'],
    ]);
    // The moved-away Monday does not come back in the next week's window.
    const next = parseIcsBusy(text, w('2026-06-08T00:00:00Z', '2026-06-09T00:00:00Z'), 'UTC');
    expect(next).toEqual([]);
  });

  it('makes all-day events busy for the whole local day in the default zone', () => {
    const text = cal(
      vevent('UID:allday', 'DTSTART;VALUE=DATE:20260610', 'DTEND;VALUE=DATE:20260612'),
      vevent('UID:oneday', 'DTSTART;VALUE=DATE:20260615'),
    );
    const busy = parseIcsBusy(text, w('2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z'), 'Europe/Berlin');
    expect(isoPairs(busy)).toEqual([
      ['2026-06-09T22:00:00.000Z', '2026-06-11T22:00:00.000Z'],
      ['2026-06-14T22:00:00.000Z', '2026-06-15T22:00:00.000Z'],
    ]);
  });

  it('keeps all-day recurrences on local days across a DST change (23-hour day)', () => {
    const text = cal(
      vevent(
        'UID:ad-rr',
        'DTSTART;VALUE=DATE:20260307',
        'DTEND;VALUE=DATE:20260308',
        'RRULE:FREQ=DAILY;COUNT=2',
      ),
    );
    const busy = parseIcsBusy(text, w('2026-03-01T00:00:00Z', '2026-03-31T00:00:00Z'), 'America/New_York');
    // 7 March 05:00Z → 8 March 05:00Z; 8 March is 23 hours long (05:00Z → 04:00Z on 9 March).
    expect(isoPairs(busy)).toEqual([['2026-03-07T05:00:00.000Z', '2026-03-09T04:00:00.000Z']]);
  });

  it('reads floating times in the default zone', () => {
    const text = cal(vevent('UID:floating', 'DTSTART:20260610T090000', 'DTEND:20260610T100000'));
    const busy = parseIcsBusy(text, w('2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z'), 'America/Los_Angeles');
    expect(isoPairs(busy)).toEqual([['2026-06-10T16:00:00.000Z', '2026-06-10T17:00:00.000Z']]);
  });

  it('ignores TRANSP:TRANSPARENT and STATUS:CANCELLED events, counts TENTATIVE', () => {
    const text = cal(
      vevent('UID:t', 'DTSTART:20260610T090000Z', 'DTEND:20260610T100000Z', 'TRANSP:TRANSPARENT'),
      vevent('UID:c', 'DTSTART:20260610T110000Z', 'DTEND:20260610T120000Z', 'STATUS:CANCELLED'),
      vevent('UID:b', 'DTSTART;VALUE=DATE:20260101', 'RRULE:FREQ=YEARLY', 'TRANSP:TRANSPARENT'),
      vevent('UID:x', 'DTSTART:20260610T130000Z', 'DTEND:20260610T140000Z', 'STATUS:TENTATIVE'),
    );
    const busy = parseIcsBusy(text, w('2026-01-01T00:00:00Z', '2026-12-31T00:00:00Z'), 'UTC');
    expect(isoPairs(busy)).toEqual([['2026-06-10T13:00:00.000Z', '2026-06-10T14:00:00.000Z']]);
  });

  it("skips Kairos's own events (X-KAIROS-MEETING or a UID ending in @kairos) but counts the others", () => {
    const text = cal(
      vevent(
        'UID:kairos0123456789abcdef0123456789abcdef@kairos',
        'DTSTART:20260610T090000Z',
        'DTEND:20260610T100000Z',
        'X-KAIROS-MEETING:bk_1',
      ),
      // Only the marker (a client rewrote the UID), or only the UID (a client dropped the X- property).
      vevent(
        'UID:copied-by-a-client',
        'DTSTART:20260610T110000Z',
        'DTEND:20260610T120000Z',
        'X-KAIROS-MEETING:bk_2',
      ),
      vevent(
        'UID:kairosfeedfacefeedfacefeedfacefeedface@KAIROS',
        'DTSTART:20260610T130000Z',
        'DTEND:20260610T140000Z',
      ),
      // An expanded instance of a Kairos event (RECURRENCE-ID, no master) is skipped as well.
      vevent(
        'UID:kairosabc@kairos',
        'RECURRENCE-ID:20260611T090000Z',
        'DTSTART:20260611T090000Z',
        'DTEND:20260611T100000Z',
      ),
      vevent('UID:foreign@example.com', 'DTSTART:20260610T150000Z', 'DTEND:20260610T160000Z'),
      vevent('UID:kairos-lookalike@kairos.example', 'DTSTART:20260610T170000Z', 'DTEND:20260610T180000Z'),
    );
    const busy = parseIcsBusy(text, w('2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z'), 'UTC');
    expect(isoPairs(busy)).toEqual([
      ['2026-06-10T15:00:00.000Z', '2026-06-10T16:00:00.000Z'],
      ['2026-06-10T17:00:00.000Z', '2026-06-10T18:00:00.000Z'],
    ]);
  });

  it('handles DURATION, RDATE, a UTC EXDATE on a TZID series, and clips to the window', () => {
    const text = cal(
      vevent(
        'UID:dur',
        'DTSTART;TZID=Europe/Paris:20260601T230000',
        'DURATION:PT2H',
        'RRULE:FREQ=DAILY;COUNT=3',
        'RDATE;TZID=Europe/Paris:20260610T120000',
        'EXDATE:20260602T210000Z',
      ),
    );
    const busy = parseIcsBusy(text, w('2026-06-01T22:00:00Z', '2026-06-30T00:00:00Z'), 'UTC');
    expect(isoPairs(busy)).toEqual([
      ['2026-06-01T22:00:00.000Z', '2026-06-01T23:00:00.000Z'],
      ['2026-06-03T21:00:00.000Z', '2026-06-03T23:00:00.000Z'],
      ['2026-06-10T10:00:00.000Z', '2026-06-10T12:00:00.000Z'],
    ]);
  });

  it('fast-forwards long-running series and keeps their phase (biweekly since 2015)', () => {
    const text = cal(
      vevent('UID:old', 'DTSTART:20150105T080000Z', 'DTEND:20150105T083000Z', 'RRULE:FREQ=WEEKLY;INTERVAL=2'),
    );
    const window = w('2026-06-01T00:00:00Z', '2026-07-15T00:00:00Z');
    const busy = parseIcsBusy(text, window, 'UTC');
    const expected: string[] = [];
    for (let t = Date.parse('2015-01-05T08:00:00Z'); t < window.end; t += 14 * 86_400_000) {
      if (t >= window.start) expected.push(new Date(t).toISOString());
    }
    expect(busy.map((b) => new Date(b.start).toISOString())).toEqual(expected);
    expect(expected.length).toBeGreaterThan(2);
  });

  it('stays bounded on runaway and impossible rules', () => {
    const text = cal(
      vevent('UID:sec', 'DTSTART:20000101T000000Z', 'DTEND:20000101T000001Z', 'RRULE:FREQ=SECONDLY'),
      vevent(
        'UID:feb30',
        'DTSTART:20260101T100000Z',
        'DTEND:20260101T110000Z',
        'RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30',
      ),
    );
    const window = w('2026-03-01T09:00:00Z', '2026-03-01T10:00:00Z');
    const t0 = performance.now();
    const busy = parseIcsBusy(text, window, 'UTC');
    expect(performance.now() - t0).toBeLessThan(2000);
    // Every second is busy → one merged block; the impossible 30 February never appears (no 2 March).
    expect(busy).toEqual([window]);
    const march = parseIcsBusy(
      cal(
        vevent(
          'UID:feb30',
          'DTSTART:20260101T100000Z',
          'DTEND:20260101T110000Z',
          'RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30',
        ),
      ),
      w('2026-01-02T00:00:00Z', '2030-12-31T00:00:00Z'),
      'UTC',
    );
    expect(march).toEqual([]);
  });

  it('rejects data that is not iCalendar and unknown zones', () => {
    expect(() => parseIcsBusy('hello', w('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'), 'UTC')).toThrow(
      ProviderError,
    );
    expect(() => parseIcsBusy(cal(), w('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'), 'Mars/Base')).toThrow(
      RangeError,
    );
  });
});

describe('fetchIcs', () => {
  const feed = cal(vevent('UID:f', 'DTSTART:20260610T090000Z', 'DTEND:20260610T100000Z'));
  let base = '';
  const server = createServer((req, res) => {
    if (req.url === '/feed.ics') {
      res.writeHead(200, { 'content-type': 'text/calendar' });
      res.end(feed);
    } else if (req.url === '/gone') {
      res.writeHead(404).end('no');
    } else if (req.url === '/secret') {
      res.writeHead(403).end('no');
    } else if (req.url === '/busy') {
      res.writeHead(503, { 'retry-after': '7' }).end('later');
    } else if (req.url === '/html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    } else {
      res.writeHead(200).end(`BEGIN:VCALENDAR\r\n${'X'.repeat(5000)}`);
    }
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('returns the feed text, which parses', async () => {
    const text = await fetchIcs(globalThis.fetch, `${base}/feed.ics`);
    expect(parseIcsBusy(text, w('2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z'), 'UTC')).toHaveLength(1);
  });

  it('maps failures to ProviderError codes', async () => {
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: unknown) =>
          e instanceof ProviderError ? `${e.code}:${e.status}:${e.retryAfterMs ?? ''}` : 'other',
      );
    expect(await code(fetchIcs(globalThis.fetch, `${base}/gone`))).toBe('bad_request:404:');
    expect(await code(fetchIcs(globalThis.fetch, `${base}/secret`))).toBe('unauthorized:403:');
    expect(await code(fetchIcs(globalThis.fetch, `${base}/busy`))).toBe('unavailable:503:7000');
    expect(await code(fetchIcs(globalThis.fetch, `${base}/html`))).toBe('bad_request:200:');
    expect(await code(fetchIcs(globalThis.fetch, `${base}/big`, { maxBytes: 1000 }))).toBe(
      'bad_request:200:',
    );
    expect(await code(fetchIcs(globalThis.fetch, 'http://127.0.0.1:1/none'))).toBe('unavailable:0:');
  });
});
