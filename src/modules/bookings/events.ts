/**
 * The webhook events of bookings (docs/api.md#events): their payload schemas, declared on the module
 * definition, and their types, added to the webhooks module's `EventPayloads` for `emitEvent`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Timestamp } from '../../platform/schemas.js';
import { BOOKING, Booking, NoShowParty } from './schemas.js';

/** `{ booking }`: the booking as the API shows it, after the change. */
const bookingOnly = (description: string, booking: object = BOOKING) =>
  Type.Object({ booking: Booking }, { additionalProperties: false, description, examples: [{ booking }] });

export const bookingEvents = {
  'booking.created': bookingOnly('A booking was made (a paid one once paid, with booking.confirmed)'),
  'booking.confirmed': bookingOnly('A paid booking was paid for and is now confirmed'),
  'booking.updated': Type.Object(
    {
      booking: Booking,
      previous: Type.Object(
        { start_time: Timestamp, end_time: Timestamp },
        { additionalProperties: false, description: 'The time before the change' },
      ),
    },
    {
      additionalProperties: false,
      description: 'A booking was rescheduled',
      examples: [
        {
          booking: {
            ...BOOKING,
            start_time: '2054-06-11T09:00:00.000Z',
            end_time: '2054-06-11T09:45:00.000Z',
          },
          previous: { start_time: BOOKING.start_time, end_time: BOOKING.end_time },
        },
      ],
    },
  ),
  'booking.cancelled': bookingOnly('A booking was cancelled (by the host, the customer or a proposal)', {
    ...BOOKING,
    status: 'cancelled',
    cancellation_reason: 'Feeling better',
    cancelled_at: '2054-06-09T08:00:00.000Z',
  }),
  'booking.no_show': Type.Object(
    { booking: Booking, party: NoShowParty },
    {
      additionalProperties: false,
      description: 'A party of a booking was marked as not having come (once per party)',
      examples: [{ booking: { ...BOOKING, no_show: ['customer'] }, party: 'customer' }],
    },
  ),
  'booking_series.cancelled': Type.Object(
    {
      series_id: Type.String({ pattern: '^ser_[0-9a-z]{26}$' }),
      cancelled_booking_ids: Type.Array(Type.String({ pattern: '^booking_[0-9a-z]{26}$' }), {
        description: 'the occurrences this cancel took (each also has its own booking.cancelled)',
      }),
    },
    {
      additionalProperties: false,
      description:
        'Occurrences of a recurring series were cancelled together (scope `following` or `series`)',
      examples: [
        {
          series_id: 'ser_01jxk9c2e1d3f5g7h9j1k3m5n7',
          cancelled_booking_ids: ['booking_01jxk9c2e1d3f5g7h9j1k3m5n7', 'booking_01jxk9c2e1d3f5g7h9j1k3m5n8'],
        },
      ],
    },
  ),
} as const;

type Payload<T extends keyof typeof bookingEvents> = Static<(typeof bookingEvents)[T]>;

declare module '../webhooks/api.js' {
  interface EventPayloads {
    'booking.created': Payload<'booking.created'>;
    'booking.confirmed': Payload<'booking.confirmed'>;
    'booking.updated': Payload<'booking.updated'>;
    'booking.cancelled': Payload<'booking.cancelled'>;
    'booking.no_show': Payload<'booking.no_show'>;
    'booking_series.cancelled': Payload<'booking_series.cancelled'>;
  }
}
