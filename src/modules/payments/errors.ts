/** The problem `code`s the payments module answers (docs/api.md, Errors): its part of the closed set. */
import { AppError, errorCodes, Forbidden, Unprocessable } from '../../platform/errors.js';

export const PAYMENT_CODES = errorCodes('payments', {
  payments_not_configured: {
    status: [404, 422],
    meaning:
      'Payments are not configured on this server for the mode (no STRIPE_SECRET_KEY / STRIPE_WEBHOOK_SECRET; in test mode no STRIPE_TEST_SECRET_KEY)',
  },
  payments_not_ready: { status: 422, meaning: 'The account’s Stripe account has not finished onboarding' },
  invalid_signature: { status: 400, meaning: 'The Stripe-Signature does not verify' },
  payments_unavailable: { status: 503, meaning: 'Stripe could not be reached; retry after Retry-After' },
  live_mode_only: {
    status: 403,
    meaning:
      'A test key asked to change something of live mode or shared by both modes (here: the Stripe Connect account); use a live key or a session',
  },
});
type Codes = typeof PAYMENT_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}

/** 422 for a booking on a priced link (a link priced before the server lost its Stripe key). */
export function paymentsNotConfigured(): Unprocessable {
  return new Unprocessable('This booking link is priced and payments are not configured on this server', {
    code: 'payments_not_configured',
  });
}

/** 422 for the Stripe Connect routes: no booking link is involved, the server has no Stripe key. */
export function stripeNotConfigured(): Unprocessable {
  return new Unprocessable(
    'Payments are not configured on this server (no STRIPE_SECRET_KEY), so there is no Stripe account to connect or read',
    { code: 'payments_not_configured' },
  );
}

/** 503: Stripe could not be reached or refused for a reason of its own; retry. */
export class PaymentsUnavailable extends AppError {
  constructor(detail: string) {
    super(503, 'service-unavailable', detail, { code: 'payments_unavailable' }, { 'retry-after': '5' });
  }
}

/** 403: a test key tried to change the account's Stripe Connect account (shared, live only). */
export function liveModeOnly(): Forbidden {
  return new Forbidden(
    'The Stripe Connect account is the account’s, for live mode: create or change it with a live key',
    { code: 'live_mode_only' },
  );
}
