/**
 * Paid bookings (docs/api.md#payments, docs/design.md#paid-bookings).
 *
 * A booking on a priced link is written as `pending_payment`: its time is held by the same occupancy
 * rows and exclusion constraint as any booking, and a `bookings.payment-hold` job is queued for the
 * hold's end in the same transaction. Then, outside the transaction, the Checkout Session is created
 * at Stripe; if that fails the hold is released at once and the answer is 503 (a crash in between
 * leaves a hold that the job ends).
 *
 * Stripe's events arrive through the payments module's webhook, each once, inside the transaction
 * that records it: paid → `confirmed` with `booking.created` and `booking.confirmed` (the booking only
 * now exists for webhook receivers), the confirmation mails and the hosts' calendars; expired or
 * failed → `expired`, time released, waitlist offered. A payment that arrives after the hold ended
 * takes the time again if it is still free, and is refunded if it is not — never two live bookings.
 * The hold job expires the session at Stripe first, so a payment cannot slip in after the release.
 * Cancelling a paid booking refunds it in full (a retried `bookings.refund` job; `refund_status`).
 *
 * Test mode (docs/api.md#test-mode): a booking has its link's mode. Stripe is called with that mode's
 * key (payments module: never the live key for a test booking), a Stripe event acts only on bookings
 * of its own mode, and a test booking's hold runs on the account's test clock: the hold job leaves it
 * alone, and `timedWork()` ends it when the test clock passes its end (an advance, or the test clock's
 * sweep), as the job would have at that time.
 */
import type { Config } from '../../config.js';
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import { enqueue, type Job } from '../../jobs/runner.js';
import type { Clock } from '../../platform/clock.js';
import type { TestClocks } from '../../platform/test-clocks.js';
import type { BookingLink } from '../booking-links/api.js';
import type { Payee, Stripe, StripeEventHandler } from '../payments/api.js';
import type { TimedWork } from '../test-clock/api.js';
import type { BookingsNeeds } from './api.js';
import type { BookingBusySource } from './busy.js';
import { latePaymentMail } from './mails.js';
import type { Announcement, BookingNotices } from './notices.js';
import { presentBooking } from './present.js';
import * as repo from './repo.js';
import { releaseSeat } from './series-repo.js';
import * as testRepo from './test-mode-repo.js';
import { MINUTE } from '../../lib/time.js';

export const PAYMENT_HOLD_QUEUE = 'bookings.payment-hold';
export const REFUND_QUEUE = 'bookings.refund';
/** Refund attempts before `refund_status: failed` (backoff 2 s … 1 h: about half a day in all). */
export const MAX_REFUND_ATTEMPTS = 20;

/** A priced link's booking: who is paid, how much, until when the time is held. */
export interface PaidHold {
  payee: Payee;
  amount: number;
  currency: string;
  /** On the clock of the booking's mode (test mode: the account's test clock). */
  expiresAt: Date;
  /** The booking's mode: its link's. */
  livemode: boolean;
  /** The clock of that mode. */
  clock: Clock;
}

/** A mode and its clock: what paid bookings stamp and whose objects they touch. */
interface Mode {
  livemode: boolean;
  clock: Clock;
}

/**
 * How a hold that test mode's timed work ended offers its freed time: at once, in the transaction that
 * freed it and on the test clock (the waitlist's offer, waitlist.ts); answers the principals it held.
 */
export type OfferFreedIn = (trx: Tx, booking: repo.BookingRow, clock: Clock) => Promise<string[]>;

/** What a Stripe event's handler reads before its transaction. */
interface PreparedEvent {
  clock: Clock;
  /** What confirming the booking needs (payment events only). */
  announcement: Announcement | null;
}

export interface PaidBookingsDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'baseUrl' | 'stripe'>;
  /** The clock of a booking's mode (live: the server's clock, without a statement). */
  testClocks: Pick<TestClocks, 'clockFor'>;
  payments: BookingsNeeds['payments'];
  mail: BookingsNeeds['mail'];
  webhooks: BookingsNeeds['webhooks'];
  busy: Pick<BookingBusySource, 'changed'>;
  log: { error(obj: object, msg: string): void };
  /** A confirmed booking's mails, calendar meeting and freed-time offers (the write path's too). */
  notices: Pick<BookingNotices, 'announcementOf' | 'announce' | 'offerFreedTime'>;
}

