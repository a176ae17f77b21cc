/** The problem `code`s the bookings module answers (docs/api.md, Errors): its part of the closed set. */
import { errorCodes } from '../../platform/errors.js';

export const BOOKING_CODES = errorCodes('bookings', {
  slot_unavailable: {
    status: 409,
    meaning: 'The time is taken, busy, or outside hours, notice or horizon (with a `reason`); re-query',
  },
  slot_full: { status: 409, meaning: 'Every seat of the slot of a seated booking link is taken; re-query' },
  booking_not_live: { status: 409, meaning: 'The booking is cancelled or otherwise no longer live' },
  payment_pending: { status: 409, meaning: 'The booking waits for its payment and cannot be rescheduled' },
  offer_expired: { status: 409, meaning: 'The waitlist offer is no longer held' },
  offer_claimed: { status: 409, meaning: 'The waitlist offer was already claimed' },
  start_in_past: { status: 422, meaning: 'The start time is in the past' },
  booking_started: { status: 422, meaning: 'The booking has already started' },
  booking_not_started: {
    status: 422,
    meaning: 'The booking has not started yet (a no-show is marked after it)',
  },
});
type Codes = typeof BOOKING_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}
