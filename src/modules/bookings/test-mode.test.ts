/**
 * Bookings in test mode (docs/api.md#test-mode): a booking is made in its caller's mode and seen only
 * by callers of that mode; test mode never takes time from live mode but sees it as busy; "now" is the
 * mode's clock; the public surface follows the link's mode.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { bookingsApp, customer } from '../../../test/helpers/bookings.js';
import { advanceTestClock, testKeyFor } from '../../../test/helpers/test-mode.js';

const { t, link } = bookingsApp();

/** An account with its live key and a test key (both act for the account's own principal). */
async function keys() {
  const acc = await t.account();
  const test = await testKeyFor(t, acc.key);
  return { acc, live: acc.key, test: test.key };
}

const create = (token: string, start: string, body: Record<string, unknown> = {}) =>
  t.call('POST', '/v1/bookings', { token, body: { ...customer, start_time: start, ...body } });

async function created(token: string, start: string): Promise<Json> {
  const res = await create(token, start);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).booking;
}

const listed = async (token: string): Promise<string[]> => {
  const res = await t.call('GET', '/v1/bookings', { token });
  expect(res.status).toBe(200);
  return (await res.json()).bookings.map((b: Json) => b.id);
};

describe('bookings in test mode', () => {
  it('are of their caller’s mode, carry livemode, and are 404 and unlisted to the other mode, both ways', async () => {
    const { live, test } = await keys();
    const testBooking = await created(test, '2026-03-03T10:00:00Z');
    const liveBooking = await created(live, '2026-03-03T11:00:00Z');
    expect(testBooking.livemode).toBe(false);
    expect(liveBooking.livemode).toBe(true);

    const stored = await t.ctx.db
      .selectFrom('booking_occupancy')
      .select(['owner_id', 'livemode'])
      .where('owner_id', 'in', [testBooking.id, liveBooking.id])
      .execute();
    expect(new Map(stored.map((r) => [r.owner_id, r.livemode]))).toEqual(
      new Map([
        [testBooking.id, false],
        [liveBooking.id, true],
      ]),
    );

    expect(await listed(test)).toEqual([testBooking.id]);
    expect(await listed(live)).toEqual([liveBooking.id]);
    for (const [token, own, other] of [
      [test, testBooking, liveBooking],
      [live, liveBooking, testBooking],
    ] as const) {
      const got = await t.call('GET', `/v1/bookings/${own.id}`, { token });
      expect(got.status).toBe(200);
      expect((await got.json()).booking.livemode).toBe(own.livemode);
      expect((await t.call('GET', `/v1/bookings/${other.id}`, { token })).status).toBe(404);
      const patch = await t.call('PATCH', `/v1/bookings/${other.id}`, { token, body: { notes: 'x' } });
      expect(patch.status).toBe(404);
      expect((await t.call('DELETE', `/v1/bookings/${other.id}`, { token })).status).toBe(404);
    }
    // Each mode's own changes answer livemode too.
    const patched = await t.call('PATCH', `/v1/bookings/${testBooking.id}`, {
      token: test,
      body: { start_time: '2026-03-03T14:00:00Z' },
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect((await patched.json()).booking).toMatchObject({
      livemode: false,
      start_time: '2026-03-03T14:00:00.000Z',
    });
    const cancelled = await t.call('DELETE', `/v1/bookings/${testBooking.id}`, { token: test });
    expect((await cancelled.json()).booking).toMatchObject({ livemode: false, status: 'cancelled' });
  });

  it('refuses a test booking at a live-booked time (409 slot_unavailable) and makes a live one at a test-booked time', async () => {
    const { live, test } = await keys();
    await created(live, '2026-03-03T10:00:00Z');
    const refused = await create(test, '2026-03-03T10:15:00Z');
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: 'slot_unavailable', reason: 'taken' });

    await created(test, '2026-03-03T12:00:00Z');
    // Test bookings never take time from live mode…
    const liveAtTestTime = await created(live, '2026-03-03T12:00:00Z');
    expect(liveAtTestTime.livemode).toBe(true);
    // …and test bookings still exclude each other.
    const twice = await create(test, '2026-03-03T12:00:00Z');
    expect(twice.status).toBe(409);

    // A test reschedule onto live time is refused the same way.
    const moving = await created(test, '2026-03-03T15:00:00Z');
    const moved = await t.call('PATCH', `/v1/bookings/${moving.id}`, {
      token: test,
      body: { start_time: '2026-03-03T10:00:00Z' },
    });
    expect(moved.status).toBe(409);
    expect(await moved.json()).toMatchObject({ code: 'slot_unavailable', reason: 'taken' });
  });

  it('reads "now" from the test clock in test mode: after an advance of two days tomorrow is in the past for the test key only', async () => {
    const { live, test } = await keys();
    await advanceTestClock(t, test, 2 * 86_400);
    // Monday 06:00 for live mode, Wednesday 06:00 for this account's test mode.
    const past = await create(test, '2026-03-03T10:00:00Z');
    expect(past.status).toBe(422);
    expect(await past.json()).toMatchObject({ code: 'start_in_past' });
    expect((await create(live, '2026-03-03T10:00:00Z')).status).toBe(201);
    // The test booking's times are the test clock's.
    const later = await created(test, '2026-03-05T10:00:00Z');
    expect(Date.parse(later.created_at)).toBeGreaterThanOrEqual(Date.parse('2026-03-04T06:00:00Z'));
  });

  it('gives the public surface the link’s mode: a test link’s page and bookings say livemode false', async (ctx) => {
    const { live, test } = await keys();
    const testLink = await link(test, { slug: `test-mode-${Date.now()}` });
    const liveLink = await link(live, { slug: `live-mode-${Date.now()}` });
    const view = async (slug: string) =>
      (await (await t.call('GET', `/v1/public/links/${slug}`)).json()).booking_link;
    expect((await view(liveLink.slug)).livemode).toBe(true);
    // A link has a mode once the booking-links API gives it (its `livemode`); before, every link is live.
    if ((testLink as { livemode?: boolean }).livemode === undefined) ctx.skip();
    expect((await view(testLink.slug)).livemode).toBe(false);
    const res = await t.call('POST', `/v1/public/links/${testLink.slug}/bookings`, {
      body: { ...customer, start_time: '2026-03-03T13:00:00Z' },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const booking = (await res.json()).booking;
    expect(booking.livemode).toBe(false);
    expect(await listed(test)).toContain(booking.id);
    expect(await listed(live)).not.toContain(booking.id);
    // The attendee's token acts in the booking's mode.
    const token = new URL(booking.manage_url).pathname.split('/').at(-1);
    const byToken = await t.call('GET', `/v1/public/bookings/${token}`);
    expect((await byToken.json()).booking.livemode).toBe(false);
  });
});