interface BookingPayload {
  booking_id: string;
}

const PAID_TYPES = ['checkout.session.completed', 'checkout.session.async_payment_succeeded'];
const UNPAID_TYPES = ['checkout.session.expired', 'checkout.session.async_payment_failed'];

export class PaidBookings {
  constructor(private readonly deps: PaidBookingsDeps) {
    this.live = { livemode: true, clock: deps.clock };
  }

  private readonly live: Mode;

  /** The clock of a mode of the account (live: the server's, without a statement). */
  private async modeOf(accountId: string, livemode: boolean): Promise<Mode> {
    if (livemode) return this.live;
    return { livemode, clock: await this.deps.testClocks.clockFor(accountId, false) };
  }

  /**
   * The hold of a booking on `link` (in the link's mode, on its clock), or null when the link is
   * free. 422 when payments cannot be taken in that mode (test mode: no STRIPE_TEST_SECRET_KEY).
   */
  async holdFor(link: BookingLink | null): Promise<PaidHold | null> {
    if (!link || link.priceAmount === null) return null;
    const payee = await this.deps.payments.payee(link.accountId, link.livemode);
    const { livemode, clock } = await this.modeOf(link.accountId, link.livemode);
    return {
      payee,
      amount: link.priceAmount,
      currency: (link.priceCurrency ?? 'usd').toLowerCase(),
      expiresAt: new Date(clock.nowMs() + this.deps.config.stripe.holdMinutes * MINUTE),
      livemode,
      clock,
    };
  }

  /**
   * When the Checkout Session of a hold ends, in Stripe's time (the server's): as long from now as the
   * hold has left. A test clock ahead of real time does not move Stripe's.
   */
  private sessionEnd(hold: PaidHold): Date {
    if (hold.livemode) return hold.expiresAt;
    return new Date(this.deps.clock.nowMs() + (hold.expiresAt.getTime() - hold.clock.nowMs()));
  }

  /** In the booking's transaction: the job that ends the hold if nothing else does. */
  async queueHoldEnd(trx: Tx, bookingId: string, at: Date): Promise<void> {
    await enqueue(trx, PAYMENT_HOLD_QUEUE, { booking_id: bookingId } satisfies BookingPayload, at);
  }

  /**
   * After the hold committed: the Checkout Session, stored on the booking. On failure the hold is
   * released before the 503 propagates.
   */
  async startCheckout(
    b: repo.BookingRow,
    link: BookingLink,
    hold: PaidHold,
    urls: { success_url?: string | undefined; cancel_url?: string | undefined },
  ): Promise<repo.BookingRow> {
    const page = `${this.deps.config.baseUrl}/book/${encodeURIComponent(link.slug)}`;
    let session: { id: string; url: string };
    try {
      session = await this.deps.payments.createCheckout({
        bookingId: b.id,
        payee: hold.payee,
        amount: hold.amount,
        currency: hold.currency,
        productName: link.title,
        customerEmail: b.customer_email,
        expiresAt: this.sessionEnd(hold),
        successUrl: urls.success_url ?? `${page}?booking=${b.id}&payment=success`,
        cancelUrl: urls.cancel_url ?? `${page}?booking=${b.id}&payment=cancelled`,
        livemode: hold.livemode,
      });
    } catch (err) {
      await this.expire(b.id, null, { offer: false }, hold);
      throw err;
    }
    return repo.updateBooking(this.deps.db, b.id, {
      checkout_url: session.url,
      stripe_session_id: session.id,
      updated_at: hold.clock.now(),
    });
  }

  /** In a cancellation's transaction: a paid booking's refund is queued. */
  async queueRefund(trx: Tx, bookingId: string): Promise<void> {
    await enqueue(
      trx,
      REFUND_QUEUE,
      { booking_id: bookingId } satisfies BookingPayload,
      this.deps.clock.now(),
    );
  }

