import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RadicaleServer,
  radicaleAvailable,
  startRadicale,
} from '../../../../test/emulators/radicale.js';
import { isoPairs, vcalendar } from '../../../../test/helpers/ics.js';
import {
  buildKairosVevent,
  type CaldavCredentials,
  caldavBusy,
  caldavDeleteEvent,
  caldavPutEvent,
  ProviderError,
} from './caldav.js';
import { type EventSpec, eventRef } from './events.js';
import type { HttpFetch } from './types.js';
import { descendants, parseXml } from './xml.js';

const fetch: HttpFetch = globalThis.fetch;
const NEW = { href: null, etag: null };

const window = { start: Date.parse('2026-03-01T00:00:00Z'), end: Date.parse('2026-04-01T00:00:00Z') };

/** A fetch that records `METHOD status [condition]` of every request, to show which path was taken. */
function recording(): { fetch: HttpFetch; log: string[] } {
  const log: string[] = [];
  return {
    log,
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      const h = new Headers(init?.headers);
      const cond = h.has('if-none-match') ? ' if-none-match' : h.has('if-match') ? ' if-match' : '';
      log.push(`${init?.method ?? 'GET'} ${res.status}${cond}`);
      return res;
    },
  };
}

function spec(meetingKey: string, over: Partial<EventSpec> = {}): EventSpec {
  return {
    ref: eventRef(meetingKey, 'host-1'),
    meetingKey,
    title: 'Intro call',
    description: 'Talk about the project.',
    location: 'https://meet.example.com/abc',
    start: Date.parse('2026-03-10T15:00:00Z'),
    end: Date.parse('2026-03-10T15:30:00Z'),
    timeZone: 'America/New_York',
    attendees: [{ name: 'Ada Lovelace', email: 'ada@example.com' }],
    sequence: 0,
    ...over,
  };
}

