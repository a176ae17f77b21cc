import { BOOKING } from '../../src/modules/bookings/routes.js';
import type { EventPayloads } from '../../src/modules/webhooks/api.js';

type Booking = EventPayloads['booking.created']['booking'];

/**
 * A booking as a `booking.*` event carries it, for tests of the delivery mechanism that emit events
 * themselves: the payload must still be one the event's schema accepts (test/helpers/app.ts checks
 * every stored event on close).
 */
export function sampleBooking(over: Partial<Booking> = {}): Booking {
  return {
    ...BOOKING,
    ...over,
  };
}