  /** After a pending booking was cancelled: its session is expired so that it cannot be paid. */
  async closeSession(b: repo.BookingRow): Promise<void> {
    if (!b.stripe_session_id) return;
    try {
      await this.deps.payments.expireCheckout(b.stripe_session_id, b.stripe_account_id, b.livemode);
    } catch (err) {
      // A payment that still arrives finds the booking cancelled and is refunded.
      this.deps.log.error(
        { err, booking: b.id },
        'expiring the Checkout Session of a cancelled booking failed',
      );
    }
  }

  // ---- Stripe's events ----------------------------------------------------------------------------

  /** Events of the mode's Stripe account act on bookings of that mode only (checked under the lock). */
  readonly stripeEvents: StripeEventHandler<PreparedEvent | null> = {
    types: [...PAID_TYPES, ...UNPAID_TYPES],
    prepare: async (event: Stripe.Event, livemode: boolean) => {
      const ref = sessionRef(event, this.deps.payments);
      if (!ref) return null;
      const paid = PAID_TYPES.includes(event.type);
      // Live mode's expiries need nothing read first (its clock is the server's), as before test mode.
      if (livemode && !paid) return { clock: this.live.clock, announcement: null };
      return this.prepare(ref.bookingId, livemode, paid);
    },
    handle: async (trx: Tx, event: Stripe.Event, prepared: PreparedEvent | null, livemode: boolean) => {
      const ref = sessionRef(event, this.deps.payments);
      if (!ref || !prepared) return undefined;
      const mode = { livemode, clock: prepared.clock };
      let hosts: string[] = [];
      if (PAID_TYPES.includes(event.type)) {
        // completed with payment_status `unpaid` is a delayed method still settling: wait for its event.
        if (!ref.paid || !prepared.announcement) return undefined;
        hosts = await this.confirmPaid(
          trx,
          ref.bookingId,
          ref.sessionId,
          ref.paymentIntent,
          prepared.announcement,
          mode,
        );
      } else {
        hosts = await this.expireIn(trx, ref.bookingId, ref.sessionId, { offer: true }, mode);
      }
      return hosts.length > 0 ? () => this.deps.busy.changed(hosts) : undefined;
    },
  };

  /**
   * What handling an event needs, read before its transaction: the clock of its mode and, for a
   * payment, what confirming the booking needs (null: no such booking in the event's mode).
   */
  private async prepare(bookingId: string, livemode: boolean, paid: boolean): Promise<PreparedEvent | null> {
    const b = await repo.bookingById(this.deps.db, bookingId);
    if (!b || b.livemode !== livemode) return null;
    const { clock } = await this.modeOf(b.account_id, livemode);
    return { clock, announcement: paid ? await this.deps.notices.announcementOf(b) : null };
  }

  /**
   * A payment arrived for the booking (in the caller's transaction). Pending → confirmed. Expired or
   * cancelled → the time is taken again if still free (expired only), else the payment is refunded.
   * Answers the principals whose time changed.
   */
  async confirmPaid(
    trx: Tx,
    bookingId: string,
    sessionId: string,
    paymentIntent: string | null,
    prepared: Announcement,
    mode: Mode,
  ): Promise<string[]> {
    const b = await repo.lockBooking(trx, bookingId);
    if (!b || b.livemode !== mode.livemode) return [];
    if (b.stripe_session_id !== null && b.stripe_session_id !== sessionId) return [];
    if (b.status === 'confirmed' || b.stripe_payment_intent !== null) return [];
    const now = mode.clock.now();
    let retaken = false;
    if (b.status === 'expired' && new Date(b.start_time).getTime() > now.getTime()) {
      retaken =
        prepared.occupancy.length > 0 && (await repo.tryOccupy(trx, prepared.occupancy, 'late_payment'));
    }
    if (b.status === 'pending_payment' || retaken) {
      const row = await repo.updateBooking(trx, b.id, {
        status: 'confirmed',
        stripe_session_id: sessionId,
        stripe_payment_intent: paymentIntent,
        paid_at: now,
        payment_expires_at: null,
        checkout_url: null,
        updated_at: now,
      });
      const booking = presentBooking(row);
      await this.deps.webhooks.emit(trx, {
        accountId: row.account_id,
        type: 'booking.created',
        data: { booking },
        livemode: row.livemode,
      });
      await this.deps.webhooks.emit(trx, {
        accountId: row.account_id,
        type: 'booking.confirmed',
        data: { booking },
        livemode: row.livemode,
      });
      await this.deps.notices.announce(trx, row, prepared.link, prepared.contacts);
      return retaken ? row.host_ids : [];
    }
    // Paid too late: the time went to someone else, or the booking was cancelled. Refund it.
    const row = await repo.updateBooking(trx, b.id, {
      stripe_session_id: sessionId,
      stripe_payment_intent: paymentIntent,
      paid_at: now,
      refund_status: paymentIntent ? 'pending' : 'failed',
      refund_error: paymentIntent ? null : 'the payment carried no payment intent to refund',
      updated_at: now,
    });
    if (paymentIntent) await this.queueRefund(trx, row.id);
    await this.deps.mail.enqueue(trx, [{ ...latePaymentMail(row), livemode: row.livemode }]);
    return [];
  }