describe.skipIf(!radicaleAvailable())('CalDAV event write-through against a real Radicale', () => {
  let rad: RadicaleServer;
  let creds: CaldavCredentials;
  let auth: string;

  /** A request outside the code under test, to look at (or change) what the server holds. */
  const raw = (url: string, method: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(url, {
      method,
      headers: { ...headers, authorization: auth },
      ...(body === undefined ? {} : { body }),
    });

  const get = async (url: string): Promise<{ status: number; etag: string | null; text: string }> => {
    const res = await raw(url, 'GET');
    return { status: res.status, etag: res.headers.get('etag'), text: await res.text() };
  };

  /** The hrefs of the members of a calendar collection. */
  const members = async (calendarUrl: string): Promise<string[]> => {
    const res = await raw(
      calendarUrl,
      'PROPFIND',
      { depth: '1', 'content-type': 'application/xml' },
      propfindEtag,
    );
    expect(res.status).toBe(207);
    const hrefs = descendants(parseXml(await res.text()), 'DAV:', 'href').map((h) =>
      new URL(h.text.trim(), calendarUrl).toString(),
    );
    return hrefs.filter((h) => h !== calendarUrl);
  };
  const propfindEtag =
    '<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>';

  beforeAll(async () => {
    rad = await startRadicale();
    creds = { serverUrl: rad.url, username: rad.username, password: rad.password };
    auth = `Basic ${Buffer.from(`${rad.username}:${rad.password}`).toString('base64')}`;
  });

  afterAll(async () => {
    await rad?.stop();
  });

  it('creates the event at <calendar>/<ref>.ics and answers the ETag the server holds', async () => {
    const calendar = await rad.makeCalendar('create');
    const s = spec('bk_create');
    const rec = recording();
    const written = await caldavPutEvent(creds, rec.fetch, calendar, s, NEW);
    // Radicale answers the PUT with an ETag header, so no PROPFIND follows.
    expect(rec.log).toEqual(['PUT 201 if-none-match']);
    expect(written.id).toBe(`${calendar}${s.ref}.ics`);
    expect(written.etag).toMatch(/^"[^"]+"$/);

    const stored = await get(written.id);
    expect(stored.status).toBe(200);
    expect(stored.etag).toBe(written.etag);
    const text = stored.text.replace(/\r\n[ \t]/g, '');
    expect(text).toContain(`UID:${s.ref}@kairos`);
    expect(text).toContain('X-KAIROS-MEETING:bk_create');
    expect(text).toContain('SEQUENCE:0');
    expect(text).toContain('DTSTART:20260310T150000Z');
    expect(text).toContain('DTEND:20260310T153000Z');
    expect(text).toContain('TRANSP:OPAQUE');
    expect(text).toContain('Ada Lovelace <ada@example.com>');
    expect(text).not.toMatch(/^(ATTENDEE|ORGANIZER)[;:]/m);
    expect(await members(calendar)).toEqual([written.id]);
  });

  it('caldavBusy skips the Kairos event but counts a foreign event next to it, with and without <C:expand>', async () => {
    const calendar = await rad.makeCalendar('busy');
    await caldavPutEvent(creds, fetch, calendar, spec('bk_busy'), NEW);
    await rad.putEvent(
      'busy',
      'foreign',
      vcalendar('\n', [
        'BEGIN:VEVENT',
        'UID:foreign',
        'DTSTAMP:20260101T000000Z',
        'DTSTART:20260310T153000Z',
        'DTEND:20260310T163000Z',
        'END:VEVENT',
      ]),
    );
    const foreignOnly = [['2026-03-10T15:30:00.000Z', '2026-03-10T16:30:00.000Z']];

    // Radicale 3.1 ignores <C:expand> and answers the stored objects either way.
    const expanded = await caldavBusy(creds, fetch, [calendar], window);
    expect(expanded.errors).toEqual([]);
    expect(isoPairs(expanded.busy)).toEqual(foreignOnly);

    // A server refusing <C:expand> (501) makes caldavBusy ask again without it.
    let refused = 0;
    const noExpand: HttpFetch = async (url, init) => {
      if (init?.method === 'REPORT' && String(init.body).includes('<C:expand')) {
        refused++;
        return new Response(null, { status: 501 });
      }
      return fetch(url, init);
    };
    const plain = await caldavBusy(creds, noExpand, [calendar], window);
    expect(refused).toBe(1);
    expect(plain.errors).toEqual([]);
    expect(isoPairs(plain.busy)).toEqual(foreignOnly);
  });

  it('an update with the stored ETag moves the event, raises SEQUENCE and answers a new ETag', async () => {
    const calendar = await rad.makeCalendar('update');
    const first = await caldavPutEvent(creds, fetch, calendar, spec('bk_update'), NEW);
    const moved = spec('bk_update', {
      start: Date.parse('2026-03-12T09:00:00Z'),
      end: Date.parse('2026-03-12T10:00:00Z'),
      sequence: 1,
    });
    const second = await caldavPutEvent(creds, fetch, calendar, moved, { href: first.id, etag: first.etag });
    expect(second.id).toBe(first.id);
    expect(second.etag).not.toBe(first.etag);

    const stored = await get(first.id);
    expect(stored.etag).toBe(second.etag);
    expect(stored.text).toContain('DTSTART:20260312T090000Z');
    expect(stored.text).toContain('DTEND:20260312T100000Z');
    expect(stored.text).toContain('SEQUENCE:1');
    expect(await members(calendar)).toEqual([first.id]);
  });

  it('an update with a stale ETag (the user changed the event meanwhile) still lands', async () => {
    const calendar = await rad.makeCalendar('stale');
    const first = await caldavPutEvent(creds, fetch, calendar, spec('bk_stale'), NEW);
    // Someone else edits the event in their client: same UID, other summary and time.
    const userCopy = (await get(first.id)).text
      .replace('SUMMARY:Intro call', 'SUMMARY:Renamed by the user')
      .replace('DTSTART:20260310T150000Z', 'DTSTART:20260310T140000Z');
    const edit = await raw(
      first.id,
      'PUT',
      { 'content-type': 'text/calendar', 'if-match': first.etag ?? '' },
      userCopy,
    );
    expect(edit.status).toBe(201);
    const userEtag = edit.headers.get('etag');
    expect(userEtag).not.toBe(first.etag);

    const moved = spec('bk_stale', {
      start: Date.parse('2026-03-13T09:00:00Z'),
      end: Date.parse('2026-03-13T10:00:00Z'),
      sequence: 1,
    });
    const rec = recording();
    const written = await caldavPutEvent(creds, rec.fetch, calendar, moved, {
      href: first.id,
      etag: first.etag,
    });
    expect(rec.log).toEqual(['PUT 412 if-match', 'PROPFIND 207', 'PUT 201 if-match']);
    expect(written.id).toBe(first.id);
    expect(written.etag).not.toBe(userEtag);
    const stored = await get(first.id);
    expect(stored.etag).toBe(written.etag);
    expect(stored.text).toContain('SUMMARY:Intro call');
    expect(stored.text).toContain('DTSTART:20260313T090000Z');
  });

  it('an update of an event deleted meanwhile creates it again at the same href', async () => {
    const calendar = await rad.makeCalendar('recreate');
    const first = await caldavPutEvent(creds, fetch, calendar, spec('bk_recreate'), NEW);
    expect((await raw(first.id, 'DELETE')).status).toBe(200);
    // Radicale answers If-Match on a missing resource with 412 (not 404).
    const rec = recording();
    const again = await caldavPutEvent(creds, rec.fetch, calendar, spec('bk_recreate', { sequence: 1 }), {
      href: first.id,
      etag: first.etag,
    });
    expect(rec.log).toEqual(['PUT 412 if-match', 'PROPFIND 404', 'PUT 201 if-none-match']);
    expect(again.id).toBe(first.id);
    expect((await get(first.id)).etag).toBe(again.etag);
  });

  it('a create retried after the first PUT succeeded leaves exactly one resource', async () => {
    const calendar = await rad.makeCalendar('retry');
    const s = spec('bk_retry');
    const first = await caldavPutEvent(creds, fetch, calendar, s, NEW);
    // The answer to the first PUT was lost: the caller still knows neither href nor ETag.
    const rec = recording();
    const second = await caldavPutEvent(creds, rec.fetch, calendar, s, NEW);
    expect(rec.log).toEqual(['PUT 412 if-none-match', 'PROPFIND 207', 'PUT 201 if-match']);
    expect(second.id).toBe(first.id);
    expect(await members(calendar)).toEqual([first.id]);
    expect((await get(first.id)).etag).toBe(second.etag);
  });

  it('delete with the stored ETag removes the event', async () => {
    const calendar = await rad.makeCalendar('delete');
    const written = await caldavPutEvent(creds, fetch, calendar, spec('bk_delete'), NEW);
    const rec = recording();
    await caldavDeleteEvent(creds, rec.fetch, written.id, written.etag);
    expect(rec.log).toEqual(['DELETE 200 if-match']);
    expect((await get(written.id)).status).toBe(404);
    expect(await members(calendar)).toEqual([]);
  });

  it('delete with a stale ETag (changed meanwhile) still removes the event', async () => {
    const calendar = await rad.makeCalendar('delete-stale');
    const first = await caldavPutEvent(creds, fetch, calendar, spec('bk_delete_stale'), NEW);
    const second = await caldavPutEvent(creds, fetch, calendar, spec('bk_delete_stale', { sequence: 1 }), {
      href: first.id,
      etag: first.etag,
    });
    expect(second.etag).not.toBe(first.etag);
    const rec = recording();
    await caldavDeleteEvent(creds, rec.fetch, first.id, first.etag);
    expect(rec.log).toEqual(['DELETE 412 if-match', 'DELETE 200']);
    expect((await get(first.id)).status).toBe(404);
  });

  it('deleting a resource that does not exist succeeds', async () => {
    const calendar = await rad.makeCalendar('delete-missing');
    const href = `${calendar}${eventRef('bk_never', 'host-1')}.ics`;
    await expect(caldavDeleteEvent(creds, fetch, href, null)).resolves.toBeUndefined();
    await expect(caldavDeleteEvent(creds, fetch, href, '"some-etag"')).resolves.toBeUndefined();
  });

  it('refuses to DELETE a collection URL', async () => {
    const calendar = await rad.makeCalendar('keep');
    const err = await caldavDeleteEvent(creds, fetch, calendar, null).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'bad_request' });
    expect((await raw(calendar, 'PROPFIND', { depth: '0' }, propfindEtag)).status).toBe(207);
  });

  it('a wrong password gives ProviderError unauthorized for PUT and DELETE', async () => {
    const calendar = await rad.makeCalendar('auth');
    const wrong = { ...creds, password: 'wrong' };
    const put = await caldavPutEvent(wrong, fetch, calendar, spec('bk_auth'), NEW).catch((e: unknown) => e);
    expect(put).toBeInstanceOf(ProviderError);
    expect(put).toMatchObject({ code: 'unauthorized', status: 401 });
    const del = await caldavDeleteEvent(wrong, fetch, `${calendar}x.ics`, null).catch((e: unknown) => e);
    expect(del).toBeInstanceOf(ProviderError);
    expect(del).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(await members(calendar)).toEqual([]);
  });

  it('refuses to send credentials for a calendar on another plain-http origin', async () => {
    const err = await caldavPutEvent(creds, fetch, 'http://203.0.113.9/cal/', spec('bk_origin'), NEW).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'bad_request', status: 0 });
  });
});

