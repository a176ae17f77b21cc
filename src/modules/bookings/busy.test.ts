/**
 * Bookings are busy time (docs/design.md#bookings): from the commit on, in both processes (two
 * apps on one database), slots, next, mutual and principal blocks leave a booking's time out; what
 * the slot list offers around a booking with buffers is exactly what the exclusion constraint
 * accepts; and remembered availability answers stay remembered while no booking changes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { vcalendar } from '../../../test/helpers/ics.js';
import { FakeClock } from '../../platform/clock.js';
import { newHost, postBooking } from '../../../test/helpers/fixtures.js';
import { waitUntil } from '../../../test/helpers/promises.js';

// Monday 1 June 2026; the feed is empty, so only working hours (Mon–Fri 09–17 UTC) and bookings decide.
const clock = new FakeClock('2026-06-01T06:00:00.000Z');
const DAY = '2026-06-02';
let feed: Server;
let a: TestApp;
let b: TestApp;
let account: { id: string; key: string };

beforeAll(async () => {
  feed = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/calendar' }).end(vcalendar('\r\n')),
  );
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  const env = { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' };
  a = await startTestApp({ env, clock });
  b = await startTestApp({ env, clock, database: a.database, masterKey: a.masterKey });
  account = await a.account();
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  await new Promise<void>((resolve) => feed.close(() => resolve()));
});

/** A host with a connected (empty) calendar and the given buffers. */
async function host(buffers = 0): Promise<string> {
  const id = await newHost(a, { token: account.key }, { timezone: 'UTC' });
  const url = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/${id}.ics`;
  const ics = await a.call('POST', '/v1/calendars/ics', {
    token: account.key,
    body: { url, principal_id: id },
  });
  expect(ics.status).toBe(201);
  const put = await a.call('PUT', `/v1/principals/${id}/schedule`, {
    token: account.key,
    body: { timezone: 'UTC', buffer_before_minutes: buffers, buffer_after_minutes: buffers },
  });
  expect(put.status).toBe(200);
  return id;
}

const book = (app: TestApp, principal: string, time: string) =>
  postBooking(
    app,
    { token: account.key, principal_id: principal },
    { start_time: `${DAY}T${time}:00Z`, customer_email: 'c@example.com', customer_name: 'C' },
  );

async function slots(app: TestApp, principal: string): Promise<{ text: string; starts: string[] }> {
  const res = await app.call(
    'GET',
    `/v1/availability/slots?business_id=${principal}&duration_minutes=30&from=${DAY}T00:00:00Z&to=${DAY}T23:59:00Z`,
    { token: account.key },
  );
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, starts: (JSON.parse(text) as Json).slots.map((s: Json) => s.start.slice(11, 16)) };
}

/**
 * Resolves once process b has taken in every change committed so far: notifications reach it in
 * commit order, so once it sees a booking made now (of a host of its own), it has seen all before.
 */
async function seenByB(): Promise<void> {
  const marker = await host();
  expect((await book(a, marker, '16:00')).status).toBe(201);
  await waitUntil(
    'B to see the marker booking',
    async () => !(await slots(b, marker)).starts.includes('16:00'),
  );
}

async function answers(app: TestApp, outcome: 'remembered' | 'computed'): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`kairos_availability_answers_total{kind="slots",outcome="${outcome}"}`));
  return Number(line?.split(' ').at(-1) ?? 0);
}

describe('bookings as busy time', () => {
  it('leave slots, next, mutual and principal blocks in the other process from the commit, and back on cancel', async () => {
    const h = await host();
    const other = await host();
    expect((await slots(b, h)).starts).toContain('10:00');
    const res = await book(a, h, '10:00');
    expect(res.status).toBe(201);
    const booking = (await res.json()).booking;
    // The booking process sees it at once (it drops its own copy before answering).
    expect((await slots(a, h)).starts).not.toContain('10:00');
    let inB = await slots(b, h);
    // NOTIFY reaches the other process asynchronously.
    await waitUntil(
      'B to see the booking',
      async () => {
        inB = await slots(b, h);
        return !inB.starts.includes('10:00');
      },
      3000,
    );
    expect(inB.starts).not.toContain('09:45');
    expect(inB.starts).toContain('09:30');
    expect(inB.starts).toContain('10:30');

    const next = await b.call(
      'GET',
      `/v1/availability/next?business_id=${h}&duration_minutes=60&after=${DAY}T09:30:00Z`,
      {
        token: account.key,
      },
    );
    expect((await next.json()).slot.start).toBe(`${DAY}T10:30:00.000Z`);
    const mutual = await b.call(
      'GET',
      `/v1/availability/mutual?principal_ids=${h},${other}&duration_minutes=30&from=${DAY}T09:00:00Z&to=${DAY}T12:00:00Z`,
      { token: account.key },
    );
    const mutualStarts = (await mutual.json()).slots.map((s: Json) => s.start.slice(11, 16));
    expect(mutualStarts).not.toContain('10:00');
    expect(mutualStarts).toContain('11:00');
    const blocks = await b.call(
      'GET',
      `/v1/principals/${h}/availability?from=${DAY}T00:00:00Z&to=${DAY}T23:59:00Z`,
      {
        token: account.key,
      },
    );
    expect((await blocks.json()).blocks).toContainEqual(
      expect.objectContaining({
        start: `${DAY}T10:00:00.000Z`,
        end: `${DAY}T10:30:00.000Z`,
        source: 'booking',
      }),
    );

    expect((await a.call('DELETE', `/v1/bookings/${booking.id}`, { token: account.key })).status).toBe(200);
    let freed = await slots(b, h);
    // NOTIFY reaches the other process asynchronously.
    await waitUntil(
      'B to see the slot freed',
      async () => {
        freed = await slots(b, h);
        return freed.starts.includes('10:00');
      },
      3000,
    );
    expect(freed.starts).toContain('10:00');
  });

  it('offers around a booking with buffers exactly the times the constraint accepts', async () => {
    const h = await host(15);
    expect((await book(a, h, '11:00')).status).toBe(201);
    const { starts } = await slots(a, h);
    // Occupied with buffers: 10:45–11:45; a slot keeps its own 15 minutes clear on each side.
    expect(starts).toContain('10:00');
    expect(starts).toContain('12:00');
    for (const t of ['10:15', '10:30', '10:45', '11:00', '11:15', '11:30', '11:45'])
      expect(starts).not.toContain(t);
    // Every time in the morning: bookable exactly when listed.
    for (const t of ['09:45', '10:00', '10:15', '10:30', '11:30', '11:45', '12:00']) {
      const listed = (await slots(a, h)).starts.includes(t);
      const res = await book(a, h, t);
      expect(res.status, `${t} listed=${listed}`).toBe(listed ? 201 : 409);
      if (res.status === 201) {
        const id = (await res.json()).booking.id;
        expect((await a.call('DELETE', `/v1/bookings/${id}`, { token: account.key })).status).toBe(200);
      }
    }
  });

  it('keeps remembered answers while no booking changes, and recomputes once one does', async () => {
    const h = await host();
    // Making the host (its calendar, its schedule) is announced to process b by NOTIFY; those arrive
    // before b's memory is measured (as after the other host's booking below).
    await seenByB();
    const first = await slots(b, h);
    expect((await slots(b, h)).text).toBe(first.text);
    const remembered = await answers(b, 'remembered');
    expect((await slots(b, h)).text).toBe(first.text);
    expect(await answers(b, 'remembered')).toBe(remembered + 1);
    // A booking of another host changes nothing here.
    const other = await host();
    expect((await book(a, other, '09:00')).status).toBe(201);
    await waitUntil(
      'B to see the other host’s booking',
      async () => !(await slots(b, other)).starts.includes('09:00'),
    );
    const before = await answers(b, 'remembered');
    expect((await slots(b, h)).text).toBe(first.text);
    expect(await answers(b, 'remembered')).toBe(before + 1);
    expect((await book(a, h, '09:00')).status).toBe(201);
    let changed = await slots(b, h);
    // NOTIFY reaches the other process asynchronously.
    await waitUntil(
      'B to see the new booking',
      async () => {
        changed = await slots(b, h);
        return changed.text !== first.text;
      },
      3000,
    );
    expect(changed.starts).not.toContain('09:00');
  });
});
