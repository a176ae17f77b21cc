import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MicrosoftEmulator, startMicrosoftEmulator } from '../../../../test/emulators/microsoft.js';
import { caught } from '../../../../test/helpers/promises.js';
import { type EventSpec, GRAPH_KAIROS_PROPERTY_ID } from './events.js';
import { microsoftFreeBusy, microsoftListCalendars, ProviderError } from './microsoft.js';
import { graphCreateEvent, graphDeleteEvent, graphEventsBusy, graphUpdateEvent } from './microsoft-events.js';
import { HOUR } from '../../../lib/time.js';

const fetch = globalThis.fetch;
const T0 = Date.parse('2026-06-01T09:00:00Z');
const USER = 'user@example.com';

function spec(overrides: Partial<EventSpec> = {}): EventSpec {
  return {
    ref: 'kairos0123456789abcdef0123456789abcdef',
    meetingKey: 'bk_01',
    title: 'Intro call',
    description: 'Talk about the project.',
    location: 'https://meet.example.com/abc',
    start: T0,
    end: T0 + HOUR,
    timeZone: 'Europe/Berlin',
    attendees: [{ name: 'Ada Guest', email: 'ada@example.org' }],
    sequence: 0,
    ...overrides,
  };
}

describe('Microsoft Graph event writes and calendarView busy reads against the emulator', () => {
  let emu: MicrosoftEmulator;
  let token: string;
  let calendarId: string;
  const cfg = () => ({ graphUrl: emu.graphUrl });

  beforeAll(async () => {
    emu = await startMicrosoftEmulator({ user: USER });
    token = emu.oauth.issueAccessToken(USER);
    const calendars = await microsoftListCalendars(cfg(), fetch, token);
    calendarId = calendars.find((c) => c.isDefault)?.id as string;
  });
  afterAll(() => emu.close());
  beforeEach(() => emu.reset());

  /** Raw calendarView of one calendar, asking for the Kairos property, in UTC. */
  async function calendarView(calId: string, start: number, end: number): Promise<Record<string, unknown>[]> {
    const q = new URLSearchParams({
      startDateTime: new Date(start).toISOString(),
      endDateTime: new Date(end).toISOString(),
      $expand: `singleValueExtendedProperties($filter=id eq '${GRAPH_KAIROS_PROPERTY_ID}')`,
      $top: '100',
    });
    const res = await fetch(`${emu.graphUrl}/me/calendars/${encodeURIComponent(calId)}/calendarView?${q}`, {
      headers: { authorization: `Bearer ${token}`, prefer: 'outlook.timezone="UTC"' },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { value: Record<string, unknown>[] }).value;
  }

  it('creates the event with transactionId, the Kairos marker and guests in the body, without attendees', async () => {
    const written = await graphCreateEvent(cfg(), fetch, token, calendarId, spec());
    expect(written.id).toBeTruthy();
    expect(written.etag).toMatch(/^W\/"/);

    const [stored, ...others] = emu.events(USER);
    expect(others).toEqual([]);
    expect(stored).toMatchObject({
      id: written.id,
      calendarId,
      subject: 'Intro call',
      location: 'https://meet.example.com/abc',
      start: T0,
      end: T0 + HOUR,
      showAs: 'busy',
      isReminderOn: true,
      isCancelled: false,
      transactionId: spec().ref,
      singleValueExtendedProperties: [{ id: GRAPH_KAIROS_PROPERTY_ID, value: 'bk_01' }],
    });
    expect(stored?.bodyText).toContain('Talk about the project.');
    expect(stored?.bodyText).toContain('Ada Guest <ada@example.org>');
    expect(emu.requests.eventsWithAttendees).toBe(0);
    expect(emu.eventWrites.map((w) => w.body && 'attendees' in w.body)).toEqual([false]);

    const view = await calendarView(calendarId, T0 - HOUR, T0 + 2 * HOUR);
    expect(view).toEqual([
      expect.objectContaining({
        id: written.id,
        start: { dateTime: '2026-06-01T09:00:00.0000000', timeZone: 'UTC' },
        end: { dateTime: '2026-06-01T10:00:00.0000000', timeZone: 'UTC' },
        singleValueExtendedProperties: [{ id: GRAPH_KAIROS_PROPERTY_ID, value: 'bk_01' }],
      }),
    ]);
  });

  it('update moves the event (new etag, location cleared), delete removes it, a second delete succeeds', async () => {
    const created = await graphCreateEvent(cfg(), fetch, token, calendarId, spec());
    const moved = await graphUpdateEvent(
      cfg(),
      fetch,
      token,
      created.id,
      spec({ start: T0 + 3 * HOUR, end: T0 + 4 * HOUR, title: 'Moved call', location: null }),
    );
    expect(moved.id).toBe(created.id);
    expect(moved.etag).toMatch(/^W\/"/);
    expect(moved.etag).not.toBe(created.etag);
    expect(emu.events(USER)).toEqual([
      expect.objectContaining({ id: created.id, subject: 'Moved call', location: '', start: T0 + 3 * HOUR }),
    ]);
    expect(await calendarView(calendarId, T0, T0 + HOUR)).toEqual([]);
    expect((await calendarView(calendarId, T0 + 3 * HOUR, T0 + 4 * HOUR)).map((e) => e.id)).toEqual([
      created.id,
    ]);

    await graphDeleteEvent(cfg(), fetch, token, created.id);
    expect(emu.events(USER)).toEqual([]);
    expect(await calendarView(calendarId, T0, T0 + 5 * HOUR)).toEqual([]);
    await expect(graphDeleteEvent(cfg(), fetch, token, created.id)).resolves.toBeUndefined();
    expect(emu.requests.eventsDelete).toBe(2);
  });

  it('updating an event that is gone throws bad_request with reason ErrorItemNotFound', async () => {
    const err = await caught(graphUpdateEvent(cfg(), fetch, token, 'AAMkAGEvmissing=', spec()));
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ code: 'bad_request', status: 404, reason: 'ErrorItemNotFound' });
  });

  it('creating in an unknown calendar throws bad_request with reason ErrorItemNotFound', async () => {
    const err = await caught(graphCreateEvent(cfg(), fetch, token, 'AAMkADnope', spec()));
    expect(err).toMatchObject({ code: 'bad_request', status: 404, reason: 'ErrorItemNotFound' });
    expect(emu.events()).toEqual([]);
  });

  it('a create retried after its response was lost leaves exactly one event and returns the same id', async () => {
    emu.dropNextResponse();
    const lost = await caught(graphCreateEvent(cfg(), fetch, token, calendarId, spec()));
    expect(lost).toBeInstanceOf(ProviderError);
    expect(lost).toMatchObject({ code: 'unavailable', status: 503, reason: 'ErrorServiceUnavailable' });
    const [first] = emu.events(USER);
    expect(first).toBeDefined();

    const retried = await graphCreateEvent(cfg(), fetch, token, calendarId, spec());
    expect(retried.id).toBe(first?.id);
    expect(emu.events(USER)).toHaveLength(1);
    expect(emu.requests.eventsCreate).toBe(2);

    // Another ref is another event.
    await graphCreateEvent(cfg(), fetch, token, calendarId, spec({ ref: 'kairos' + 'f'.repeat(32) }));
    expect(emu.events(USER)).toHaveLength(2);
  });

  it('a delete whose response was lost is done, and deleting again succeeds', async () => {
    const created = await graphCreateEvent(cfg(), fetch, token, calendarId, spec());
    emu.dropNextResponse();
    expect(await caught(graphDeleteEvent(cfg(), fetch, token, created.id))).toMatchObject({
      code: 'unavailable',
    });
    expect(emu.events(USER)).toEqual([]);
    await graphDeleteEvent(cfg(), fetch, token, created.id);
  });

  it('getSchedule still counts the events Kairos wrote (only graphEventsBusy skips them)', async () => {
    await graphCreateEvent(cfg(), fetch, token, calendarId, spec());
    const fb = await microsoftFreeBusy(cfg(), fetch, token, { schedules: [USER], start: T0, end: T0 + HOUR });
    expect(fb.busy).toEqual([{ start: T0, end: T0 + HOUR }]);
    const ev = await graphEventsBusy(cfg(), fetch, token, {
      calendarIds: [calendarId],
      start: T0,
      end: T0 + HOUR,
    });
    expect(ev).toEqual({ busy: [], errors: [] });
  });

  it('graphEventsBusy counts busy/oof/tentative/workingElsewhere and skips Kairos-marked, free, unknown and cancelled events', async () => {
    const at = (h: number) => ({ start: T0 + h * HOUR, end: T0 + h * HOUR + HOUR / 2 });
    emu.addEvent(calendarId, { ...at(0), showAs: 'busy' });
    emu.addEvent(calendarId, { ...at(1), showAs: 'oof' });
    emu.addEvent(calendarId, { ...at(2), showAs: 'tentative' });
    emu.addEvent(calendarId, { ...at(3), showAs: 'workingElsewhere' });
    emu.addEvent(calendarId, { ...at(4), showAs: 'free' });
    emu.addEvent(calendarId, { ...at(5), showAs: 'unknown' });
    emu.addEvent(calendarId, { ...at(6), showAs: 'busy', isCancelled: true });
    // Kairos's own events: written through the client, and one whose property id differs in case.
    await graphCreateEvent(cfg(), fetch, token, calendarId, spec({ start: at(7).start, end: at(7).end }));
    emu.addEvent(calendarId, {
      ...at(8),
      singleValueExtendedProperties: [{ id: GRAPH_KAIROS_PROPERTY_ID.toUpperCase(), value: 'bk_02' }],
    });
    // Another extended property does not make an event Kairos's.
    emu.addEvent(calendarId, {
      ...at(9),
      singleValueExtendedProperties: [
        { id: 'String {00000000-0000-0000-0000-000000000001} Name x', value: 'y' },
      ],
    });

    const res = await graphEventsBusy(cfg(), fetch, token, {
      calendarIds: [calendarId],
      start: T0,
      end: T0 + 10 * HOUR,
    });
    expect(res.errors).toEqual([]);
    expect(res.busy).toEqual([0, 1, 2, 3, 9].map(at));
  });

  it('graphEventsBusy answers each busy occurrence with its subject on request (withTitles)', async () => {
    emu.addEvent(calendarId, { start: T0, end: T0 + HOUR, subject: 'Board meeting' });
    const res = await graphEventsBusy(cfg(), fetch, token, {
      calendarIds: [calendarId],
      start: T0,
      end: T0 + 2 * HOUR,
      withTitles: true,
    });
    expect(res.events).toEqual([{ start: T0, end: T0 + HOUR, title: 'Board meeting' }]);
  });

  it('graphEventsBusy clips to the window and merges overlaps across calendars', async () => {
    const second = emu.addCalendar(USER, 'Work');
    emu.addEvent(calendarId, { start: T0 - HOUR, end: T0 + HOUR });
    emu.addEvent(second, { start: T0 + HOUR / 2, end: T0 + 2 * HOUR });
    emu.addEvent(second, { start: T0 + 5 * HOUR, end: T0 + 7 * HOUR });
    const res = await graphEventsBusy(cfg(), fetch, token, {
      calendarIds: [calendarId, second, calendarId],
      start: T0,
      end: T0 + 6 * HOUR,
    });
    expect(res).toEqual({
      busy: [
        { start: T0, end: T0 + 2 * HOUR },
        { start: T0 + 5 * HOUR, end: T0 + 6 * HOUR },
      ],
      errors: [],
    });
    expect(emu.requests.calendarView).toBe(2);
  });

  it('graphEventsBusy reports a 404 calendar in errors while the other calendars count', async () => {
    emu.addEvent(calendarId, { start: T0, end: T0 + HOUR });
    const res = await graphEventsBusy(cfg(), fetch, token, {
      calendarIds: ['AAMkADgone', calendarId],
      start: T0 - HOUR,
      end: T0 + 2 * HOUR,
    });
    expect(res).toEqual({
      busy: [{ start: T0, end: T0 + HOUR }],
      errors: [{ calendarId: 'AAMkADgone', reason: 'ErrorItemNotFound' }],
    });
  });

  it('graphEventsBusy throws unauthorized on a bad token', async () => {
    const err = await caught(
      graphEventsBusy(cfg(), fetch, 'not-a-token', { calendarIds: [calendarId], start: T0, end: T0 + HOUR }),
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ code: 'unauthorized', status: 401, reason: 'InvalidAuthenticationToken' });
  });

  it('graphEventsBusy throws rate_limited with retryAfterMs on 429 + Retry-After', async () => {
    emu.failNext(1, 429, 12);
    const err = await caught(
      graphEventsBusy(cfg(), fetch, token, { calendarIds: [calendarId], start: T0, end: T0 + HOUR }),
    );
    expect(err).toMatchObject({ code: 'rate_limited', status: 429, retryAfterMs: 12_000 });
  });

  it('the emulator refuses a create whose end is not after its start, and calendarView without a window', async () => {
    const err = await caught(graphCreateEvent(cfg(), fetch, token, calendarId, spec({ end: T0 })));
    expect(err).toMatchObject({ code: 'bad_request', status: 400, reason: 'ErrorInvalidRequest' });
    const res = await fetch(`${emu.graphUrl}/me/calendars/${encodeURIComponent(calendarId)}/calendarView`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'ErrorInvalidParameter' } });
    expect(emu.events()).toEqual([]);
  });

  it('the emulator answers event times in the Prefer: outlook.timezone zone', async () => {
    const created = await graphCreateEvent(cfg(), fetch, token, calendarId, spec());
    const res = await fetch(`${emu.graphUrl}/me/events/${encodeURIComponent(created.id)}`, {
      headers: { authorization: `Bearer ${token}`, prefer: 'outlook.timezone="Europe/Berlin"' },
    });
    expect(await res.json()).toMatchObject({
      start: { dateTime: '2026-06-01T11:00:00.0000000', timeZone: 'Europe/Berlin' },
    });
  });
});

