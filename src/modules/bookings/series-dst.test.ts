/**
 * A weekly series across both 2027 DST changes of Europe/Berlin, through the API on the real runtime
 * and database (docs/design.md#series-and-seats, "What proves it"): a Berlin host working 08:00–18:00
 * every weekday, 365 days ahead (the most a schedule allows); a weekly 09:00 Berlin series of 34
 * weeks from Tuesday 16 March 2027 crosses 28 March (CET → CEST) and 31 October (CEST → CET). Every
 * occurrence is 09:00 in Berlin: 08:00Z in winter, 07:00Z in summer; the answer, the series read back
 * and every stored booking agree, and the confirmation's invite, parsed back with ical.js, yields the
 * same instants.
 */
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import { newHost } from '../../../test/helpers/fixtures.js';
import { vcalendar } from '../../../test/helpers/ics.js';

// Monday 1 March 2027, 06:00 UTC: two weeks before the series' first occurrence.
const { t } = clockedApp({ at: '2027-03-01T06:00:00.000Z' });

const WEEKS = 34;
const FIRST = '2027-03-16T08:00:00.000Z'; // Tuesday, 09:00 CET
const SPRING = Date.UTC(2027, 2, 28, 1); // 28 March 2027, 01:00Z: 02:00 CET → 03:00 CEST
const AUTUMN = Date.UTC(2027, 9, 31, 1); // 31 October 2027, 01:00Z: 03:00 CEST → 02:00 CET

/** Week i's 09:00 in Berlin, written out: 08:00Z outside summer time, 07:00Z inside it. */
function expectedStarts(): string[] {
  return Array.from({ length: WEEKS }, (_, i) => {
    const day = Date.UTC(2027, 2, 16 + 7 * i);
    const summer = day > SPRING && day < AUTUMN;
    return new Date(day + (summer ? 7 : 8) * 3_600_000).toISOString();
  });
}

const berlin = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/Berlin',
  weekday: 'short',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** A Berlin host (08:00–18:00 Mon–Fri, 365 days ahead) of a new account: its key and id. */
async function berlinHost() {
  const acc = await t.account();
  const host = await newHost(
    t,
    { token: acc.key },
    { display_name: 'Berta', timezone: 'Europe/Berlin', email: 'berta@example.com' },
  );
  const put = await t.call('PUT', `/v1/principals/${host}/schedule`, {
    token: acc.key,
    body: {
      timezone: 'Europe/Berlin',
      weekly: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, start: '08:00', end: '18:00' })),
      max_days_ahead: 365, // the most a schedule allows (SCHEDULE_LIMITS); the series ends 246 days ahead
    },
  });
  expect(put.status, await put.clone().text()).toBe(200);
  return { acc, host };
}

