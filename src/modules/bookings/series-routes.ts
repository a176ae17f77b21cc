/** The route of recurring series (docs/api.md#recurring-series): a series and its occurrences. */
import { actorOf } from '../../platform/actor.js';
import { answer } from '../../platform/openapi.js';
import type { TypedApp } from '../../platform/routes.js';
import { BOOKING, SeriesAnswer, SeriesParams } from './schemas.js';
import type { BookingService } from './service.js';

const SERIES = {
  id: 'ser_01jxk9c2e1d3f5g7h9j1k3m5n7',
  principal_id: BOOKING.principal_id,
  booking_link_id: BOOKING.booking_link_id,
  livemode: true,
  recurrence: { frequency: 'weekly' as const, interval: 1, count: 3, timezone: 'Europe/London' },
  occurrences: [
    {
      booking_id: 'booking_01jxk9c2e1d3f5g7h9j1k3m5n7',
      start_time: '2054-06-10T14:00:00.000Z',
      end_time: '2054-06-10T14:45:00.000Z',
      status: 'confirmed' as const,
    },
    {
      booking_id: 'booking_01jxk9c2e1d3f5g7h9j1k3m5n8',
      start_time: '2054-06-17T14:00:00.000Z',
      end_time: '2054-06-17T14:45:00.000Z',
      status: 'cancelled' as const,
    },
    {
      booking_id: 'booking_01jxk9c2e1d3f5g7h9j1k3m5n9',
      start_time: '2054-06-24T14:00:00.000Z',
      end_time: '2054-06-24T14:45:00.000Z',
      status: 'confirmed' as const,
    },
  ],
  created_at: '2054-06-08T09:15:02.310Z',
};

export function seriesRoutes(app: TypedApp, bookings: BookingService): void {
  app.get(
    '/v1/booking-series/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getBookingSeries',
        tags: ['Bookings'],
        summary: 'A recurring series: its rule and every occurrence with its status',
        params: SeriesParams,
        response: { 200: answer('The series', SeriesAnswer, { series: SERIES }) },
      },
    },
    async (request) => bookings.getSeries(actorOf(request.caller), request.params.id),
  );
}
