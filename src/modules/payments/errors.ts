/** The problem `code`s the payments module answers (docs/api.md, Errors): its part of the closed set. */
import { errorCodes } from '../../platform/errors.js';

export const PAYMENT_CODES = errorCodes('payments', {
  payments_not_configured: {
    status: [404, 422],
    meaning: 'Payments are not configured on this server (no STRIPE_SECRET_KEY / STRIPE_WEBHOOK_SECRET)',
  },
  payments_not_ready: { status: 422, meaning: 'The account’s Stripe account has not finished onboarding' },
  invalid_signature: { status: 400, meaning: 'The Stripe-Signature does not verify' },
  payments_unavailable: { status: 503, meaning: 'Stripe could not be reached; retry after Retry-After' },
});
type Codes = typeof PAYMENT_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}
