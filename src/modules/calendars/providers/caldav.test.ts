import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoPairs, NY_VTIMEZONE, vcalendar } from '../../../../test/helpers/ics.js';
import {
  type RadicaleServer,
  radicaleAvailable,
  startRadicale,
} from '../../../../test/emulators/radicale.js';
import { caldavBusy, caldavDiscover, caldavTime, ProviderError } from './caldav.js';

const fetch = globalThis.fetch;

const cal = (...body: (string | string[])[]): string => vcalendar('\n', ...body);

const window = { start: Date.parse('2026-03-01T00:00:00Z'), end: Date.parse('2026-04-01T00:00:00Z') };

describe.skipIf(!radicaleAvailable())('CalDAV against a real Radicale', () => {
  let rad: RadicaleServer;
  let workUrl: string;
  let personalUrl: string;

  beforeAll(async () => {
    // Fails (does not skip) with install instructions when radicale is missing.
    rad = await startRadicale();
    await rad.makeCalendar('work', 'Work');
    workUrl = await rad.putEvent(
      'work',
      'weekly-standup',
      cal(
        NY_VTIMEZONE,
        [
          'BEGIN:VEVENT',
          'UID:weekly-standup',
          'DTSTAMP:20260101T000000Z',
          'DTSTART;TZID=America/New_York:20260302T100000',
          'DTEND;TZID=America/New_York:20260302T110000',
          'RRULE:FREQ=WEEKLY;COUNT=5',
          'EXDATE;TZID=America/New_York:20260316T100000',
          'SUMMARY:Standup',
          'END:VEVENT',
        ],
        [
          'BEGIN:VEVENT',
          'UID:weekly-standup',
          'DTSTAMP:20260101T000000Z',
          'RECURRENCE-ID;TZID=America/New_York:20260330T100000',
          'DTSTART;TZID=America/New_York:20260331T120000',
          'DTEND;TZID=America/New_York:20260331T130000',
          'SUMMARY:Standup (moved)',
          'END:VEVENT',
        ],
      ),
    );
    await rad.putEvent(
      'work',
      'later',
      cal([
        'BEGIN:VEVENT',
        'UID:later',
        'DTSTAMP:20260101T000000Z',
        'DTSTART:20260501T100000Z',
        'DTEND:20260501T110000Z',
        'END:VEVENT',
      ]),
    );
    await rad.makeCalendar('personal', 'Personal');
    personalUrl = await rad.putEvent(
      'personal',
      'day-off',
      cal([
        'BEGIN:VEVENT',
        'UID:day-off',
        'DTSTAMP:20260101T000000Z',
        'DTSTART;VALUE=DATE:20260310',
        'DTEND;VALUE=DATE:20260311',
        'END:VEVENT',
      ]),
    );
    await rad.putEvent(
      'personal',
      'free-time',
      cal([
        'BEGIN:VEVENT',
        'UID:free-time',
        'DTSTAMP:20260101T000000Z',
        'DTSTART:20260312T100000Z',
        'DTEND:20260312T110000Z',
        'TRANSP:TRANSPARENT',
        'END:VEVENT',
      ]),
    );
  });

  afterAll(async () => {
    await rad?.stop();
  });

  it('discovers the calendars from the server root (principal → home → calendars)', async () => {
    const cals = await caldavDiscover(
      { serverUrl: `${rad.url}/`, username: rad.username, password: rad.password },
      fetch,
    );
    expect(
      cals
        .map((c) => ({ url: c.url, displayName: c.displayName }))
        .sort((a, b) => a.url.localeCompare(b.url)),
    ).toEqual([
      { url: personalUrl, displayName: 'Personal' },
      { url: workUrl, displayName: 'Work' },
    ]);
    expect(cals.every((c) => typeof c.ctag === 'string')).toBe(true);
  });

  it('discovers from the home URL and from a calendar URL too', async () => {
    const creds = { username: rad.username, password: rad.password };
    const fromHome = await caldavDiscover({ ...creds, serverUrl: rad.homeUrl }, fetch);
    expect(fromHome.map((c) => c.url).sort()).toEqual([personalUrl, workUrl].sort());
    const fromCalendar = await caldavDiscover({ ...creds, serverUrl: workUrl }, fetch);
    expect(fromCalendar).toEqual([expect.objectContaining({ url: workUrl, displayName: 'Work' })]);
  });

  it('returns a weekly series with EXDATE and a moved instance on the right dates, DST-correct', async () => {
    const creds = { serverUrl: rad.url, username: rad.username, password: rad.password };
    const res = await caldavBusy(creds, fetch, [workUrl], window, { defaultZone: 'America/New_York' });
    expect(res.errors).toEqual([]);
    expect(isoPairs(res.busy)).toEqual([
      ['2026-03-02T15:00:00.000Z', '2026-03-02T16:00:00.000Z'],
      // 8 March: US daylight time starts; 10:00 New York becomes 14:00 UTC. 16 March is excluded.
      ['2026-03-09T14:00:00.000Z', '2026-03-09T15:00:00.000Z'],
      ['2026-03-23T14:00:00.000Z', '2026-03-23T15:00:00.000Z'],
      // 30 March moved to 31 March 12:00 New York.
      ['2026-03-31T16:00:00.000Z', '2026-03-31T17:00:00.000Z'],
    ]);
  });

  it('answers the occurrences with their SUMMARY on request (withTitles), the moved one with its own', async () => {
    const creds = { serverUrl: rad.url, username: rad.username, password: rad.password };
    const res = await caldavBusy(creds, fetch, [workUrl], window, {
      defaultZone: 'America/New_York',
      withTitles: true,
    });
    const titles = (res.events ?? []).map((e) => e.title);
    expect(titles).toContain('Standup');
    expect(titles).toContain('Standup (moved)');
    expect(res.events).toHaveLength(res.busy.length);
  });

  it('merges several calendars; all-day in the default zone; transparent ignored', async () => {
    const creds = { serverUrl: rad.url, username: rad.username, password: rad.password };
    const res = await caldavBusy(creds, fetch, [workUrl, personalUrl], window, {
      defaultZone: 'America/New_York',
    });
    expect(isoPairs(res.busy)).toContainEqual(['2026-03-10T04:00:00.000Z', '2026-03-11T04:00:00.000Z']);
    expect(res.busy).toHaveLength(5);
  });

  it('reports a missing calendar per calendar and bad credentials as unauthorized', async () => {
    const creds = { serverUrl: rad.url, username: rad.username, password: rad.password };
    const res = await caldavBusy(creds, fetch, [workUrl, `${rad.homeUrl}nope/`], window);
    expect(res.busy).toHaveLength(4);
    expect(res.errors).toEqual([{ calendarId: `${rad.homeUrl}nope/`, reason: 'not_found' }]);

    const wrong = { ...creds, password: 'wrong' };
    const e1 = await caldavBusy(wrong, fetch, [workUrl], window).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(ProviderError);
    expect(e1).toMatchObject({ code: 'unauthorized', status: 401 });
    const e2 = await caldavDiscover(wrong, fetch).catch((e: unknown) => e);
    expect(e2).toMatchObject({ code: 'unauthorized' });
  });

  it('refuses to send credentials to another plain-http origin', async () => {
    const creds = { serverUrl: rad.url, username: rad.username, password: rad.password };
    const err = await caldavBusy(creds, fetch, ['http://203.0.113.9/cal/'], window).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'bad_request' });
  });

  it('formats CalDAV UTC times', () => {
    expect(caldavTime(Date.parse('2026-03-01T00:00:00.000Z'))).toBe('20260301T000000Z');
  });
});