  /**
   * The hold ended (Stripe expired the session, or the payment failed): release it, once. `offer`:
   * true queues the waitlist offer of the freed time, a function offers it at once (test mode's timed
   * work, on its clock).
   */
  private async expireIn(
    trx: Tx,
    bookingId: string,
    sessionId: string | null,
    opts: { offer: boolean | OfferFreedIn },
    mode: Mode,
  ): Promise<string[]> {
    const b = await repo.lockBooking(trx, bookingId);
    if (b?.status !== 'pending_payment' || b.livemode !== mode.livemode) return [];
    if (sessionId !== null && b.stripe_session_id !== null && b.stripe_session_id !== sessionId) return [];
    const now = mode.clock.now();
    const released = b.seat_session_id
      ? await releaseSeat(trx, b.seat_session_id)
      : await repo.releaseOccupancy(trx, b.id);
    const row = await repo.updateBooking(trx, b.id, {
      status: 'expired',
      checkout_url: null,
      updated_at: now,
    });
    if (opts.offer === true) await this.deps.notices.offerFreedTime(trx, row);
    else if (opts.offer) return [...released, ...(await opts.offer(trx, row, mode.clock))];
    return released;
  }

  private async expire(
    bookingId: string,
    sessionId: string | null,
    opts: { offer: boolean | OfferFreedIn },
    mode: Mode,
  ): Promise<void> {
    const released = await withTransaction(this.deps.db, (trx) =>
      this.expireIn(trx, bookingId, sessionId, opts, mode),
    );
    this.deps.busy.changed(released);
  }

  // ---- jobs ---------------------------------------------------------------------------------------

  queues() {
    return [
      {
        queue: PAYMENT_HOLD_QUEUE,
        handler: (job: Job<BookingPayload>) => this.endHold(job.payload.booking_id),
        options: { concurrency: 4 },
      },
      {
        queue: REFUND_QUEUE,
        handler: (job: Job<BookingPayload>) => this.runRefund(job.payload.booking_id, job.attempts),
        options: { concurrency: 2 },
      },
    ];
  }

  /**
   * The hold's end (the live job): the session is expired at Stripe first (so no payment lands after
   * the release); if Stripe says it was paid, the booking is confirmed instead. Stripe unreachable:
   * released anyway (a payment arriving later is then handled as late). A test booking's hold is
   * left alone: test mode's timed work ends it on the test clock (`timedWork`).
   */
  async endHold(bookingId: string): Promise<{ retryAt: Date } | undefined> {
    const b = await repo.bookingById(this.deps.db, bookingId);
    if (b?.status !== 'pending_payment' || !b.livemode) return undefined;
    const due = b.payment_expires_at ? new Date(b.payment_expires_at).getTime() : 0;
    if (due > this.deps.clock.nowMs()) return { retryAt: new Date(due) };
    await this.endHoldNow(b, this.live, true);
    return undefined;
  }

