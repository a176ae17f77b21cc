/**
 * No-shows (docs/api.md#no-shows): after the start on the booking's mode's clock, a party is marked
 * once (`no_show` is a set, `booking.no_show` once per party); before the start 422, a cancelled
 * booking 409, another account's or mode's booking 404.
 */
import { describe, expect, it } from 'vitest';
import { bookingsApp, customer } from '../../../test/helpers/bookings.js';
import { advanceTestClock, testKeyFor } from '../../../test/helpers/test-mode.js';

const { t, clock } = bookingsApp();
const START = '2026-03-02T06:00:00.000Z';

async function book(key: string, start: string) {
  const res = await t.call('POST', '/v1/bookings', { token: key, body: { ...customer, start_time: start } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).booking;
}

const mark = (key: string, id: string, party: unknown) =>
  t.call('POST', `/v1/bookings/${id}/no-show`, { token: key, body: { party } });

describe('no-show', () => {
  it('refuses before the start (422), then marks each party once with one booking.no_show each', async () => {
    clock.set(START);
    const acc = await t.account();
    const b = await book(acc.key, '2026-03-03T09:00:00Z');

    const early = await mark(acc.key, b.id, 'customer');
    expect(early.status).toBe(422);
    expect(early.headers.get('content-type')).toContain('application/problem+json');
    expect((await early.json()).code).toBe('booking_not_started');

    clock.set('2026-03-03T09:10:00Z');
    const first = await mark(acc.key, b.id, 'customer');
    expect(first.status, await first.clone().text()).toBe(200);
    expect((await first.json()).booking).toMatchObject({ id: b.id, no_show: ['customer'] });
    const again = await mark(acc.key, b.id, 'customer');
    expect(again.status).toBe(200);
    expect((await again.json()).booking.no_show).toEqual(['customer']);
    expect(await t.events(acc.id, 'booking.no_show')).toHaveLength(1);

    const host = await mark(acc.key, b.id, 'host');
    expect((await host.json()).booking.no_show).toEqual(['customer', 'host']);
    const events = await t.events(acc.id, 'booking.no_show');
    expect(events).toHaveLength(2);
    expect(events.map((e) => e.party).sort()).toEqual(['customer', 'host']);
    const hostEvent = events.find((e) => e.party === 'host')!;
    expect(hostEvent.booking).toMatchObject({ id: b.id, no_show: ['customer', 'host'] });
    const got = await t.call('GET', `/v1/bookings/${b.id}`, { token: acc.key });
    expect((await got.json()).booking.no_show).toEqual(['customer', 'host']);

    const bad = await mark(acc.key, b.id, 'nobody');
    expect(bad.status).toBe(400);
  });

  it('answers 404 to another account and 409 for a cancelled booking', async () => {
    clock.set(START);
    const acc = await t.account();
    const other = await t.account();
    const b = await book(acc.key, '2026-03-04T09:00:00Z');
    const gone = await book(acc.key, '2026-03-04T10:00:00Z');
    expect((await t.call('DELETE', `/v1/bookings/${gone.id}`, { token: acc.key })).status).toBe(200);
    clock.set('2026-03-04T11:00:00Z');

    const foreign = await mark(other.key, b.id, 'customer');
    expect(foreign.status).toBe(404);
    expect(await t.events(other.id, 'booking.no_show')).toHaveLength(0);
    const cancelled = await mark(acc.key, gone.id, 'customer');
    expect(cancelled.status).toBe(409);
    expect((await cancelled.json()).code).toBe('booking_not_live');
    expect(await t.events(acc.id, 'booking.no_show')).toHaveLength(0);
  });

  it('counts "after the start" on the test clock in test mode, and a test booking is 404 to live keys', async () => {
    clock.set(START);
    const acc = await t.account();
    const test = (await testKeyFor(t, acc.key)).key;
    const b = await book(test, '2026-03-02T10:00:00Z');
    expect(b.livemode).toBe(false);

    expect((await mark(test, b.id, 'host')).status).toBe(422);
    await advanceTestClock(t, test, 5 * 3600);
    // Live time has not moved; the test clock is past the start.
    expect((await mark(acc.key, b.id, 'host')).status).toBe(404);
    const marked = await mark(test, b.id, 'host');
    expect(marked.status, await marked.clone().text()).toBe(200);
    expect((await marked.json()).booking).toMatchObject({ no_show: ['host'], livemode: false });
    const events = await t.events(acc.id, 'booking.no_show');
    expect(events).toHaveLength(1);
    expect(events[0]!.booking.livemode).toBe(false);
  });
});
