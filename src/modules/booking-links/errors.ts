/** The problem `code`s the booking-links module answers (docs/api.md, Errors): its part of the closed set. */
import { errorCodes } from '../../platform/errors.js';

export const LINK_CODES = errorCodes('booking-links', {
  slug_taken: { status: 409, meaning: 'Another live booking link uses the slug' },
  payments_not_configured: {
    status: 422,
    meaning: 'A price on a server without payments (no STRIPE_SECRET_KEY)',
  },
});
type Codes = typeof LINK_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}
