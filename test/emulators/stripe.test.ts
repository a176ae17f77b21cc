/**
 * The Stripe emulator, driven by the real `stripe` package (v23) over HTTP: what the package sends
 * must be understood, and what the emulator answers must be what the package expects from Stripe.
 * Webhook deliveries are verified with the package's own `webhooks.constructEvent`.
 */
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { type StripeEmulator, startStripeEmulator } from './stripe.js';

const T0 = Date.UTC(2030, 0, 7, 9, 0, 0);
let clock = T0;
const nowSec = () => Math.floor(clock / 1000);

let emu: StripeEmulator;
let receiver: Receiver;

function client(extra: { maxNetworkRetries?: number; stripeAccount?: string; key?: string } = {}): Stripe {
  const config: ConstructorParameters<typeof Stripe>[1] = {
    host: emu.host,
    port: emu.port,
    protocol: emu.protocol,
  };
  if (extra.maxNetworkRetries !== undefined) config.maxNetworkRetries = extra.maxNetworkRetries;
  if (extra.stripeAccount !== undefined) config.stripeAccount = extra.stripeAccount;
  return new Stripe(extra.key ?? emu.secretKey, config);
}

function sessionParams(
  over: Partial<Stripe.Checkout.SessionCreateParams> = {},
): Stripe.Checkout.SessionCreateParams {
  return {
    mode: 'payment',
    line_items: [
      {
        price_data: { currency: 'eur', unit_amount: 4500, product_data: { name: 'Consultation (60 min)' } },
        quantity: 1,
      },
    ],
    success_url: 'https://kairos.example/bookings/b1/paid',
    cancel_url: 'https://kairos.example/bookings/b1/cancelled',
    client_reference_id: 'b1',
    customer_email: 'ada@example.com',
    metadata: { booking_id: 'b1' },
    expires_at: nowSec() + 3600,
    ...over,
  };
}

