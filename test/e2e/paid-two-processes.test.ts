import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StripeEmulator, startStripeEmulator } from '../emulators/stripe.js';
import type { Json, TestApp } from '../helpers/app.js';
import { type ServerProcess, callServer, useTwoServers } from '../helpers/process.js';
import { nextWeekdayAt } from '../helpers/slots.js';
import { newHost, serverAt } from '../helpers/fixtures.js';

/**
 * Paid bookings across two `kairos serve` processes on one database, with the real `stripe` package
 * in each talking to the Stripe emulator:
 * - a paid hold racing free bookings of the same host for the same time, from both processes: exactly
 *   one wins, whichever kind it is (the exclusion constraint holds holds too);
 * - one Stripe event delivered many times to both processes at once confirms the booking once.
 * The spawned servers run on the real clock, so times are picked on a weekday a few days ahead.
 */
let stripe: StripeEmulator;
beforeAll(async () => {
  stripe = await startStripeEmulator();
});
afterAll(async () => {
  await stripe?.close();
});
let t: TestApp;
let a: ServerProcess;
let b: ServerProcess;
useTwoServers(
  (s) => ({ t, a, b } = s),
  () => ({
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    STRIPE_API_URL: stripe.url,
  }),
);

/** The first Wednesday at least two days after now, at `hour`:00 UTC (inside the default Mon–Fri 09–17). */
const nextWednesdayAt = (hour: number): string => nextWeekdayAt(3, hour).toISOString();

const customer = { customer_email: 'ada@example.com', customer_name: 'Ada' };

async function pricedLink(key: string, slug: string): Promise<string> {
  const host = await newHost(serverAt(a.url), { token: key }, { display_name: 'Paid host', timezone: 'UTC' });
  const link = await callServer(a.url, 'POST', '/v1/booking-links', key, {
    slug,
    title: 'Paid call',
    host_ids: [host],
    price_amount: 4000,
    price_currency: 'usd',
  });
  expect(link.status).toBe(201);
  return host;
}

describe('paid bookings across two server processes', () => {
  it('a paid hold racing free bookings of its host for one time, from both processes: exactly one 201, the rest 409, none 5xx', async () => {
    const acc = await t.account();
    const slug = `race-${Date.now()}`;
    const host = await pricedLink(acc.key, slug);
    const start = nextWednesdayAt(10);
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 2
          ? callServer(a.url, 'POST', `/v1/public/links/${slug}/bookings`, undefined, {
              start_time: start,
              ...customer,
            })
          : callServer(b.url, 'POST', '/v1/bookings', acc.key, {
              principal_id: host,
              start_time: start,
              ...customer,
            }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s !== 201 && s !== 409)).toEqual([]);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    const held = await t.ctx.db
      .selectFrom('booking_occupancy')
      .select('owner_id')
      .where('principal_id', '=', host)
      .execute();
    expect(held).toHaveLength(1);
    const live = await t.ctx.db
      .selectFrom('bookings')
      .select(['id', 'status'])
      .where('principal_id', '=', host)
      .where('status', 'in', ['pending_payment', 'confirmed'])
      .execute();
    expect(live.map((r) => r.id)).toEqual(held.map((r) => r.owner_id));
  });

  it('one checkout.session.completed delivered 20 times to both processes at once confirms the booking once', async () => {
    const acc = await t.account();
    const slug = `paid-once-${Date.now()}`;
    await pricedLink(acc.key, slug);
    const res = await callServer(a.url, 'POST', `/v1/public/links/${slug}/bookings`, undefined, {
      start_time: nextWednesdayAt(14),
      ...customer,
    });
    expect(res.status).toBe(201);
    const booking = ((await res.json()) as Json).booking;
    expect(booking.status).toBe('pending_payment');
    const session = stripe.sessions().find((s) => s.metadata?.booking_id === booking.id);
    expect(session).toBeDefined();

    stripe.deliverNothing = true;
    await stripe.pay(session!.id);
    stripe.deliverNothing = false;
    const event = stripe.pending.at(-1)!;
    const deliveries = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        stripe.deliver(event, { url: `${i % 2 ? a.url : b.url}/v1/payments/stripe/webhook` }),
      ),
    );
    const failed = deliveries.filter((d) => d.status !== 200).map((d) => `${d.status} ${d.body}`);
    expect(failed).toEqual([]);
    expect(deliveries.filter((d) => JSON.parse(d.body).duplicate === false)).toHaveLength(1);
    const confirmed = await t.ctx.db
      .selectFrom('events')
      .select('id')
      .where('account_id', '=', acc.id)
      .where('type', '=', 'booking.confirmed')
      .execute();
    expect(confirmed).toHaveLength(1);
    const row = await t.ctx.db
      .selectFrom('bookings')
      .select('status')
      .where('id', '=', booking.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('confirmed');
  });
});