  /** Ends a hold that is due on `mode`'s clock (endHold's and test mode's timed work's path). */
  private async endHoldNow(b: repo.BookingRow, mode: Mode, offer: boolean | OfferFreedIn): Promise<void> {
    if (b.stripe_session_id) {
      try {
        const state = await this.deps.payments.expireCheckout(
          b.stripe_session_id,
          b.stripe_account_id,
          b.livemode,
        );
        if (state.paid) {
          const sessionId = b.stripe_session_id;
          const prepared = await this.deps.notices.announcementOf(b);
          const changed = await withTransaction(this.deps.db, (trx) =>
            this.confirmPaid(trx, b.id, sessionId, state.paymentIntent, prepared, mode),
          );
          this.deps.busy.changed(changed);
          return;
        }
      } catch (err) {
        this.deps.log.error(
          { err, booking: b.id },
          'expiring a Checkout Session at Stripe failed; releasing the hold',
        );
      }
    }
    await this.expire(b.id, null, { offer }, mode);
  }

  /**
   * Test mode's holds (docs/api.md#test-clock): the account's pending test bookings whose hold the
   * test clock passed end as the live job ends a live one, at the hold's end on the test clock — the
   * session expired at Stripe (test key), the time released, its waitlist offer made at once through
   * `offer` (else queued).
   */
  timedWork(offer?: OfferFreedIn): TimedWork {
    return {
      name: 'bookings.payment-holds',
      nextDue: (accountId, until) => testRepo.nextTestHoldEnd(this.deps.db, accountId, until),
      runDue: async (accountId, clock) => {
        for (const id of await testRepo.dueTestHolds(this.deps.db, accountId, clock.now())) {
          const b = await repo.bookingById(this.deps.db, id);
          // Claimed by its state: paid, cancelled or ended since it was listed, it is done.
          if (b?.status !== 'pending_payment' || b.livemode) continue;
          await this.endHoldNow(b, { livemode: false, clock }, offer ?? true);
        }
      },
    };
  }

  /** One attempt at a queued refund. */
  async runRefund(bookingId: string, attempts: number): Promise<{ retryAt: Date } | undefined> {
    const b = await repo.bookingById(this.deps.db, bookingId);
    if (b?.refund_status !== 'pending' || !b.stripe_payment_intent) return undefined;
    const result = await this.deps.payments.refund({
      bookingId: b.id,
      paymentIntent: b.stripe_payment_intent,
      stripeAccount: b.stripe_account_id,
      livemode: b.livemode,
    });
    const { clock } = await this.modeOf(b.account_id, b.livemode);
    const now = clock.now();
    if (result.outcome === 'retry' && attempts < MAX_REFUND_ATTEMPTS) {
      await repo.recordRefundRetry(this.deps.db, b.id, result.error.slice(0, 500), now);
      // The job runs on the server's clock, whatever the booking's mode.
      return { retryAt: new Date(this.deps.clock.nowMs() + Math.min(3_600_000, 1000 * 2 ** attempts)) };
    }
    await repo.finishRefund(
      this.deps.db,
      b.id,
      result.outcome === 'refunded'
        ? { refund_status: 'succeeded', refund_id: result.id, refund_error: null, updated_at: now }
        : { refund_status: 'failed', refund_error: result.error.slice(0, 500), updated_at: now },
    );
    if (result.outcome !== 'refunded') {
      this.deps.log.error({ booking: b.id, error: result.error }, 'refunding a booking failed');
    }
    return undefined;
  }
}

/** The booking, session and payment an event of a Checkout Session names (null: not Kairos's). */
function sessionRef(
  event: Stripe.Event,
  payments: Pick<BookingsNeeds['payments'], 'sessionState'>,
): {
  bookingId: string;
  sessionId: string;
  paymentIntent: string | null;
  paid: boolean;
} | null {
  const session = event.data.object as Stripe.Checkout.Session;
  const bookingId = session.metadata?.booking_id ?? session.client_reference_id ?? null;
  if (!bookingId?.startsWith('booking_')) return null;
  const { paymentIntent, paid } = payments.sessionState(session);
  return { bookingId, sessionId: session.id, paymentIntent, paid };
}