/** Books the series; `zone`: the rule's zone as sent (absent: the API's default). */
async function bookSeries(key: string, host: string, zone?: string) {
  const res = await t.call('POST', '/v1/bookings', {
    token: key,
    body: {
      principal_id: host,
      start_time: FIRST,
      customer_email: 'cy@example.com',
      customer_name: 'Cy',
      recurrence: { frequency: 'weekly', count: WEEKS, ...(zone ? { timezone: zone } : {}) },
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).series as {
    id: string;
    recurrence: { timezone: string };
    occurrences: { start_time: string; end_time: string; booking_id: string }[];
  };
}

/** The series' bookings as stored, by start: start, end, and the start the rule made. */
async function storedOccurrences(seriesId: string) {
  const rows = await t.ctx.db
    .selectFrom('bookings')
    .select(['start_time', 'end_time', 'occurrence_start', 'status'])
    .where('series_id', '=', seriesId)
    .orderBy('start_time')
    .execute();
  return rows.map((r) => ({
    start: new Date(r.start_time).toISOString(),
    end: new Date(r.end_time).toISOString(),
    occurrence: r.occurrence_start ? new Date(r.occurrence_start).toISOString() : null,
    status: r.status,
  }));
}

const plus30 = (iso: string) => new Date(Date.parse(iso) + 30 * 60_000).toISOString();

describe('a weekly Europe/Berlin series across both 2027 DST changes', () => {
  it('keeps every occurrence at 09:00 Berlin: 08:00Z before 28 March and after 31 October, 07:00Z between; the series read back and every stored booking agree', async () => {
    const { acc, host } = await berlinHost();
    const series = await bookSeries(acc.key, host, 'Europe/Berlin');
    const expected = expectedStarts();
    expect(series.recurrence.timezone).toBe('Europe/Berlin');
    expect(series.occurrences.map((o) => o.start_time)).toEqual(expected);
    expect(series.occurrences.map((o) => o.end_time)).toEqual(expected.map(plus30));
    // The changes as seen from the answer: winter, summer from 30 March, winter again from 2 November.
    const starts = series.occurrences.map((o) => o.start_time);
    expect(starts.slice(0, 3)).toEqual([
      '2027-03-16T08:00:00.000Z',
      '2027-03-23T08:00:00.000Z',
      '2027-03-30T07:00:00.000Z',
    ]);
    expect(starts.slice(-2)).toEqual(['2027-10-26T07:00:00.000Z', '2027-11-02T08:00:00.000Z']);
    for (const s of starts) expect(berlin.format(new Date(s))).toBe('Tue 09:00');

    const got = await t.call('GET', `/v1/booking-series/${series.id}`, { token: acc.key });
    expect(got.status).toBe(200);
    expect((await got.json()).series.occurrences.map((o: { start_time: string }) => o.start_time)).toEqual(
      expected,
    );
    expect(await storedOccurrences(series.id)).toEqual(
      expected.map((s) => ({ start: s, end: plus30(s), occurrence: s, status: 'confirmed' })),
    );
    // Each booking alone says the same (GET /v1/bookings/{id}).
    for (const [i, o] of series.occurrences.entries()) {
      const one = await t.call('GET', `/v1/bookings/${o.booking_id}`, { token: acc.key });
      expect((await one.json()).booking.start_time).toBe(expected[i]);
    }
  });

  it('takes the host’s zone when the rule names none and the customer gives none: the same Berlin instants', async () => {
    const { acc, host } = await berlinHost();
    const series = await bookSeries(acc.key, host);
    expect(series.recurrence.timezone).toBe('Europe/Berlin');
    expect(series.occurrences.map((o) => o.start_time)).toEqual(expectedStarts());
  });

  it('gives the confirmation an invite whose RRULE, expanded by ical.js in its VTIMEZONE, yields the stored instants', async () => {
    const { acc, host } = await berlinHost();
    const series = await bookSeries(acc.key, host, 'Europe/Berlin');
    await t.ctx.jobs.drain(); // the mail is rendered (and its invite stored) when its send job runs
    const mails = await t.ctx.db
      .selectFrom('mail_outbox')
      .select(['ics', 'ics_method', 'kind'])
      .where('to_address', '=', 'cy@example.com')
      .where('subject_id', '=', series.occurrences[0]!.booking_id)
      .execute();
    expect(mails.map((m) => [m.kind, m.ics_method])).toEqual([['booking.confirmation', 'REQUEST']]);
    const ics = mails[0]!.ics ?? '';
    // Wall-clock time in the series' zone, so calendar clients keep 09:00 across the changes.
    expect(ics).toContain('DTSTART;TZID=Europe/Berlin:20270316T090000');
    expect(ics).toContain(`RRULE:FREQ=WEEKLY;INTERVAL=1;COUNT=${WEEKS}`);
    expect(ics).toContain('BEGIN:VTIMEZONE');
    const instants = expandInvite(ics);
    expect(instants.map((x) => x.start)).toEqual(expectedStarts());
    expect(instants.map((x) => x.end)).toEqual(expectedStarts().map(plus30));
    expect(await storedOccurrences(series.id)).toEqual(
      instants.map((x) => ({ start: x.start, end: x.end, occurrence: x.start, status: 'confirmed' })),
    );
  });
});

/** Europe/Berlin as a VTIMEZONE (summer time from the last Sunday of March to the last of October). */
const BERLIN_VTIMEZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:Europe/Berlin',
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:+0100',
  'TZOFFSETTO:+0200',
  'TZNAME:CEST',
  'DTSTART:19700329T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:+0200',
  'TZOFFSETTO:+0100',
  'TZNAME:CET',
  'DTSTART:19701025T030000',
  'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
  'END:STANDARD',
  'END:VTIMEZONE',
];

describe('the invite reader of this file', () => {
  it('expands a wall-clock RRULE invite in its VTIMEZONE to the Berlin instants, and a UTC one to fixed instants', () => {
    const invite = (start: string) =>
      vcalendar(
        '\r\n',
        'METHOD:REQUEST',
        BERLIN_VTIMEZONE,
        'BEGIN:VEVENT',
        'UID:ser_test@kairos',
        'DTSTAMP:20270301T060000Z',
        start,
        'DURATION:PT30M',
        `RRULE:FREQ=WEEKLY;INTERVAL=1;COUNT=${WEEKS}`,
        'SUMMARY:Series',
        'END:VEVENT',
      );
    const local = expandInvite(invite('DTSTART;TZID=Europe/Berlin:20270316T090000'));
    expect(local.map((x) => x.start)).toEqual(expectedStarts());
    expect(local.map((x) => x.end)).toEqual(expectedStarts().map(plus30));
    // A series written in UTC would drift an hour in summer: the reader tells the two apart.
    const utc = expandInvite(invite('DTSTART:20270316T080000Z'));
    expect(utc).toHaveLength(WEEKS);
    expect(utc.map((x) => x.start)).not.toEqual(expectedStarts());
    expect(utc[2]!.start).toBe('2027-03-30T08:00:00.000Z');
  });
});

/**
 * Every instance of an invite's VEVENT (its RRULE expanded, EXDATEs left out) as UTC instants, in
 * the invite's own VTIMEZONEs: ical.js finds them by TZID in the same VCALENDAR, so nothing is
 * registered process-wide (the test files of a worker share its process).
 */
function expandInvite(ics: string): { start: string; end: string }[] {
  const calendar = new ICAL.Component(ICAL.parse(ics));
  const event = new ICAL.Event(calendar.getFirstSubcomponent('vevent')!);
  const out: { start: string; end: string }[] = [];
  const it = event.iterator();
  for (let next = it.next(); next && out.length <= WEEKS; next = it.next()) {
    const details = event.getOccurrenceDetails(next);
    out.push({
      start: details.startDate.toJSDate().toISOString(),
      end: details.endDate.toJSDate().toISOString(),
    });
  }
  return out;
}
