/**
 * Paid bookings and the waitlist in test mode (docs/api.md#test-mode, #payments, #waitlist), over HTTP
 * with the Stripe emulator holding both a live and a test key: test mode calls Stripe with the test
 * key only, and its payment holds and waitlist offers run on the account's test clock — an advance
 * ends them, at their own time, before it answers — while live bookings are left alone.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type StripeEmulator, startStripeEmulator } from '../../../test/emulators/stripe.js';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { advanceTestClock, testKeyFor } from '../../../test/helpers/test-mode.js';
import { FakeClock } from '../../platform/clock.js';
import type { MailIntent, MailMessage } from '../mail/api.js';

// Monday 2 March 2026, 06:00 UTC; hosts work Mon–Fri 09:00–17:00 UTC.
const T0 = '2026-03-02T06:00:00.000Z';
const clock = new FakeClock(T0);
const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };
const LIVE_KEY = 'sk_live_kairos';
const TEST_KEY = 'sk_test_kairos_test_mode';

let stripe: StripeEmulator;
let t: TestApp;

beforeAll(async () => {
  stripe = await startStripeEmulator({
    now: () => clock.nowMs(),
    secretKey: LIVE_KEY,
    webhookSecret: 'whsec_live_endpoint',
    testSecretKey: TEST_KEY,
    testWebhookSecret: 'whsec_test_endpoint',
  });
  t = await startTestApp({
    clock,
    env: {
      STRIPE_SECRET_KEY: LIVE_KEY,
      STRIPE_WEBHOOK_SECRET: 'whsec_live_endpoint',
      STRIPE_TEST_SECRET_KEY: TEST_KEY,
      STRIPE_TEST_WEBHOOK_SECRET: 'whsec_test_endpoint',
      STRIPE_API_URL: stripe.url,
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
});

/**
 * Marks objects a test key made as test mode's. Until the hosts/links and bookings write paths store
 * the actor's mode themselves (other parts of this change) they are written live; once they do, this
 * changes nothing.
 */
async function ofTestMode(app: TestApp, o: { hosts?: string[]; slug?: string; booking?: string }) {
  const db = app.ctx.db;
  for (const id of o.hosts ?? [])
    await sql`UPDATE principals SET livemode = false WHERE id = ${id}`.execute(db);
  if (o.slug) await sql`UPDATE booking_links SET livemode = false WHERE slug = ${o.slug}`.execute(db);
  if (o.booking) {
    await sql`UPDATE bookings SET livemode = false WHERE id = ${o.booking}`.execute(db);
    await sql`UPDATE booking_occupancy SET livemode = false WHERE owner_id = ${o.booking}`.execute(db);
  }
}

interface Setup {
  liveKey: string;
  testKey: string;
  accountId: string;
  host: string;
  slug: string;
  linkId: string;
}

