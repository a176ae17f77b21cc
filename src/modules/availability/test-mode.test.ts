/**
 * Availability in test mode (docs/api.md#test-mode): a test key's slots, next slot and blocks count live
 * bookings as busy and its own test bookings too, a live key's never see test bookings, and test mode's
 * "now" is the account's test clock.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { vcalendar } from '../../../test/helpers/ics.js';
import { advanceTestClock, testKeyFor } from '../../../test/helpers/test-mode.js';
import { FakeClock } from '../../platform/clock.js';

// Monday 2 March 2026, 06:00 UTC; the account works Mon–Fri 09–17 UTC and its (ICS) calendar is empty.
const clock = new FakeClock('2026-03-02T06:00:00.000Z');
const DAY = '2026-03-03';
let feed: Server;
let t: TestApp;

beforeAll(async () => {
  feed = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/calendar' }).end(vcalendar('\r\n')),
  );
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  t = await startTestApp({ env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' }, clock });
});
afterAll(async () => {
  await t?.close();
  await new Promise<void>((resolve) => feed.close(() => resolve()));
});

/** An account whose own principal has a connected (empty) calendar, with a live and a test key. */
async function account() {
  const acc = await t.account();
  const url = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/${acc.id}.ics`;
  const ics = await t.call('POST', '/v1/calendars/ics', {
    token: acc.key,
    body: { url, principal_id: acc.id },
  });
  expect(ics.status, await ics.clone().text()).toBe(201);
  return { id: acc.id, live: acc.key, test: (await testKeyFor(t, acc.key)).key };
}

async function book(token: string, time: string): Promise<Json> {
  const res = await t.call('POST', '/v1/bookings', {
    token,
    body: { start_time: `${DAY}T${time}:00Z`, customer_email: 'c@example.com', customer_name: 'C' },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).booking;
}

async function slots(token: string, id: string): Promise<string[]> {
  const res = await t.call(
    'GET',
    `/v1/availability/slots?business_id=${id}&duration_minutes=30&from=${DAY}T00:00:00Z&to=${DAY}T23:59:00Z`,
    { token },
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()).slots.map((s: Json) => s.start.slice(11, 16));
}

async function bookedBlocks(token: string, id: string): Promise<string[]> {
  const res = await t.call(
    'GET',
    `/v1/principals/${id}/availability?from=${DAY}T00:00:00Z&to=${DAY}T23:59:00Z`,
    { token },
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()).blocks
    .filter((b: Json) => b.source === 'booking')
    .map((b: Json) => b.start.slice(11, 16));
}

describe('availability in test mode', () => {
  it('shows live bookings busy to a test key, and test bookings to no live key', async () => {
    const a = await account();
    // Read once in each mode first: each mode's remembered busy time must follow the bookings.
    expect(await slots(a.test, a.id)).toContain('10:00');
    expect(await slots(a.live, a.id)).toContain('12:00');
    await book(a.live, '10:00');
    await book(a.test, '12:00');

    const testSlots = await slots(a.test, a.id);
    expect(testSlots).not.toContain('10:00');
    expect(testSlots).not.toContain('12:00');
    expect(testSlots).toContain('11:00');
    const liveSlots = await slots(a.live, a.id);
    expect(liveSlots).not.toContain('10:00');
    expect(liveSlots).toContain('12:00');

    expect(await bookedBlocks(a.test, a.id)).toEqual(['10:00', '12:00']);
    expect(await bookedBlocks(a.live, a.id)).toEqual(['10:00']);

    const next = async (token: string) =>
      (
        await (
          await t.call(
            'GET',
            `/v1/availability/next?business_id=${a.id}&duration_minutes=60&after=${DAY}T11:30:00Z`,
            { token },
          )
        ).json()
      ).slot.start;
    expect(await next(a.live)).toBe(`${DAY}T11:30:00.000Z`);
    expect(await next(a.test)).toBe(`${DAY}T12:30:00.000Z`);
  });

  it('counts "now" from the test clock for a test key', async () => {
    const a = await account();
    // Live: Monday 06:00, so Tuesday is all open; test: advanced to Tuesday 12:00.
    await advanceTestClock(t, a.test, 30 * 3600);
    const testSlots = await slots(a.test, a.id);
    expect(testSlots[0]).toBe('12:00');
    expect(await slots(a.live, a.id)).toContain('09:00');
  });
});
