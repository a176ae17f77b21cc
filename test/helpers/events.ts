import type { EventPayloads } from '../../src/modules/webhooks/api.js';

type Booking = EventPayloads['booking.created']['booking'];

/**
 * A booking as a `booking.*` event carries it, for tests of the delivery mechanism that emit events
 * themselves: the payload must still be one the event's schema accepts (test/helpers/app.ts checks
 * every stored event on close).
 */
export function sampleBooking(over: Partial<Booking> = {}): Booking {
  const host = '0190a4c2-7b1e-7d3a-9f4e-2c8b5d6a1e03';
  return {
    id: 'booking_01jxk9c2e1d3f5g7h9j1k3m5n7',
    status: 'confirmed',
    principal_id: host,
    host_ids: [host],
    booking_link_id: null,
    title: 'Intro call',
    start_time: '2026-06-10T14:00:00.000Z',
    end_time: '2026-06-10T14:45:00.000Z',
    customer_email: 'ada@example.com',
    customer_name: 'Ada Lovelace',
    customer_timezone: null,
    notes: null,
    answers: {},
    metadata: {},
    payment_amount: null,
    payment_currency: null,
    checkout_url: null,
    payment_expires_at: null,
    refund_status: null,
    cancellation_reason: null,
    cancelled_at: null,
    created_at: '2026-06-08T09:15:02.310Z',
    updated_at: '2026-06-08T09:15:02.310Z',
    ...over,
  };
}
