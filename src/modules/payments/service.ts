/**
 * Stripe for Kairos (docs/design.md#paid-bookings), through the `stripe` package
 * (STRIPE_API_URL points it at another host, e.g. the test emulator):
 *
 * - Checkout Sessions for paid bookings (created idempotently per booking, on the account's ready
 *   connected account with the platform fee when it has one), expired when a hold ends, refunds.
 * - `POST /v1/payments/stripe/webhook`: the raw body's `Stripe-Signature` is verified with the
 *   package's own verifier (5-minute tolerance, on the injected clock); each event is recorded by id in
 *   the transaction that handles it, so it takes effect once (a duplicate, concurrent or later, finds
 *   the id taken), whatever the order. Handlers come from other modules (`stripeEvents`); this module
 *   handles `account.updated` itself (Connect readiness).
 * - Connect (Express): one connected account per Kairos account, created idempotently, onboarding
 *   links, readiness = charges enabled and details submitted.
 * - Test mode (docs/api.md#test-mode): each call takes the mode of its booking and uses that mode's
 *   key — STRIPE_TEST_SECRET_KEY for test, never the live key. A delivery's mode is the mode of the
 *   secret that verifies it (STRIPE_TEST_WEBHOOK_SECRET: test), and handlers act on that mode's
 *   objects only. Connect stays live: test-mode payments go to the platform's test account.
 */
import Stripe from 'stripe';
import type { Config } from '../../config.js';
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import type { Actor } from '../../platform/actor.js';
import { AppError, NotFound, Unprocessable } from '../../platform/errors.js';
import type { Extensions, Platform } from '../module.js';
import type { ConnectBody } from './schemas.js';
import type {
  CheckoutInput,
  CheckoutSession,
  Payee,
  PaymentsApi,
  RefundInput,
  RefundOutcome,
  SessionState,
  StripeEventHandler,
} from './api.js';
import { liveModeOnly, PaymentsUnavailable, paymentsNotConfigured, stripeNotConfigured } from './errors.js';
import * as repo from './repo.js';

/** Stripe's signature tolerance: events signed longer ago than this are refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;
/** The session outlives the hold by this much: Stripe refuses sessions shorter than 30 minutes. */
const SESSION_MARGIN_MS = 2 * 60_000;

/** What payments take from the platform, and the `stripeEvents` handlers other modules contribute. */
export interface PaymentsDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'stripe' | 'baseUrl'>;
  extensions: Pick<Extensions, 'all'>;
  log: { error(obj: object, msg: string): void };
}

/** The Stripe client of a mode's key and the API URL (null without that key). */
export function stripeClient(config: Config['stripe'], livemode = true): Stripe | null {
  const key = livemode ? config.secretKey : config.testSecretKey;
  if (!key) return null;
  const api = new URL(config.apiUrl);
  const protocol = api.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(key, {
    host: api.hostname,
    port: api.port || (protocol === 'http' ? 80 : 443),
    protocol,
    maxNetworkRetries: 2,
    timeout: 15_000,
    telemetry: false,
    appInfo: { name: 'Kairos' },
  });
}

export interface ConnectAnswer {
  stripe_account_id: string;
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
  ready: boolean;
}

type AccountRow = repo.AccountRow;

