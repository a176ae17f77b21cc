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
 * returns runs after commit.
 */
export interface StripeEventHandler<P = unknown> {
  types: readonly string[];
  prepare(event: Stripe.Event): Promise<P>;
  handle(trx: Tx, event: Stripe.Event, prepared: P): Promise<(() => void) | undefined>;
}

export interface PaymentsApi {
  /** Whether paid bookings can be taken at all (a secret key is configured). */
  configured(): boolean;
  /**
   * Who is paid for the account's bookings. 422 `payments_not_configured` without Stripe, 422
   * `payments_not_ready` when the account started Connect onboarding and cannot take charges yet.
   */
  payee(accountId: string): Promise<Payee>;
  /** Creates the Checkout Session (outside any transaction). 503 `payments_unavailable` on failure. */
  createCheckout(input: CheckoutInput): Promise<CheckoutSession>;
  /** Expires an open session so it can no longer be paid; answers what the session is now. */
  expireCheckout(sessionId: string, stripeAccount: string | null): Promise<SessionState>;
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
