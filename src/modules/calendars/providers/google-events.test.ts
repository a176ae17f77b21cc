import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type GoogleEmulator, startGoogleEmulator } from '../../../../test/emulators/google.js';
import { caught } from '../../../../test/helpers/promises.js';
import { type EventSpec, eventRef, KAIROS_PROPERTY } from './events.js';
import { googleFreeBusy, ProviderError } from './google.js';
import { googleDeleteEvent, googleEventsBusy, googleInsertEvent, googlePatchEvent } from './google-events.js';

const fetch = globalThis.fetch;
const USER = 'user@example.com';
const H = 3_600_000;
const T = Date.parse('2026-06-10T00:00:00Z');
const DAY_WINDOW = { timeMin: T, timeMax: T + 24 * H };

function spec(over: Partial<EventSpec> = {}): EventSpec {
  return {
    ref: eventRef('bk_1', 'pr_1'),
    meetingKey: 'bk_1',
    title: 'Booking with Ada Lovelace',
    description: 'About the engine',
    location: null,
    start: T + 10 * H,
    end: T + 11 * H,
    timeZone: 'Europe/Berlin',
    attendees: [{ name: 'Ada Lovelace', email: 'ada@example.com' }],
    sequence: 0,
    ...over,
  };
}

describe('Google Calendar events against the emulator', () => {
  let emu: GoogleEmulator;
  let token: string;
  const cfg = () => ({ apiUrl: emu.apiUrl });

  beforeAll(async () => {
    emu = await startGoogleEmulator();
  });
  afterAll(() => emu.close());
  beforeEach(() => {
    emu.reset();
    token = emu.oauth.issueAccessToken();
  });

  describe('writes', () => {
    it('inserts under the client id with guests, the Kairos marker and sendUpdates=none; events.list answers it', async () => {
      const s = spec();
      const written = await googleInsertEvent(cfg(), fetch, token, 'primary', s);
      expect(written.id).toBe(s.ref);
      expect(written.etag).toMatch(/^"\d+"$/);

      const [stored, ...rest] = emu.events(USER);
      expect(rest).toEqual([]);
      expect(stored).toMatchObject({
        id: s.ref,
        status: 'confirmed',
        summary: 'Booking with Ada Lovelace',
        description: 'About the engine',
        start: T + 10 * H,
        end: T + 11 * H,
        timeZone: 'Europe/Berlin',
        attendees: [{ email: 'ada@example.com', displayName: 'Ada Lovelace', responseStatus: 'needsAction' }],
        extendedProperties: { private: { [KAIROS_PROPERTY]: 'bk_1' } },
        reminders: { useDefault: true },
        etag: written.etag,
      });
      expect(stored?.location).toBeUndefined(); // null fields are left out of the insert
      expect(emu.eventWrites).toEqual([
        { op: 'insert', calendarId: 'primary', eventId: s.ref, sendUpdates: 'none' },
      ]);

      const q = new URLSearchParams({ timeMin: '2026-06-10T00:00:00Z', timeMax: '2026-06-11T00:00:00Z' });
      const res = await fetch(`${emu.apiUrl}/calendars/primary/events?${q}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      const list = (await res.json()) as { kind: string; items: Record<string, unknown>[] };
      expect(list.kind).toBe('calendar#events');
      expect(list.items).toEqual([
        expect.objectContaining({
          kind: 'calendar#event',
          id: s.ref,
          start: { dateTime: '2026-06-10T10:00:00Z', timeZone: 'Europe/Berlin' },
          extendedProperties: { private: { [KAIROS_PROPERTY]: 'bk_1' } },
        }),
      ]);
    });

    it('patch moves the event under the same id and clears a removed description; delete cancels it', async () => {
      const s = spec();
      const first = await googleInsertEvent(cfg(), fetch, token, USER, s);
      const moved = await googlePatchEvent(cfg(), fetch, token, USER, first.id, {
        ...spec({
          start: T + 14 * H,
          end: T + 15 * H,
          description: null,
          location: 'https://meet.example/x',
        }),
        sequence: 1,
      });
      expect(moved.id).toBe(s.ref);
      expect(moved.etag).not.toBe(first.etag);
      expect(emu.events(USER)).toEqual([
        expect.objectContaining({
          id: s.ref,
          status: 'confirmed',
          start: T + 14 * H,
          end: T + 15 * H,
          description: '',
          location: 'https://meet.example/x',
          sequence: 1,
          etag: moved.etag,
        }),
      ]);

      await googleDeleteEvent(cfg(), fetch, token, USER, s.ref);
      expect(emu.events(USER)).toEqual([expect.objectContaining({ id: s.ref, status: 'cancelled' })]);
      const busy = await googleEventsBusy(cfg(), fetch, token, { calendarIds: [USER], ...DAY_WINDOW });
      expect(busy).toEqual({ busy: [], errors: [] });
    });

    it('a delete of an event already deleted (410) or unknown (404) counts as done', async () => {
      const s = spec();
      await googleInsertEvent(cfg(), fetch, token, USER, s);
      await googleDeleteEvent(cfg(), fetch, token, USER, s.ref);
      await expect(googleDeleteEvent(cfg(), fetch, token, USER, s.ref)).resolves.toBeUndefined();
      await expect(googleDeleteEvent(cfg(), fetch, token, USER, 'unknownevent0')).resolves.toBeUndefined();
      expect(emu.requests.eventsDelete).toBe(3);
    });

    it('a patch of an unknown event throws bad_request with reason notFound', async () => {
      const err = await caught(googlePatchEvent(cfg(), fetch, token, USER, 'unknownevent0', spec()));
      expect(err).toBeInstanceOf(ProviderError);
      expect(err).toMatchObject({ code: 'bad_request', status: 404, reason: 'notFound' });
    });

    it('an insert retried after its answer was lost (503 after the write) leaves exactly one event', async () => {
      const s = spec();
      emu.dropNextResponse();
      const lost = await caught(googleInsertEvent(cfg(), fetch, token, USER, s));
      expect(lost).toBeInstanceOf(ProviderError);
      expect(lost).toMatchObject({ code: 'unavailable', status: 503 });
      expect(emu.events(USER)).toHaveLength(1); // the write took effect

      const retried = await googleInsertEvent(cfg(), fetch, token, USER, s);
      expect(retried.id).toBe(s.ref);
      const events = emu.events(USER);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ id: s.ref, status: 'confirmed', etag: retried.etag });
      expect(emu.requests).toMatchObject({ eventsInsert: 2, eventsPatch: 1 }); // 409 duplicate → patch
    });

    it('an insert under the id of a deleted event restores it to the new spec', async () => {
      await googleInsertEvent(cfg(), fetch, token, USER, spec());
      await googleDeleteEvent(cfg(), fetch, token, USER, spec().ref);
      const again = await googleInsertEvent(
        cfg(),
        fetch,
        token,
        USER,
        spec({ title: 'Moved booking', start: T + 16 * H, end: T + 17 * H }),
      );
      expect(again.id).toBe(spec().ref);
      expect(emu.events(USER)).toEqual([
        expect.objectContaining({
          id: spec().ref,
          status: 'confirmed',
          summary: 'Moved booking',
          start: T + 16 * H,
          end: T + 17 * H,
        }),
      ]);
    });

    it('sends sendUpdates=none on every write (insert, duplicate → patch, patch, delete)', async () => {
      const s = spec();
      await googleInsertEvent(cfg(), fetch, token, USER, s);
      await googleInsertEvent(cfg(), fetch, token, USER, s);
      await googlePatchEvent(cfg(), fetch, token, USER, s.ref, spec({ title: 'Renamed' }));
      await googleDeleteEvent(cfg(), fetch, token, USER, s.ref);
      expect(emu.eventWrites.map((w) => w.op)).toEqual(['insert', 'insert', 'patch', 'patch', 'delete']);
      expect(emu.sendUpdates).toEqual(['none', 'none', 'none', 'none', 'none']);
    });

    it('the emulator answers Google’s 409 duplicate body and refuses ids outside base32hex', async () => {
      const post = (body: unknown) =>
        fetch(`${emu.apiUrl}/calendars/primary/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const times = {
        start: { dateTime: '2026-06-10T10:00:00Z' },
        end: { dateTime: '2026-06-10T11:00:00Z' },
      };
      expect((await post({ id: 'abcde12345', ...times })).status).toBe(200);
      const dup = await post({ id: 'abcde12345', ...times });
      expect(dup.status).toBe(409);
      expect(await dup.json()).toEqual({
        error: {
          code: 409,
          message: 'The requested identifier already exists.',
          errors: [
            { domain: 'global', reason: 'duplicate', message: 'The requested identifier already exists.' },
          ],
          status: 'ALREADY_EXISTS',
        },
      });
      const badId = await post({ id: 'Not-Base32hex', ...times });
      expect(badId.status).toBe(400);
      expect(await badId.json()).toMatchObject({ error: { errors: [{ reason: 'invalid' }] } });
      const empty = await post({ start: times.end, end: times.start });
      expect(await empty.json()).toMatchObject({
        error: { code: 400, errors: [{ reason: 'timeRangeEmpty' }] },
      });
    });
  });

  describe('googleEventsBusy', () => {
    it('counts opaque and tentative events, skips Kairos-marked, transparent, cancelled and self-declined ones', async () => {
      emu.addBusy(USER, T + 9 * H, T + 10 * H);
      emu.addEvent(USER, { start: T + 11 * H, end: T + 12 * H, transparency: 'transparent' });
      emu.addEvent(USER, { start: T + 12 * H, end: T + 13 * H, status: 'cancelled' });
      emu.addEvent(USER, {
        start: T + 13 * H,
        end: T + 14 * H,
        organizer: { email: 'boss@example.com' },
        attendees: [
          { email: 'boss@example.com', responseStatus: 'accepted' },
          { email: USER, responseStatus: 'declined' },
        ],
      });
      // Declined by another guest only: still busy for the owner.
      emu.addEvent(USER, {
        start: T + 15 * H,
        end: T + 16 * H,
        attendees: [{ email: 'guest@example.com', responseStatus: 'declined' }],
      });
      await googleInsertEvent(cfg(), fetch, token, USER, spec({ start: T + 20 * H, end: T + 21 * H }));
      emu.addEvent(USER, { start: T + 18 * H, end: T + 19 * H, status: 'tentative' });
      // Straddles the window's start: clipped.
      emu.addBusy(USER, T - 2 * H, T + H);

      const res = await googleEventsBusy(cfg(), fetch, token, { calendarIds: [USER], ...DAY_WINDOW });
      expect(res).toEqual({
        busy: [
          { start: T, end: T + H },
          { start: T + 9 * H, end: T + 10 * H },
          { start: T + 15 * H, end: T + 16 * H },
          { start: T + 18 * H, end: T + 19 * H },
        ],
        errors: [],
      });
      // freeBusy, like Google's, still counts the Kairos event: the reason events.list is read.
      const fb = await googleFreeBusy(cfg(), fetch, token, { calendarIds: [USER], ...DAY_WINDOW });
      expect(fb.busy).toContainEqual({ start: T + 20 * H, end: T + 21 * H });
    });

    it('answers each busy occurrence with its summary on request (withTitles), unmerged', async () => {
      emu.addEvent(USER, { start: T + 9 * H, end: T + 10 * H, summary: 'Dentist' });
      emu.addEvent(USER, { start: T + 9 * H + H / 2, end: T + 11 * H, summary: 'Call' });
      const res = await googleEventsBusy(cfg(), fetch, token, {
        calendarIds: [USER],
        ...DAY_WINDOW,
        withTitles: true,
      });
      expect(res.busy).toEqual([{ start: T + 9 * H, end: T + 11 * H }]);
      expect(res.events).toEqual([
        { start: T + 9 * H, end: T + 10 * H, title: 'Dentist' },
        { start: T + 9 * H + H / 2, end: T + 11 * H, title: 'Call' },
      ]);
    });

    it('counts all-day events from midnight to midnight in the calendar’s time zone', async () => {
      const tokyo = 'tokyo@group.calendar.google.com';
      emu.addCalendar(tokyo, { timeZone: 'Asia/Tokyo' });
      emu.addEvent(tokyo, { allDay: true, start: '2026-06-10', end: '2026-06-11' });
      emu.addEvent(tokyo, {
        allDay: true,
        start: '2026-06-11',
        end: '2026-06-12',
        transparency: 'transparent',
      });
      // A timed event, answered with a +09:00 offset.
      emu.addEvent(tokyo, { start: '2026-06-11T03:00:00Z', end: '2026-06-11T04:00:00Z' });

      const res = await googleEventsBusy(cfg(), fetch, token, {
        calendarIds: [tokyo],
        timeMin: Date.parse('2026-06-09T00:00:00Z'),
        timeMax: Date.parse('2026-06-13T00:00:00Z'),
      });
      expect(res.busy).toEqual([
        { start: Date.parse('2026-06-09T15:00:00Z'), end: Date.parse('2026-06-10T15:00:00Z') },
        { start: Date.parse('2026-06-11T03:00:00Z'), end: Date.parse('2026-06-11T04:00:00Z') },
      ]);
    });

    it('follows nextPageToken until the last page', async () => {
      const small = await startGoogleEmulator({ eventsPageSize: 2 });
      try {
        for (let i = 0; i < 5; i++) small.addBusy(USER, T + 2 * i * H, T + (2 * i + 1) * H);
        const res = await googleEventsBusy({ apiUrl: small.apiUrl }, fetch, small.oauth.issueAccessToken(), {
          calendarIds: [USER],
          ...DAY_WINDOW,
        });
        expect(res.busy).toHaveLength(5);
        expect(res.busy.at(-1)).toEqual({ start: T + 8 * H, end: T + 9 * H });
        expect(small.requests.eventsList).toBe(3);
      } finally {
        await small.close();
      }
    });

    it('reports a calendar answering 404 in errors while the other calendars still count', async () => {
      emu.addBusy(USER, T + 9 * H, T + 10 * H);
      const res = await googleEventsBusy(cfg(), fetch, token, {
        calendarIds: [USER, 'missing@group.calendar.google.com', USER],
        ...DAY_WINDOW,
      });
      expect(res).toEqual({
        busy: [{ start: T + 9 * H, end: T + 10 * H }],
        errors: [{ calendarId: 'missing@group.calendar.google.com', reason: 'notFound' }],
      });
      expect(emu.requests.eventsList).toBe(2); // duplicate ids are read once
    });

    it('throws unauthorized when the token is rejected', async () => {
      const err = await caught(
        googleEventsBusy(cfg(), fetch, 'at_bogus', { calendarIds: [USER], ...DAY_WINDOW }),
      );
      expect(err).toBeInstanceOf(ProviderError);
      expect(err).toMatchObject({ code: 'unauthorized', status: 401 });
    });

    it('throws rate_limited with retryAfterMs on 429 + Retry-After, and on 403 rateLimitExceeded', async () => {
      emu.failNext(1, 429, 30);
      const e429 = await caught(
        googleEventsBusy(cfg(), fetch, token, { calendarIds: [USER], ...DAY_WINDOW }),
      );
      expect(e429).toBeInstanceOf(ProviderError);
      expect(e429).toMatchObject({ code: 'rate_limited', status: 429, retryAfterMs: 30_000 });
      emu.failNext(1, 403);
      const e403 = await caught(
        googleEventsBusy(cfg(), fetch, token, { calendarIds: [USER], ...DAY_WINDOW }),
      );
      expect(e403).toMatchObject({ code: 'rate_limited', status: 403, reason: 'rateLimitExceeded' });
    });
  });
});
