/**
 * Paid bookings over HTTP on the real runtime, the real `stripe` package and the Stripe emulator
 * (test/emulators/stripe.ts), whose signed events reach Kairos's webhook (docs/api.md#payments):
 * hold → pay → confirmed, expiry, late payments, refunds, duplicated and reordered events, bad
 * signatures, Stripe failures and Connect.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type StripeEmulator, startStripeEmulator } from '../../../test/emulators/stripe.js';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { FakeClock } from '../../platform/clock.js';
import { MINUTE } from '../../lib/time.js';

// Monday 2 March 2026, 06:00 UTC; hosts work Mon–Fri 09:00–17:00 UTC.
const T0 = '2026-03-02T06:00:00.000Z';
const clock = new FakeClock(T0);
const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };

let stripe: StripeEmulator;
let t: TestApp;

beforeAll(async () => {
  stripe = await startStripeEmulator({ now: () => clock.nowMs() });
  t = await startTestApp({
    clock,
    env: {
      STRIPE_SECRET_KEY: stripe.secretKey,
      STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
      STRIPE_CONNECT_WEBHOOK_SECRET: 'whsec_connect_endpoint',
      STRIPE_API_URL: stripe.url,
      KAIROS_PLATFORM_FEE_BPS: '500',
    },
  });
  stripe.setWebhookUrl(`${t.url}/v1/payments/stripe/webhook`);
}, 60_000);
afterAll(async () => {
  await t?.close();
  await stripe?.close();
});
beforeEach(() => {
  clock.set(T0);
  stripe.deliverNothing = false;
});

interface Setup {
  key: string;
  accountId: string;
  host: string;
  slug: string;
}

let slugs = 0;
/** A new account with a host and a priced link (25.00 EUR). */
async function pricedLink(): Promise<Setup> {
  const acc = await t.account();
  const res = await t.call('POST', '/v1/hosts', {
    token: acc.key,
    body: { display_name: 'Host', email: 'host@kairos.example', timezone: 'UTC' },
  });
  const host = (await res.json()).host.principal_id;
  const slug = `paid-${++slugs}`;
  const link = await t.call('POST', '/v1/booking-links', {
    token: acc.key,
    body: { slug, title: 'Paid consult', host_ids: [host], price_amount: 2500, price_currency: 'eur' },
  });
  expect(link.status, await link.clone().text()).toBe(201);
  return { key: acc.key, accountId: acc.id, host, slug };
}

async function bookPublic(s: Setup, start: string, extra: Record<string, unknown> = {}) {
  return t.call('POST', `/v1/public/links/${s.slug}/bookings`, {
    body: { ...customer, start_time: start, ...extra },
  });
}

async function hold(s: Setup, start: string): Promise<Json> {
  const res = await bookPublic(s, start);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).booking;
}

async function get(s: Setup, id: string): Promise<Json> {
  const res = await t.call('GET', `/v1/bookings/${id}`, { token: s.key });
  expect(res.status).toBe(200);
  return (await res.json()).booking;
}

function sessionOf(bookingId: string) {
  const s = stripe.sessions().find((x) => x.metadata?.booking_id === bookingId);
  if (!s) throw new Error(`no session for ${bookingId}`);
  return s;
}

const drain = () => t.ctx.jobs.drain();