describe('buildKairosVevent', () => {
  it('writes UID, SEQUENCE, UTC times, the marker and the guests as text, without scheduling properties', () => {
    const s = spec('bk_1', { sequence: 3, description: 'Line one\r\nLine two', location: null });
    const text = buildKairosVevent(s, Date.parse('2026-02-01T12:00:00Z'));
    const lines = text.replace(/\r\n[ \t]/g, '').split('\r\n');
    expect(lines[0]).toBe('BEGIN:VCALENDAR');
    expect(lines).toContain('PRODID:-//kairos//kairos//EN');
    expect(lines).toContain(`UID:${s.ref}@kairos`);
    expect(lines).toContain('SEQUENCE:3');
    expect(lines).toContain('DTSTAMP:20260201T120000Z');
    expect(lines).toContain('DTSTART:20260310T150000Z');
    expect(lines).toContain('DTEND:20260310T153000Z');
    expect(lines).toContain('SUMMARY:Intro call');
    expect(lines).toContain('DESCRIPTION:Line one\\nLine two\\n\\nGuests:\\nAda Lovelace <ada@example.com>');
    expect(lines).toContain('X-KAIROS-MEETING:bk_1');
    expect(lines).toContain('TRANSP:OPAQUE');
    expect(lines).toContain('STATUS:CONFIRMED');
    expect(lines.filter((l) => l === 'BEGIN:VEVENT')).toHaveLength(1);
    expect(lines.some((l) => /^(ATTENDEE|ORGANIZER|METHOD|LOCATION)[;:]/.test(l))).toBe(false);
  });

  it('writes LOCATION when set and rejects an empty or inverted span', () => {
    const text = buildKairosVevent(spec('bk_2'), 0);
    expect(text).toContain('LOCATION:https://meet.example.com/abc');
    expect(() => buildKairosVevent(spec('bk_3', { end: Date.parse('2026-03-10T15:00:00Z') }), 0)).toThrow(
      RangeError,
    );
  });
});
