/** The problem `code`s the availability module answers (docs/api.md, Errors): its part of the closed set. */
import { errorCodes } from '../../platform/errors.js';

export const AVAILABILITY_CODES = errorCodes('availability', {
  details_not_granted: {
    status: 403,
    meaning: 'details=true without a consent with availability:read:details (or another right to see titles)',
  },
  calendar_not_connected: { status: 404, meaning: 'The principal has no connected calendar' },
});
type Codes = typeof AVAILABILITY_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}