describe('a priced link', () => {
  it('holds the time as pending_payment with a Checkout Session, and confirms it when paid: one booking.created and one booking.confirmed with amount and currency', async () => {
    const s = await pricedLink();
    const b = await hold(s, '2026-03-03T10:00:00Z');
    expect(b).toMatchObject({
      status: 'pending_payment',
      payment_amount: 2500,
      payment_currency: 'eur',
      payment_expires_at: '2026-03-02T06:30:00.000Z',
    });
    expect(b.checkout_url).toMatch(/\/pay\/cs_/);
    const session = sessionOf(b.id);
    expect(session).toMatchObject({
      mode: 'payment',
      client_reference_id: b.id,
      amount_total: 2500,
      currency: 'eur',
      customer_email: 'ada@example.com',
      account: null,
    });
    expect(session.success_url).toContain(`/book/${s.slug}?booking=${b.id}&payment=success`);
    // The time is held: nobody else gets it.
    expect((await bookPublic(s, '2026-03-03T10:00:00Z')).status).toBe(409);
    // Not announced before payment.
    expect(await t.events(s.accountId, 'booking.created')).toHaveLength(0);

    const delivery = await stripe.pay(session.id);
    expect(delivery.status).toBe(200);
    const paid = await get(s, b.id);
    expect(paid).toMatchObject({ status: 'confirmed', checkout_url: null, payment_expires_at: null });
    const confirmed = await t.events(s.accountId, 'booking.confirmed');
    expect(confirmed).toHaveLength(1);
    expect(confirmed[0]!.booking).toMatchObject({
      id: b.id,
      status: 'confirmed',
      payment_amount: 2500,
      payment_currency: 'eur',
    });
    expect(await t.events(s.accountId, 'booking.created')).toHaveLength(1);
    const mails = await t.ctx.modules.mail.listFor(b.id);
    expect(mails.map((m) => m.kind)).toEqual(['booking.confirmation', 'booking.confirmation']);
  });

  it('takes each Stripe event once: a redelivered event is a duplicate and changes nothing', async () => {
    const s = await pricedLink();
    const b = await hold(s, '2026-03-03T11:00:00Z');
    const first = await stripe.pay(sessionOf(b.id).id);
    const again = await stripe.redeliver(first.event.id);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ received: true, duplicate: true });
    const racing = await Promise.all([1, 2, 3].map(() => stripe.redeliver(first.event.id)));
    expect(racing.every((d) => d.status === 200)).toBe(true);
    expect(await t.events(s.accountId, 'booking.confirmed')).toHaveLength(1);
  });

  it('handles events in any order: an expiry before the payment releases the time, the payment then takes it again', async () => {
    const s = await pricedLink();
    const b = await hold(s, '2026-03-03T12:00:00Z');
    const session = sessionOf(b.id);
    stripe.deliverNothing = true;
    await stripe.pay(session.id); // held back
    stripe.deliverNothing = false;
    const completed = stripe.pending[0]!;
    // An expiry of the same session arriving first (as if Stripe's events crossed).
    const expired = await stripe.deliver({
      ...completed,
      id: 'evt_crossed_expiry',
      type: 'checkout.session.expired',
      data: { object: { ...completed.data.object, status: 'expired', payment_status: 'unpaid' } },
    });
    expect(expired.status).toBe(200);
    expect((await get(s, b.id)).status).toBe('expired');
    await stripe.flush();
    expect((await get(s, b.id)).status).toBe('confirmed');
    expect(await t.events(s.accountId, 'booking.confirmed')).toHaveLength(1);
    // Held again: the time is not bookable.
    expect((await bookPublic(s, '2026-03-03T12:00:00Z')).status).toBe(409);
  });

  it('waits for a delayed payment method: completed but unpaid keeps the hold; async success confirms, async failure releases', async () => {
    const s = await pricedLink();
    const ok = await hold(s, '2026-03-03T16:00:00Z');
    await stripe.pay(sessionOf(ok.id).id, { async: true });
    expect((await get(s, ok.id)).status).toBe('pending_payment');
    await stripe.asyncSucceed(sessionOf(ok.id).id);
    expect((await get(s, ok.id)).status).toBe('confirmed');

    const failing = await hold(s, '2026-03-03T09:00:00Z');
    await stripe.pay(sessionOf(failing.id).id, { async: true });
    await stripe.asyncFail(sessionOf(failing.id).id);
    expect((await get(s, failing.id)).status).toBe('expired');
    expect((await bookPublic(s, '2026-03-03T09:00:00Z')).status).toBe(201); // the time is free again
    expect(await t.events(s.accountId, 'booking.confirmed')).toHaveLength(1);
  });

  it('refuses a bad signature, a wrong secret and a stale timestamp with 400 problem+json', async () => {
    const s = await pricedLink();
    const b = await hold(s, '2026-03-03T13:00:00Z');
    stripe.deliverNothing = true;
    await stripe.pay(sessionOf(b.id).id);
    stripe.deliverNothing = false;
    const event = stripe.pending[0]!;
    for (const opts of [
      { secret: 'whsec_wrong' },
      { timestampSeconds: Math.floor(clock.nowMs() / 1000) - 301 },
      { signatureHeader: 't=1,v1=deadbeef' },
      { signatureHeader: '' },
    ]) {
      const d = await stripe.deliver(event, opts);
      expect(d.status).toBe(400);
      const problem = JSON.parse(d.body);
      expect(problem).toMatchObject({ status: 400, code: 'invalid_signature' });
      expect(problem.request_id).toMatch(/^req_/);
    }
    expect((await get(s, b.id)).status).toBe('pending_payment');
    const raw = await fetch(`${t.url}/v1/payments/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"not": "signed"',
    });
    expect(raw.status).toBe(400);
    expect(raw.headers.get('content-type')).toContain('application/problem+json');
  });

  it('ends an unpaid hold on its own: the session is expired at Stripe, the time released and offered to the waitlist', async () => {
    const s = await pricedLink();
    const join = await t.call('POST', `/v1/public/links/${s.slug}/waitlist`, {
      body: {
        customer_email: 'grace@example.com',
        customer_name: 'Grace',
        preferred_from: '2026-03-03T09:00:00Z',
        preferred_to: '2026-03-03T17:00:00Z',
      },
    });
    expect(join.status).toBe(201);
    const b = await hold(s, '2026-03-03T14:00:00Z');
    clock.advance(29 * MINUTE);
    await drain();
    expect((await get(s, b.id)).status).toBe('pending_payment');
    clock.advance(2 * MINUTE);
    await drain();
    await stripe.settle();
    expect((await get(s, b.id)).status).toBe('expired');
    expect(sessionOf(b.id).status).toBe('expired');
    const waitlist = await t.call('GET', `/v1/booking-links/${await linkId(s)}/waitlist`, { token: s.key });
    const entries: Json[] = (await waitlist.json()).waitlist_entries;
    expect(entries.find((e) => e.customer_email === 'grace@example.com')?.status).toBe('offered');
  });

  it('refunds a payment that arrives after the hold ended and the time went to someone else, and mails the customer', async () => {
    const s = await pricedLink();
    const b = await hold(s, '2026-03-03T15:00:00Z');
    const session = sessionOf(b.id);
    clock.advance(31 * MINUTE);
    stripe.failNext(3, 503); // Stripe unreachable when the hold ends: released without expiring the session
    await drain();
    expect((await get(s, b.id)).status).toBe('expired');
    const other = await t.call('POST', '/v1/bookings', {
      token: s.key,
      body: {
        principal_id: s.host,
        start_time: '2026-03-03T15:00:00Z',
        customer_email: 'bob@example.com',
        customer_name: 'Bob',
      },
    });
    expect(other.status).toBe(201);

    const late = await stripe.pay(session.id); // still payable: the session outlives the hold by 2 min
    expect(late.status).toBe(200);
    let after = await get(s, b.id);
    expect(after).toMatchObject({ status: 'expired', refund_status: 'pending' });
    await drain();
    after = await get(s, b.id);
    expect(after.refund_status).toBe('succeeded');
    expect(stripe.refunds()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ payment_intent: expect.stringMatching(/^pi_/), amount: 2500 }),
      ]),
    );
    expect((await t.ctx.modules.mail.listFor(b.id)).map((m) => m.kind)).toEqual(['booking.payment_refunded']);
    expect(await t.events(s.accountId, 'booking.confirmed')).toHaveLength(0);
    const live = await t.ctx.db
      .selectFrom('booking_occupancy')
      .select('owner_id')
      .where('principal_id', '=', s.host)
      .execute();
    expect(live).toHaveLength(1); // Bob's booking only: never two
  });

  it('refunds a paid booking in full when it is cancelled, once', async () => {
    const s = await pricedLink();
    const b = await hold(s, '2026-03-04T10:00:00Z');
    await stripe.pay(sessionOf(b.id).id);
    const res = await t.call('DELETE', `/v1/bookings/${b.id}`, { token: s.key });
    expect(res.status).toBe(200);
    expect((await res.json()).booking).toMatchObject({ status: 'cancelled', refund_status: 'pending' });
    await drain();
    expect((await get(s, b.id)).refund_status).toBe('succeeded');
    const pi = stripe.paymentIntents().find((p) => p.metadata?.booking_id === b.id);
    expect(pi?.amount_refunded).toBe(2500);
    // A second cancel answers the cancelled booking and refunds nothing more.
    await t.call('DELETE', `/v1/bookings/${b.id}`, { token: s.key });
    await drain();
    expect(stripe.refunds().filter((r) => r.payment_intent === pi?.id)).toHaveLength(1);
  });

  it('answers 503 payments_unavailable when Stripe fails, and leaves no time held', async () => {
    const s = await pricedLink();
    stripe.failNext(3, 500);
    const res = await bookPublic(s, '2026-03-04T11:00:00Z');
    expect(res.status).toBe(503);
    const problem = await res.json();
    expect(problem).toMatchObject({ code: 'payments_unavailable' });
    expect(res.headers.get('retry-after')).toBeTruthy();
    const again = await bookPublic(s, '2026-03-04T11:00:00Z');
    expect(again.status).toBe(201);
  });

  it('cancelling a pending booking expires its session and announces nothing', async () => {
    const s = await pricedLink();
    const b = await hold(s, '2026-03-04T12:00:00Z');
    const res = await t.call('DELETE', `/v1/bookings/${b.id}`, { token: s.key });
    expect((await res.json()).booking.status).toBe('cancelled');
    await stripe.settle();
    expect(sessionOf(b.id).status).toBe('expired');
    expect(await t.events(s.accountId, 'booking.cancelled')).toHaveLength(0);
  });
});

describe('Stripe Connect', () => {
  it('creates the connected account once, refuses paid bookings until it is ready, then charges it with the platform fee', async () => {
    const s = await pricedLink();
    const first = await t.call('POST', '/v1/stripe/connect', { token: s.key, body: {} });
    expect(first.status, await first.clone().text()).toBe(200);
    const connected = await first.json();
    expect(connected).toMatchObject({ ready: false, charges_enabled: false });
    expect(connected.stripe_account_id).toMatch(/^acct_/);
    expect(connected.onboarding_url).toContain('/onboard/');
    const againRes = await t.call('POST', '/v1/stripe/connect', { token: s.key });
    expect(againRes.status, await againRes.clone().text()).toBe(200);
    const again = await againRes.json();
    expect(again.stripe_account_id).toBe(connected.stripe_account_id);
    expect(stripe.accounts().filter((a) => a.metadata?.kairos_account_id === s.accountId)).toHaveLength(1);

    const refused = await bookPublic(s, '2026-03-05T10:00:00Z');
    expect(refused.status).toBe(422);
    expect((await refused.json()).code).toBe('payments_not_ready');

    // Connect events may come from a separate endpoint signed with its own secret.
    stripe.deliverNothing = true;
    await stripe.updateAccount(connected.stripe_account_id, {
      charges_enabled: true,
      details_submitted: true,
      payouts_enabled: true,
    });
    stripe.deliverNothing = false;
    const update = await stripe.deliver(stripe.pending.at(-1)!, { secret: 'whsec_connect_endpoint' });
    expect(update.status).toBe(200);
    const account = await (await t.call('GET', '/v1/stripe/account', { token: s.key })).json();
    expect(account).toMatchObject({ ready: true, charges_enabled: true, details_submitted: true });

    const b = await hold(s, '2026-03-05T10:00:00Z');
    expect(sessionOf(b.id)).toMatchObject({
      account: connected.stripe_account_id,
      application_fee_amount: 125,
    });
    await stripe.pay(sessionOf(b.id).id);
    expect((await get(s, b.id)).status).toBe('confirmed');
  });

  it('GET /v1/stripe/account is 404 before connecting', async () => {
    const s = await pricedLink();
    const res = await t.call('GET', '/v1/stripe/account', { token: s.key });
    expect(res.status).toBe(404);
  });
});

async function linkId(s: Setup): Promise<string> {
  const res = await t.call('GET', '/v1/booking-links', { token: s.key });
  const body = await res.json();
  return (body.booking_links as Json[]).find((l) => l.slug === s.slug)!.id;
}