let slugs = 0;
/** A host and a link made with `token` (priced 25.00 EUR unless free). */
async function linkOf(app: TestApp, token: string, priced = true) {
  const res = await app.call('POST', '/v1/hosts', {
    token,
    body: { display_name: 'Host', email: 'host@kairos.example', timezone: 'UTC' },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const host: string = (await res.json()).host.principal_id;
  const slug = `tm-paid-${++slugs}`;
  const link = await app.call('POST', '/v1/booking-links', {
    token,
    body: {
      slug,
      title: 'Consult',
      host_ids: [host],
      ...(priced ? { price_amount: 2500, price_currency: 'eur' } : {}),
    },
  });
  expect(link.status, await link.clone().text()).toBe(201);
  return { host, slug, linkId: (await link.json()).booking_link.id as string };
}

/** An account with a test key, a test host and a test link. */
async function testLink(app: TestApp, priced = true): Promise<Setup> {
  const acc = await app.account();
  const test = await testKeyFor(app, acc.key);
  const l = await linkOf(app, test.key, priced);
  await ofTestMode(app, { hosts: [l.host], slug: l.slug });
  return { liveKey: acc.key, testKey: test.key, accountId: acc.id, ...l };
}

async function book(app: TestApp, token: string, linkId: string, start: string) {
  return app.call('POST', '/v1/bookings', {
    token,
    body: { booking_link_id: linkId, start_time: start, ...customer },
  });
}

async function getBooking(token: string, id: string): Promise<Json> {
  const res = await t.call('GET', `/v1/bookings/${id}`, { token });
  expect(res.status).toBe(200);
  return (await res.json()).booking;
}

function sessionOf(bookingId: string) {
  const s = stripe.sessions().find((x) => x.metadata?.booking_id === bookingId);
  if (!s) throw new Error(`no session for ${bookingId}`);
  return s;
}

/** The secret keys the emulator was called with about a session. */
function keysUsedFor(sessionId: string): (string | null)[] {
  return stripe.requests
    .filter((r) => r.path.includes(sessionId) || r.params.client_reference_id === sessionId)
    .map((r) => r.apiKey);
}

describe('paid bookings in test mode', () => {
  it('creates the Checkout Session of a test booking with the test Stripe key, never the live one', async () => {
    const s = await testLink(t);
    const res = await book(t, s.testKey, s.linkId, '2026-03-03T10:00:00Z');
    expect(res.status, await res.clone().text()).toBe(201);
    const b = (await res.json()).booking;
    expect(b).toMatchObject({ status: 'pending_payment', payment_expires_at: '2026-03-02T06:30:00.000Z' });
    const session = sessionOf(b.id);
    expect(session.livemode).toBe(false);
    const create = stripe.requests.find(
      (r) => r.path === '/v1/checkout/sessions' && r.params.client_reference_id === b.id,
    );
    expect(create?.apiKey).toBe(TEST_KEY);
    // Test mode pays the platform's test account: no connected account, no fee.
    expect(session.account).toBeNull();
  });

  it('ends a test hold when the test clock passes it, before the advance answers, at the hold’s end; a live hold in the same account is untouched', async () => {
    const s = await testLink(t);
    const live = await linkOf(t, s.liveKey);
    const liveRes = await book(t, s.liveKey, live.linkId, '2026-03-03T10:00:00Z');
    expect(liveRes.status, await liveRes.clone().text()).toBe(201);
    const liveBooking = (await liveRes.json()).booking;
    expect(sessionOf(liveBooking.id).livemode).toBe(true);

    const res = await book(t, s.testKey, s.linkId, '2026-03-03T11:00:00Z');
    expect(res.status, await res.clone().text()).toBe(201);
    const b = (await res.json()).booking;
    await ofTestMode(t, { booking: b.id });
    const holdEnd = b.payment_expires_at;
    expect(holdEnd).toBe('2026-03-02T06:30:00.000Z');
    const session = sessionOf(b.id);

    // Not yet: 29 minutes on the test clock.
    await advanceTestClock(t, s.testKey, 29 * 60);
    expect((await getBooking(s.testKey, b.id)).status).toBe('pending_payment');

    const clockNow = await advanceTestClock(t, s.testKey, 2 * 60);
    expect(clockNow.now).toBe('2026-03-02T06:31:00.000Z');
    // Done before the advance answered, as at the hold's end on the test clock (real time: 06:00).
    const expired = await getBooking(s.testKey, b.id);
    expect(expired).toMatchObject({ status: 'expired', checkout_url: null, updated_at: holdEnd });
    expect(sessionOf(b.id).status).toBe('expired');
    expect(keysUsedFor(session.id).every((k) => k === TEST_KEY)).toBe(true);
    expect(keysUsedFor(session.id)).toContain(TEST_KEY);
    // The time is free again for test mode.
    const again = await book(t, s.testKey, s.linkId, '2026-03-03T11:00:00Z');
    expect(again.status, await again.clone().text()).toBe(201);
    // Stripe's checkout.session.expired, signed with the test endpoint's secret, is taken and changes nothing.
    await stripe.settle();
    const delivery = stripe.deliveries.find(
      (d) => d.event.type === 'checkout.session.expired' && d.event.data.object.id === session.id,
    );
    expect(delivery).toMatchObject({ status: 200 });
    expect(delivery?.event.livemode).toBe(false);
    // Not announced: a hold that ends announces nothing, in either mode.
    expect(await t.events(s.accountId, 'booking.created')).toHaveLength(0);

    // The live hold is untouched: live time did not move.
    await t.ctx.jobs.drain();
    expect((await getBooking(s.liveKey, liveBooking.id)).status).toBe('pending_payment');
    expect(sessionOf(liveBooking.id).status).toBe('open');
  });

  it('takes a test payment event for a test booking only: signed with the test secret it confirms the test booking, and it never touches a live one', async () => {
    const s = await testLink(t);
    const res = await book(t, s.testKey, s.linkId, '2026-03-03T13:00:00Z');
    const b = (await res.json()).booking;
    await ofTestMode(t, { booking: b.id });
    const delivery = await stripe.pay(sessionOf(b.id).id);
    expect(delivery.status).toBe(200);
    expect(delivery.event.livemode).toBe(false);
    expect((await getBooking(s.testKey, b.id)).status).toBe('confirmed');

    // A live booking's session paid, but the event signed as test mode's: the live booking stays held.
    const live = await linkOf(t, s.liveKey);
    const liveB = (await (await book(t, s.liveKey, live.linkId, '2026-03-03T14:00:00Z')).json()).booking;
    stripe.deliverNothing = true;
    try {
      await stripe.pay(sessionOf(liveB.id).id);
    } finally {
      stripe.deliverNothing = false;
    }
    const [event] = stripe.pending.splice(0);
    const forged = await stripe.deliver(event!, { secret: 'whsec_test_endpoint' });
    expect(forged.status).toBe(200);
    expect((await getBooking(s.liveKey, liveB.id)).status).toBe('pending_payment');
  });

  it('refuses a test key’s changes to the account’s Stripe Connect account (live only): 403 live_mode_only', async () => {
    const s = await testLink(t);
    const res = await t.call('POST', '/v1/stripe/connect', { token: s.testKey, body: {} });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('live_mode_only');
    expect(stripe.accounts()).toHaveLength(0);
  });
});

describe('a test-mode waitlist', () => {
  it('passes an offer of a test link on when the test clock passes its hold, before the advance answers, with the next entry’s offer mail of test mode', async () => {
    const s = await testLink(t, false);
    const res = await book(t, s.testKey, s.linkId, '2026-03-03T10:00:00Z');
    expect(res.status, await res.clone().text()).toBe(201);
    const b = (await res.json()).booking;
    await ofTestMode(t, { booking: b.id });
    for (const who of ['grace', 'alan']) {
      const join = await t.call('POST', `/v1/public/links/${s.slug}/waitlist`, {
        body: {
          customer_email: `${who}@example.com`,
          customer_name: who,
          preferred_from: '2026-03-03T09:00:00Z',
          preferred_to: '2026-03-03T17:00:00Z',
        },
      });
      expect(join.status, await join.clone().text()).toBe(201);
      expect((await join.json()).waitlist_entry.livemode).toBe(false);
    }
    const cancel = await t.call('DELETE', `/v1/bookings/${b.id}`, { token: s.testKey });
    expect(cancel.status, await cancel.clone().text()).toBe(200);
    await t.ctx.jobs.drain();

    const entries = async (): Promise<Json[]> => {
      const list = await t.call('GET', `/v1/booking-links/${s.linkId}/waitlist`, { token: s.testKey });
      expect(list.status).toBe(200);
      return (await list.json()).waitlist_entries;
    };
    const [grace, alan] = await entries();
    expect(grace).toMatchObject({ status: 'offered', livemode: false });
    expect(grace!.offer.expires_at).toBe('2026-03-02T06:15:00.000Z');
    expect(alan).toMatchObject({ status: 'waiting' });

    const enqueue = vi.spyOn(t.ctx.modules.mail, 'enqueue');
    try {
      await advanceTestClock(t, s.testKey, 16 * 60);
      const [g, a] = await entries();
      expect(g).toMatchObject({ status: 'expired', updated_at: '2026-03-02T06:15:00.000Z' });
      // Offered at the moment the first hold ran out, on the test clock.
      expect(a).toMatchObject({ status: 'offered', updated_at: '2026-03-02T06:15:00.000Z' });
      expect(a!.offer.expires_at).toBe('2026-03-02T06:30:00.000Z');
      const mails = enqueue.mock.calls.flatMap(([, m]) => m as (MailMessage | MailIntent)[]);
      const offer = mails.find((m) => m.kind === 'waitlist.offer' && m.to === 'alan@example.com');
      expect(offer?.livemode).toBe(false);
    } finally {
      enqueue.mockRestore();
    }
    const stored = await t.ctx.modules.mail.listFor(alan!.id);
    expect(stored.map((m) => m.kind)).toEqual(['waitlist.offer']);
  });
});

describe('test mode without STRIPE_TEST_SECRET_KEY', () => {
  let other: TestApp;
  beforeAll(async () => {
    other = await startTestApp({
      clock,
      env: {
        STRIPE_SECRET_KEY: LIVE_KEY,
        STRIPE_WEBHOOK_SECRET: 'whsec_live_endpoint',
        STRIPE_API_URL: stripe.url,
      },
    });
  }, 60_000);
  afterAll(async () => {
    await other?.close();
  });

  it('answers 422 payments_not_configured for a priced test link and never calls Stripe with the live key', async () => {
    // A priced test link cannot be made …
    const acc = await other.account();
    const test = await testKeyFor(other, acc.key);
    const host = (
      await (
        await other.call('POST', '/v1/hosts', {
          token: test.key,
          body: { display_name: 'Host', timezone: 'UTC' },
        })
      ).json()
    ).host.principal_id;
    const refused = await other.call('POST', '/v1/booking-links', {
      token: test.key,
      body: {
        slug: `tm-unpriced-${++slugs}`,
        title: 'Consult',
        host_ids: [host],
        price_amount: 2500,
        price_currency: 'eur',
      },
    });
    expect(refused.status).toBe(422);
    expect((await refused.json()).code).toBe('payments_not_configured');
    // … and one priced when the server had the key (here: in the store) is not booked without it.
    const s = await testLink(other, false);
    await sql`UPDATE booking_links SET price_amount = 2500, price_currency = 'eur' WHERE id = ${s.linkId}`.execute(
      other.ctx.db,
    );
    const before = stripe.requests.length;
    const res = await book(other, s.testKey, s.linkId, '2026-03-03T10:00:00Z');
    expect(res.status).toBe(422);
    expect((await res.json()).code).toBe('payments_not_configured');
    expect(stripe.requests.length).toBe(before);
    // Live mode still takes payments with the live key.
    const live = await linkOf(other, s.liveKey);
    const ok = await book(other, s.liveKey, live.linkId, '2026-03-03T10:00:00Z');
    expect(ok.status, await ok.clone().text()).toBe(201);
  });
});