describe('graphEventsBusy paging', () => {
  let emu: MicrosoftEmulator;

  beforeAll(async () => {
    emu = await startMicrosoftEmulator({ eventsPageSize: 2 });
  });
  afterAll(() => emu.close());

  it('follows @odata.nextLink across pages of a tiny page size', async () => {
    const token = emu.oauth.issueAccessToken(USER);
    const calendarId = emu.addEvent(USER, { start: T0, end: T0 + HOUR / 2 }).calendarId;
    for (let h = 1; h < 7; h++)
      emu.addEvent(calendarId, { start: T0 + h * HOUR, end: T0 + h * HOUR + HOUR / 2 });
    emu.addEvent(calendarId, { start: T0 + 7 * HOUR, end: T0 + 8 * HOUR, showAs: 'free' });

    const res = await graphEventsBusy({ graphUrl: emu.graphUrl }, fetch, token, {
      calendarIds: [calendarId],
      start: T0,
      end: T0 + 8 * HOUR,
    });
    expect(res.errors).toEqual([]);
    expect(res.busy).toHaveLength(7);
    expect(res.busy.at(-1)).toEqual({ start: T0 + 6 * HOUR, end: T0 + 6 * HOUR + HOUR / 2 });
    expect(emu.requests.calendarView).toBe(4); // 8 events, 2 per page
  });
});