function present(row: AccountRow): ConnectAnswer {
  return {
    stripe_account_id: row.stripe_account_id,
    charges_enabled: row.charges_enabled,
    payouts_enabled: row.payouts_enabled,
    details_submitted: row.details_submitted,
    ready: row.charges_enabled && row.details_submitted,
  };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class PaymentsService implements PaymentsApi {
  /** Live mode's client (STRIPE_SECRET_KEY). */
  private readonly stripe: Stripe | null;
  /** Test mode's client (STRIPE_TEST_SECRET_KEY): the only one test mode ever uses. */
  private readonly testStripe: Stripe | null;

  private readonly deps: PaymentsDeps;

  constructor(
    platform: Pick<Platform, 'db' | 'clock' | 'config' | 'log'>,
    extensions: Pick<Extensions, 'all'>,
  ) {
    const { db, clock, config, log } = platform;
    this.deps = { db, clock, config, extensions, log };
    this.stripe = stripeClient(config.stripe, true);
    this.testStripe = stripeClient(config.stripe, false);
  }

  sessionState(session: Stripe.Checkout.Session): SessionState {
    const status =
      session.status === 'complete' ? 'complete' : session.status === 'expired' ? 'expired' : 'open';
    const pi = session.payment_intent;
    return {
      status,
      paid: session.payment_status === 'paid',
      paymentIntent: typeof pi === 'string' ? pi : (pi?.id ?? null),
    };
  }

  configured(livemode = true): boolean {
    return (livemode ? this.stripe : this.testStripe) !== null;
  }

  /** The mode's client; 422 `payments_not_configured` without its key (test mode never falls back to live). */
  private client(livemode: boolean): Stripe {
    const stripe = livemode ? this.stripe : this.testStripe;
    if (!stripe) throw paymentsNotConfigured();
    return stripe;
  }

  async payee(accountId: string, livemode = true): Promise<Payee> {
    this.client(livemode);
    // Connect is live only: a test-mode payment is the platform's, on its test account.
    if (!livemode) return { stripeAccount: null };
    const row = await this.account(accountId);
    if (!row) return { stripeAccount: null };
    if (!(row.charges_enabled && row.details_submitted)) {
      throw new Unprocessable(
        'This account’s Stripe account cannot take payments yet: finish onboarding (POST /v1/stripe/connect)',
        { code: 'payments_not_ready' },
      );
    }
    return { stripeAccount: row.stripe_account_id };
  }

  async createCheckout(input: CheckoutInput): Promise<CheckoutSession> {
    const stripe = this.client(input.livemode);
    const account = input.payee.stripeAccount;
    const bps = this.deps.config.stripe.platformFeeBps;
    const fee = account && bps > 0 ? Math.floor((input.amount * bps) / 10_000) : 0;
    try {
      const session = await stripe.checkout.sessions.create(
        {
          mode: 'payment',
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: input.currency,
                unit_amount: input.amount,
                product_data: { name: input.productName },
              },
            },
          ],
          client_reference_id: input.bookingId,
          metadata: { booking_id: input.bookingId },
          payment_intent_data: {
            metadata: { booking_id: input.bookingId },
            ...(fee > 0 ? { application_fee_amount: fee } : {}),
          },
          customer_email: input.customerEmail,
          expires_at: Math.floor((input.expiresAt.getTime() + SESSION_MARGIN_MS) / 1000),
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
        },
        {
          idempotencyKey: `kairos_checkout_${input.bookingId}`,
          ...(account ? { stripeAccount: account } : {}),
        },
      );
      if (!session.url) throw new Error('Stripe answered a Checkout Session without url');
      return { id: session.id, url: session.url };
    } catch (err) {
      this.deps.log.error({ err, booking: input.bookingId }, 'creating a Stripe Checkout Session failed');
      throw new PaymentsUnavailable(`The payment could not be started at Stripe (${describe(err)}); retry`);
    }
  }

  async expireCheckout(
    sessionId: string,
    stripeAccount: string | null,
    livemode: boolean,
  ): Promise<SessionState> {
    const stripe = this.client(livemode);
    const opts = stripeAccount ? { stripeAccount } : {};
    let session: Stripe.Checkout.Session;
    try {
      session = await stripe.checkout.sessions.expire(sessionId, {}, opts);
    } catch (err) {
      // Not open any more (paid or expired already): what it is now decides.
      if (!(err instanceof Stripe.errors.StripeInvalidRequestError)) throw err;
      session = await stripe.checkout.sessions.retrieve(sessionId, {}, opts);
    }
    return this.sessionState(session);
  }

  async refund(input: RefundInput): Promise<RefundOutcome> {
    let stripe: Stripe;
    try {
      stripe = this.client(input.livemode);
    } catch (err) {
      // The mode's key was removed since the payment: nothing can refund it here.
      return { outcome: 'failed', error: describe(err) };
    }
    try {
      const refund = await stripe.refunds.create(
        { payment_intent: input.paymentIntent, metadata: { booking_id: input.bookingId } },
        {
          idempotencyKey: `kairos_refund_${input.bookingId}`,
          ...(input.stripeAccount ? { stripeAccount: input.stripeAccount } : {}),
        },
      );
      if (refund.status === 'failed' || refund.status === 'canceled') {
        return { outcome: 'failed', error: `Stripe refund ${refund.id} is ${refund.status}` };
      }
      return { outcome: 'refunded', id: refund.id };
    } catch (err) {
      if (err instanceof Stripe.errors.StripeInvalidRequestError) {
        if (err.code === 'charge_already_refunded') return { outcome: 'refunded', id: 'already_refunded' };
        return { outcome: 'failed', error: describe(err) };
      }
      if (
        err instanceof Stripe.errors.StripeAuthenticationError ||
        err instanceof Stripe.errors.StripePermissionError
      ) {
        return { outcome: 'failed', error: describe(err) };
      }
      // Connection errors, 429, 5xx: Stripe may take it later (the idempotency key makes it one refund).
      return { outcome: 'retry', error: describe(err) };
    }
  }

  // ---- the webhook ------------------------------------------------------------------------------

  /** Verifies and handles one delivery; `duplicate` when the event was handled before. */
  async receive(raw: Buffer, signature: string | undefined): Promise<{ received: true; duplicate: boolean }> {
    const { webhookSecret, connectWebhookSecret, testWebhookSecret } = this.deps.config.stripe;
    const present = (xs: (string | null)[]) => xs.filter((x): x is string => !!x);
    // Each mode's endpoint counts only when its key is set too.
    const live = this.stripe ? present([webhookSecret, connectWebhookSecret]) : [];
    const test = this.testStripe ? present([testWebhookSecret]) : [];
    const stripe = this.stripe ?? this.testStripe;
    if (!stripe || live.length + test.length === 0) {
      // No endpoint to deliver to: the operator has not set STRIPE_WEBHOOK_SECRET (and the key).
      throw new AppError(404, 'not-found', 'Stripe webhooks are not configured on this server', {
        code: 'payments_not_configured',
      });
    }
    const { event, livemode } = this.verify(stripe, raw, signature ?? '', live, test);
    const handlers = [...this.deps.extensions.all('stripeEvents'), this.accountHandler].filter((h) =>
      h.types.includes(event.type),
    );
    const prepared = await Promise.all(handlers.map((h) => h.prepare(event, livemode)));
    const after: (() => void)[] = [];
    const fresh = await withTransaction(this.deps.db, async (trx) => {
      const inserted = await repo.recordEvent(trx, {
        id: event.id,
        type: event.type,
        stripe_account: event.account ?? null,
        received_at: this.deps.clock.now(),
      });
      if (!inserted) return false;
      for (const [i, h] of handlers.entries()) {
        const then = await h.handle(trx, event, prepared[i], livemode);
        if (then) after.push(then);
      }
      return true;
    });
    for (const fn of after) fn();
    return { received: true, duplicate: !fresh };
  }

  /**
   * The event and its mode, if the signature verifies with one of the secrets (live: the platform
   * endpoint's, or a separate Connect endpoint's; test: the test endpoint's); else 400. The mode is
   * the secret's, not the event's `livemode` field: a server whose live mode runs on a Stripe test
   * account (a staging server) receives `livemode: false` events for its live bookings. Only when
   * one secret is set for both modes does the field decide.
   */
  private verify(
    stripe: Stripe,
    raw: Buffer,
    signature: string,
    live: readonly string[],
    test: readonly string[],
  ): { event: Stripe.Event; livemode: boolean } {
    let failure: unknown;
    const tryWith = (secrets: readonly string[]): Stripe.Event | null => {
      for (const secret of secrets) {
        try {
          return stripe.webhooks.constructEvent(
            raw,
            signature,
            secret,
            SIGNATURE_TOLERANCE_SECONDS,
            undefined,
            this.deps.clock.nowMs(), // v23 takes receivedAt in milliseconds
          );
        } catch (err) {
          failure = err;
        }
      }
      return null;
    };
    const asLive = tryWith(live);
    if (asLive) {
      const shared = test.some((s) => live.includes(s));
      return { event: asLive, livemode: shared ? asLive.livemode : true };
    }
    const asTest = tryWith(test);
    if (asTest) return { event: asTest, livemode: false };
    throw new AppError(
      400,
      'validation-error',
      `The Stripe-Signature does not verify: ${describe(failure)}`,
      {
        code: 'invalid_signature',
        errors: { 'stripe-signature': 'does not match the body, the secret or the time' },
      },
    );
  }

  /** `account.updated` (a Connect event): the connected account's readiness as Stripe sees it now. */
  private readonly accountHandler: StripeEventHandler<undefined> = {
    types: ['account.updated'],
    prepare: async () => undefined,
    handle: async (trx: Tx, event: Stripe.Event, _prepared: undefined, livemode: boolean) => {
      // Connect is live only: a test-mode account is none of Kairos's.
      if (!livemode) return undefined;
      const acct = event.data.object as Stripe.Account;
      await repo.updateAccountReadiness(trx, acct.id, {
        charges_enabled: acct.charges_enabled === true,
        payouts_enabled: acct.payouts_enabled === true,
        details_submitted: acct.details_submitted === true,
        updated_at: this.deps.clock.now(),
      });
      return undefined;
    },
  };

  // ---- Connect ------------------------------------------------------------------------------------

  /**
   * Creates the account's connected account once (Stripe's idempotency key and the primary key make
   * two racing requests end with one) and answers an onboarding link.
   */
  async connect(
    actor: Pick<Actor, 'accountId' | 'livemode'>,
    urls: ConnectBody,
  ): Promise<ConnectAnswer & { onboarding_url: string }> {
    // The connected account is the account's, shared by both modes and live only: test keys read it.
    if (!actor.livemode) throw liveModeOnly();
    const { accountId } = actor;
    if (!this.stripe) throw stripeNotConfigured();
    const stripe = this.stripe;
    let row = await this.account(accountId);
    try {
      if (!row) {
        const created = await stripe.accounts.create(
          { type: 'express', metadata: { kairos_account_id: accountId } },
          { idempotencyKey: `kairos_connect_${accountId}` },
        );
        const now = this.deps.clock.now();
        await repo.insertAccountOnce(this.deps.db, {
          account_id: accountId,
          stripe_account_id: created.id,
          charges_enabled: created.charges_enabled === true,
          payouts_enabled: created.payouts_enabled === true,
          details_submitted: created.details_submitted === true,
          created_at: now,
          updated_at: now,
        });
        row = await this.account(accountId);
        if (!row) throw new Error('the connected account was not stored');
      }
      const base = this.deps.config.baseUrl;
      const link = await stripe.accountLinks.create({
        account: row.stripe_account_id,
        type: 'account_onboarding',
        refresh_url: urls.refresh_url ?? `${base}/v1/stripe/account`,
        return_url: urls.return_url ?? `${base}/v1/stripe/account`,
      });
      return { ...present(row), onboarding_url: link.url };
    } catch (err) {
      if (err instanceof AppError) throw err;
      this.deps.log.error({ err, account: accountId }, 'Stripe Connect onboarding failed');
      throw new PaymentsUnavailable(`Stripe could not start the onboarding (${describe(err)}); retry`);
    }
  }

  /** The account's connected account as last heard from Stripe; 404 when it has none. */
  async connectedAccount(accountId: string): Promise<ConnectAnswer> {
    if (!this.stripe) throw stripeNotConfigured();
    const row = await this.account(accountId);
    if (!row)
      throw new NotFound('This account has no Stripe account; create one with POST /v1/stripe/connect');
    return present(row);
  }

  private account(accountId: string): Promise<AccountRow | undefined> {
    return repo.findAccount(this.deps.db, accountId);
  }
}