async function rejection(p: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof Stripe.errors.StripeError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

beforeAll(async () => {
  emu = await startStripeEmulator({ now: () => clock });
  receiver = await startReceiver();
});

afterEach(async () => {
  await emu.settle();
  emu.reset();
  emu.setWebhookUrl(null);
  receiver.received.length = 0;
  receiver.setBehaviour(() => ({ status: 200 }));
  clock = T0;
});

afterAll(async () => {
  await emu?.close();
  await receiver?.close();
});

describe('Stripe emulator: Checkout Sessions through the stripe package', () => {
  it('creates a session from form-encoded price_data, metadata and expires_at, and reads it back', async () => {
    const stripe = client();
    const created = await stripe.checkout.sessions.create(sessionParams());
    expect(created.id).toMatch(/^cs_test_/);
    expect(created).toMatchObject({
      object: 'checkout.session',
      status: 'open',
      payment_status: 'unpaid',
      amount_total: 4500,
      currency: 'eur',
      client_reference_id: 'b1',
      customer_email: 'ada@example.com',
      metadata: { booking_id: 'b1' },
      expires_at: nowSec() + 3600,
      created: nowSec(),
      payment_intent: null,
      livemode: false,
      url: `${emu.url}/pay/${created.id}`,
    });
    expect(created.lastResponse.requestId).toMatch(/^req_/);
    expect(created.lastResponse.headers['content-type']).toBe('application/json');

    // What went over the wire: bracket notation, parsed into nested objects.
    const logged = emu.requests.at(-1);
    expect(logged).toMatchObject({
      method: 'POST',
      path: '/v1/checkout/sessions',
      headers: { stripeAccount: null },
      status: 200,
    });
    expect(logged?.headers.idempotencyKey).toMatch(/^stripe-node-retry-/);
    expect(logged?.params).toMatchObject({
      line_items: [{ price_data: { currency: 'eur', unit_amount: '4500' }, quantity: '1' }],
      metadata: { booking_id: 'b1' },
    });

    const read = await stripe.checkout.sessions.retrieve(created.id);
    const { lastResponse: _a, ...readBody } = read;
    const { lastResponse: _b, ...createdBody } = created;
    expect(readBody).toEqual(createdBody);
    expect((await fetch(created.url as string)).status).toBe(200);
  });

  it('answers 400 with the param for missing and invalid parameters', async () => {
    const stripe = client();
    const soon = await rejection(
      stripe.checkout.sessions.create(sessionParams({ expires_at: nowSec() + 600 })),
    );
    expect(soon).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(soon).toMatchObject({ statusCode: 400, param: 'expires_at', rawType: 'invalid_request_error' });
    const late = await rejection(
      stripe.checkout.sessions.create(sessionParams({ expires_at: nowSec() + 90_000 })),
    );
    expect(late.param).toBe('expires_at');

    const zero = await rejection(
      stripe.checkout.sessions.create(
        sessionParams({
          line_items: [
            { price_data: { currency: 'eur', unit_amount: 0, product_data: { name: 'x' } }, quantity: 1 },
          ],
        }),
      ),
    );
    expect(zero.param).toBe('line_items[0][price_data][unit_amount]');

    const { success_url: _s, ...noSuccess } = sessionParams();
    const missing = await rejection(stripe.checkout.sessions.create(noSuccess));
    expect(missing).toMatchObject({ param: 'success_url', code: 'parameter_missing' });

    const unknown = await rejection(
      stripe.rawRequest('POST', '/v1/checkout/sessions', { ...sessionParams(), colour: 'blue' }),
    );
    expect(unknown).toMatchObject({ statusCode: 400, param: 'colour', code: 'parameter_unknown' });

    const fee = await rejection(
      stripe.checkout.sessions.create(
        sessionParams({ payment_intent_data: { application_fee_amount: 100 } }),
      ),
    );
    expect(fee).toMatchObject({ statusCode: 400, param: 'payment_intent_data[application_fee_amount]' });
    expect(emu.sessions()).toHaveLength(0);
  });

  it('expires an open session, delivers checkout.session.expired, and refuses to expire it again', async () => {
    emu.setWebhookUrl(receiver.url);
    const stripe = client();
    const s = await stripe.checkout.sessions.create(sessionParams());
    const expired = await stripe.checkout.sessions.expire(s.id);
    expect(expired).toMatchObject({ id: s.id, status: 'expired', url: null });
    await emu.settle();
    expect(receiver.received).toHaveLength(1);
    const event = JSON.parse(receiver.received[0]?.body ?? '{}');
    expect(event).toMatchObject({ type: 'checkout.session.expired', data: { object: { id: s.id } } });
    expect(event.request.id).toBe(expired.lastResponse.requestId);

    const again = await rejection(stripe.checkout.sessions.expire(s.id));
    expect(again).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((await stripe.checkout.sessions.retrieve(s.id)).status).toBe('expired');
    const unknown = await rejection(stripe.checkout.sessions.retrieve('cs_test_nope'));
    expect(unknown).toMatchObject({ statusCode: 404, code: 'resource_missing' });
  });
});

describe('Stripe emulator: idempotency', () => {
  it('answers the first answer again for a repeated Idempotency-Key, and rejects other parameters', async () => {
    const stripe = client();
    const first = await stripe.checkout.sessions.create(sessionParams(), { idempotencyKey: 'booking-b1' });
    const second = await stripe.checkout.sessions.create(sessionParams(), { idempotencyKey: 'booking-b1' });
    expect(second.id).toBe(first.id);
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(first.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    expect(emu.sessions()).toHaveLength(1);

    const other = await rejection(
      stripe.checkout.sessions.create(sessionParams({ client_reference_id: 'b2' }), {
        idempotencyKey: 'booking-b1',
      }),
    );
    expect(other).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(other.rawType).toBe('idempotency_error');
  });

  it('serves the package’s own retry of a lost answer from the idempotency store', async () => {
    const stripe = client({ maxNetworkRetries: 1 });
    emu.dropNextResponse(1);
    const s = await stripe.checkout.sessions.create(sessionParams());
    expect(emu.sessions()).toHaveLength(1);
    expect(emu.sessions()[0]?.id).toBe(s.id);
    const [a, b] = emu.requests;
    expect(emu.requests).toHaveLength(2);
    expect(a?.status).toBe(500);
    expect(b).toMatchObject({ status: 200, replayed: true });
    expect(b?.headers.idempotencyKey).toBe(a?.headers.idempotencyKey);
    expect(s.lastResponse.headers['idempotent-replayed']).toBe('true');
  });

  it('lets the package retry past an injected 503 without side effects', async () => {
    const stripe = client({ maxNetworkRetries: 2 });
    emu.failNext(1, 503);
    const s = await stripe.checkout.sessions.create(sessionParams());
    expect(emu.sessions().map((x) => x.id)).toEqual([s.id]);
    expect(emu.requests.map((r) => r.status)).toEqual([503, 200]);
    expect(emu.requests[1]?.replayed).toBe(false);
  });
});

describe('Stripe emulator: Connect, refunds and errors', () => {
  it('creates a session on a connected account with an application fee, scoped to that account', async () => {
    emu.setWebhookUrl(receiver.url);
    const platform = client();
    const acct = await platform.accounts.create({ type: 'express', email: 'coach@example.com' });
    const s = await platform.checkout.sessions.create(
      sessionParams({ payment_intent_data: { application_fee_amount: 450, metadata: { booking_id: 'b1' } } }),
      { stripeAccount: acct.id },
    );
    expect(emu.sessions()[0]).toMatchObject({ id: s.id, account: acct.id, application_fee_amount: 450 });
    expect(emu.requests.at(-1)?.headers.stripeAccount).toBe(acct.id);

    const hidden = await rejection(platform.checkout.sessions.retrieve(s.id));
    expect(hidden).toMatchObject({ statusCode: 404, code: 'resource_missing' });
    const connected = client({ stripeAccount: acct.id });
    expect((await connected.checkout.sessions.retrieve(s.id)).id).toBe(s.id);

    const delivery = await emu.pay(s.id);
    expect(delivery.status).toBe(200);
    expect(delivery.event.account).toBe(acct.id);
    const paid = await connected.checkout.sessions.retrieve(s.id, { expand: ['payment_intent'] });
    const pi = paid.payment_intent as Stripe.PaymentIntent;
    expect(pi).toMatchObject({ object: 'payment_intent', application_fee_amount: 450, status: 'succeeded' });
    expect(pi.metadata).toEqual({ booking_id: 'b1' });

    const unknownAccount = await rejection(
      platform.checkout.sessions.retrieve(s.id, {}, { stripeAccount: 'acct_nobody' }),
    );
    expect(unknownAccount.statusCode).toBe(403);
  });

  it('refunds a paid session’s payment intent once, then answers charge_already_refunded', async () => {
    const stripe = client();
    const s = await stripe.checkout.sessions.create(sessionParams());
    await emu.pay(s.id);
    const pi = (await stripe.checkout.sessions.retrieve(s.id)).payment_intent as string;
    expect(pi).toMatch(/^pi_/);
    const refund = await stripe.refunds.create(
      { payment_intent: pi, reason: 'requested_by_customer', metadata: { booking_id: 'b1' } },
      { idempotencyKey: 'refund-b1' },
    );
    expect(refund).toMatchObject({
      object: 'refund',
      amount: 4500,
      currency: 'eur',
      payment_intent: pi,
      status: 'succeeded',
      metadata: { booking_id: 'b1' },
    });
    expect(refund.id).toMatch(/^re_/);
    const replay = await stripe.refunds.create(
      { payment_intent: pi, reason: 'requested_by_customer', metadata: { booking_id: 'b1' } },
      { idempotencyKey: 'refund-b1' },
    );
    expect(replay.id).toBe(refund.id);

    const twice = await rejection(stripe.refunds.create({ payment_intent: pi }));
    expect(twice).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(twice).toMatchObject({ statusCode: 400, code: 'charge_already_refunded' });
    expect(emu.refunds()).toHaveLength(1);

    const unknown = await rejection(stripe.refunds.create({ payment_intent: 'pi_unknown' }));
    expect(unknown).toMatchObject({ statusCode: 404, code: 'resource_missing', param: 'payment_intent' });
  });

  it('creates accounts and onboarding links, and reports account.updated as a Connect event', async () => {
    emu.setWebhookUrl(receiver.url);
    const stripe = client();
    const acct = await stripe.accounts.create({
      controller: { stripe_dashboard: { type: 'express' }, fees: { payer: 'application' } },
      email: 'coach@example.com',
      metadata: { kairos_account: 'a1' },
    });
    expect(acct).toMatchObject({
      object: 'account',
      type: 'express',
      charges_enabled: false,
      payouts_enabled: false,
      details_submitted: false,
      metadata: { kairos_account: 'a1' },
    });
    expect(acct.id).toMatch(/^acct_/);
    const link = await stripe.accountLinks.create({
      account: acct.id,
      refresh_url: 'https://kairos.example/stripe/refresh',
      return_url: 'https://kairos.example/stripe/return',
      type: 'account_onboarding',
    });
    expect(link).toMatchObject({ object: 'account_link', url: `${emu.url}/onboard/${acct.id}` });
    expect(link.expires_at).toBeGreaterThan(link.created);
    expect((await fetch(link.url)).status).toBe(200);

    const delivery = await emu.updateAccount(acct.id, { charges_enabled: true, details_submitted: true });
    expect(delivery.status).toBe(200);
    expect(delivery.event).toMatchObject({
      type: 'account.updated',
      account: acct.id,
      data: {
        object: { id: acct.id, charges_enabled: true },
        previous_attributes: { charges_enabled: false },
      },
    });
    expect((await stripe.accounts.retrieve(acct.id)).charges_enabled).toBe(true);
  });

  it('maps a wrong key to StripeAuthenticationError and an injected 500 to StripeAPIError', async () => {
    const wrong = await rejection(
      client({ key: 'sk_test_wrong_key_1234' }).checkout.sessions.create(sessionParams()),
    );
    expect(wrong).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.message).toMatch(/^Invalid API Key provided: sk_test_\*+1234$/);

    const stripe = client({ maxNetworkRetries: 0 });
    emu.failNext(1, 500);
    const failed = await rejection(stripe.checkout.sessions.create(sessionParams()));
    expect(failed).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(failed).toMatchObject({ statusCode: 500, rawType: 'api_error' });
    expect(emu.sessions()).toHaveLength(0);

    emu.failNext(1, 429);
    const limited = await rejection(stripe.checkout.sessions.create(sessionParams()));
    expect(limited).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    expect((await stripe.checkout.sessions.create(sessionParams())).status).toBe('open');
  });
});

describe('Stripe emulator: signed webhook deliveries', () => {
  it('delivers checkout.session.completed that the package’s constructEvent accepts', async () => {
    emu.setWebhookUrl(receiver.url);
    receiver.setBehaviour(() => ({ status: 200, body: '{"received":true}' }));
    const stripe = client();
    const s = await stripe.checkout.sessions.create(sessionParams());
    const delivery = await emu.pay(s.id);
    expect(delivery).toMatchObject({ delivered: true, status: 200, body: '{"received":true}' });

    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0];
    if (!got) throw new Error('nothing received');
    expect(got.method).toBe('POST');
    expect(got.headers['content-type']).toMatch(/^application\/json/);
    const header = got.headers['stripe-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    // v23 takes receivedAt in milliseconds (it floors receivedAt / 1000).
    const receivedAt = clock + 5_000;
    const event = stripe.webhooks.constructEvent(
      got.body,
      header,
      emu.webhookSecret,
      300,
      undefined,
      receivedAt,
    );
    expect(event.type).toBe('checkout.session.completed');
    const session = event.data.object as Stripe.Checkout.Session;
    expect(session).toMatchObject({ id: s.id, status: 'complete', payment_status: 'paid' });
    expect(session.payment_intent).toMatch(/^pi_/);
    expect(event.id).toBe(emu.lastEvent()?.id);

    expect(() =>
      stripe.webhooks.constructEvent(got.body, header, 'whsec_other', 300, undefined, receivedAt),
    ).toThrow(Stripe.errors.StripeSignatureVerificationError);
    // A stale timestamp is outside the tolerance.
    expect(() =>
      stripe.webhooks.constructEvent(got.body, header, emu.webhookSecret, 300, undefined, clock + 301_000),
    ).toThrow(/tolerance/);
  });

  it('signs chosen secrets and timestamps, redelivers the same event, and holds events back', async () => {
    emu.setWebhookUrl(receiver.url);
    const stripe = client();
    const s1 = await stripe.checkout.sessions.create(sessionParams());
    const paid = await emu.pay(s1.id);

    const stale = await emu.deliver(paid.event, { timestampSeconds: nowSec() - 600 });
    expect(() =>
      stripe.webhooks.constructEvent(
        stale.payload,
        stale.signatureHeader,
        emu.webhookSecret,
        300,
        undefined,
        clock,
      ),
    ).toThrow(/tolerance/);
    const forged = await emu.deliver(paid.event, { secret: 'whsec_forged' });
    expect(() =>
      stripe.webhooks.constructEvent(
        forged.payload,
        forged.signatureHeader,
        emu.webhookSecret,
        300,
        undefined,
        clock,
      ),
    ).toThrow(Stripe.errors.StripeSignatureVerificationError);
    const raw = await emu.deliver(paid.event, { signatureHeader: 'garbage' });
    expect(receiver.received.at(-1)?.headers['stripe-signature']).toBe('garbage');
    expect(raw.status).toBe(200);

    const again = await emu.redeliver(paid.event.id);
    const dup = stripe.webhooks.constructEvent(
      again.payload,
      again.signatureHeader,
      emu.webhookSecret,
      300,
      undefined,
      clock,
    );
    expect(dup.id).toBe(paid.event.id);

    receiver.received.length = 0;
    emu.deliverNothing = true;
    const s2 = await stripe.checkout.sessions.create(sessionParams({ client_reference_id: 'b2' }));
    const heldPay = await emu.pay(s2.id, { async: true });
    expect(heldPay).toMatchObject({ held: true, delivered: false, status: 0 });
    await emu.asyncSucceed(s2.id);
    expect(emu.pending.map((e) => e.type)).toEqual([
      'checkout.session.completed',
      'checkout.session.async_payment_succeeded',
    ]);
    expect(receiver.received).toHaveLength(0);
    const flushed = await emu.flush({ reverse: true });
    expect(flushed.map((d) => d.status)).toEqual([200, 200]);
    expect(emu.pending).toHaveLength(0);
    const types = receiver.received.map((r) => JSON.parse(r.body).type);
    expect(types).toEqual(['checkout.session.async_payment_succeeded', 'checkout.session.completed']);
    const completed = JSON.parse(receiver.received[1]?.body ?? '{}');
    expect(completed.data.object.payment_status).toBe('unpaid');
  });

  it('reports the receiver’s answer and async payment failures', async () => {
    emu.setWebhookUrl(receiver.url);
    receiver.setBehaviour(() => ({ status: 400, body: 'bad signature' }));
    const stripe = client();
    const s = await stripe.checkout.sessions.create(sessionParams());
    const d = await emu.pay(s.id, { async: true });
    expect(d).toMatchObject({ delivered: true, status: 400, body: 'bad signature' });
    receiver.setBehaviour(() => ({ status: 200 }));
    const failed = await emu.asyncFail(s.id);
    expect(failed.event.type).toBe('checkout.session.async_payment_failed');
    expect(failed.event.data.object).toMatchObject({ status: 'complete', payment_status: 'unpaid' });
    const refund = await rejection(
      stripe.refunds.create({ payment_intent: emu.paymentIntents()[0]?.id ?? '' }),
    );
    expect(refund.statusCode).toBe(400);
  });
});
