/** The no-show route of bookings (docs/api.md#no-shows). */
import { actorOf } from '../../platform/actor.js';
import { answer, withExample } from '../../platform/openapi.js';
import type { TypedApp } from '../../platform/routes.js';
import type { NoShows } from './no-show.js';
import { BOOKING, BookingAnswer, BookingParams, NoShowBody } from './schemas.js';

export function noShowRoutes(app: TypedApp, noShows: NoShows): void {
  app.post(
    '/v1/bookings/:id/no-show',
    {
      config: {
        access: 'private',
        problems: {
          '409': {
            description:
              '`conflict`: code `booking_not_live` (cancelled or expired) or `payment_pending` (waiting for its payment)',
            codes: ['booking_not_live', 'payment_pending'],
          },
          '422': {
            description: '`unprocessable`: code `booking_not_started` (before the booking’s start)',
            codes: ['booking_not_started'],
          },
        },
      },
      schema: {
        operationId: 'markBookingNoShow',
        tags: ['Bookings'],
        summary:
          'Mark that a party did not come, after the start (booking.no_show once per party; a repeat changes nothing)',
        params: BookingParams,
        body: withExample(NoShowBody, { party: 'customer' }),
        response: {
          200: answer('The booking, its no_show listing the party', BookingAnswer, {
            booking: {
              ...BOOKING,
              no_show: ['customer'],
              updated_at: '2054-06-10T15:00:00.000Z',
            },
          }),
        },
      },
    },
    async (request) => noShows.mark(actorOf(request.caller), request.params.id, request.body.party),
  );
}
