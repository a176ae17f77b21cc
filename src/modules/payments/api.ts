/**
 * The payments module's public surface (docs/design.md#paid-bookings): Stripe, through the
 * `stripe` package. Bookings create and expire Checkout Sessions and refund payments with it, and
 * contribute `stripeEvents` handlers that the webhook endpoint runs, once per Stripe event, inside the
 * transaction that records the event.
 */
import type Stripe from 'stripe';
import type { Tx } from '../../db/store.js';

export type { default as Stripe } from 'stripe';

/** Who is paid for an account's bookings: its ready connected account, or the platform (null). */
export interface Payee {
  stripeAccount: string | null;
}

export interface CheckoutInput {
  bookingId: string;
  payee: Payee;
  /** Minor units. */
  amount: number;
  /** Lowercase ISO code. */
  currency: string;
  productName: string;
  customerEmail: string;
  /** When the hold ends: the session expires then too. */
  expiresAt: Date;
  successUrl: string;
  cancelUrl: string;
  /** The booking's mode: test mode uses STRIPE_TEST_SECRET_KEY, never the live key. */
  livemode: boolean;
}

export interface CheckoutSession {
  id: string;
  url: string;
}

/** What became of a session, as Stripe answers it now. */
export interface SessionState {
  status: 'open' | 'complete' | 'expired';
  paid: boolean;
  paymentIntent: string | null;
}

export interface RefundInput {
  bookingId: string;
  paymentIntent: string;
  stripeAccount: string | null;
  /** The booking's mode (the key the payment was taken with). */
  livemode: boolean;
}

export type RefundOutcome =
  | { outcome: 'refunded'; id: string }
  | { outcome: 'retry'; error: string }
  | { outcome: 'failed'; error: string };

/**
 * A handler of Stripe events, contributed to the payments module (extension point `stripeEvents`).
 * `prepare` reads what the handler needs before the transaction (a transaction must never wait for
 * a second pooled connection while it holds locks that other deliveries queue behind); `handle`
 * runs inside the transaction that records the event id, with what `prepare` answered; what it
 * returns runs after commit. `livemode` is the event's mode (docs/api.md#test-mode), known from the
 * secret that signed it: a handler acts on objects of that mode only (a test event never touches a
 * live booking).
 */
export interface StripeEventHandler<P = unknown> {
  types: readonly string[];
  prepare(event: Stripe.Event, livemode: boolean): Promise<P>;
  handle(trx: Tx, event: Stripe.Event, prepared: P, livemode: boolean): Promise<(() => void) | undefined>;
}

export interface PaymentsApi {
  /**
   * Whether paid bookings can be taken in a mode (its secret key is configured: STRIPE_SECRET_KEY for
   * live, STRIPE_TEST_SECRET_KEY for test). Absent: live.
   */
  configured(livemode?: boolean): boolean;
  /**
   * Who is paid for the account's bookings of a mode (absent: live). 422 `payments_not_configured`
   * without that mode's key, 422 `payments_not_ready` when the account started Connect onboarding and
   * cannot take charges yet. Connect is live only: test mode's payee is always the platform.
   */
  payee(accountId: string, livemode?: boolean): Promise<Payee>;
  /**
   * Creates the Checkout Session (outside any transaction) with the key of `input.livemode`. 503
   * `payments_unavailable` on failure.
   */
  createCheckout(input: CheckoutInput): Promise<CheckoutSession>;
  /**
   * Expires an open session (of the mode's key) so it can no longer be paid; answers what the
   * session is now.
   */
  expireCheckout(sessionId: string, stripeAccount: string | null, livemode: boolean): Promise<SessionState>;
  /**
   * Refunds a payment in full, idempotently per booking: `refunded` (Stripe accepted it), `retry`
   * (Stripe unreachable, rate limited or failing: try again later) or `failed` (Stripe refused it).
   */
  refund(input: RefundInput): Promise<RefundOutcome>;
  /** What a Checkout Session says about its payment (from Stripe's answer or an event's object). */
  sessionState(session: Stripe.Checkout.Session): SessionState;
}

/** The payments module needs no other module. */
export type PaymentsNeeds = Record<never, never>;

declare module '../module.js' {
  interface ExtensionPointTypes {
    /** What happens when Stripe reports an event (bookings: payments and expiries of paid bookings). */
    stripeEvents: StripeEventHandler;
  }
}
