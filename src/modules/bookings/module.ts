// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { BookingsApi, BookingsNeeds } from './api.js';
import { BookingBusySource } from './busy.js';
import { bookingEvents } from './events.js';
import { bookingMailRenderer } from './mails.js';
import { bookingRoutes } from './routes.js';
import { NoShows } from './no-show.js';
import { noShowRoutes } from './no-show-routes.js';
import { seriesRoutes } from './series-routes.js';
import { BookingNotices } from './notices.js';
import { PaidBookings } from './paid.js';
import { PublicBookings } from './public.js';
import { SeriesWrites } from './series.js';
import { BookingService } from './service.js';
import { WaitlistService } from './waitlist.js';
import { BookingWrites } from './write.js';

/**
 * Bookings (authenticated and public), the attendee's self-service, the waitlist. Contributes the
 * `booking` busy source to availability and the renderer of its mails to mail; emits booking.created, booking.updated, booking.cancelled, booking.no_show, booking_series.cancelled.
 */
export const bookingsModule = defineModule<BookingsNeeds>()({
  name: 'bookings',
  needs: ['principals', 'availability', 'bookingLinks', 'mail', 'calendars', 'payments', 'webhooks'],
  events: bookingEvents,
  create({ platform, needs }) {
    const { db, clock, config } = platform;
    const busy = new BookingBusySource(db, clock);
    // Collaborators, each built on those it holds: no one calls back into its holder.
    const notices = new BookingNotices(platform, needs);
    const paid = new PaidBookings({
      db,
      clock,
      config,
      testClocks: platform.testClocks,
      payments: needs.payments,
      mail: needs.mail,
      webhooks: needs.webhooks,
      busy,
      log: platform.log,
      notices,
    });
    const writes = new BookingWrites(platform, needs, busy, paid, notices);
    const series = new SeriesWrites(platform, needs, busy, writes, notices);
    const publicBookings = new PublicBookings(platform, needs, writes, series);
    const bookings = new BookingService(platform, needs, busy, writes, publicBookings, series);
    const waitlist = new WaitlistService({
      db,
      clock,
      config,
      testClocks: platform.testClocks,
      principals: needs.principals,
      links: needs.bookingLinks,
      mail: needs.mail,
      busy,
      writes,
      publicBookings,
    });
    const { jobs, schedules } = waitlist.work();
    const api: BookingsApi = bookings;
    return {
      api,
      routes: (app) => {
        bookingRoutes(app, bookings, publicBookings, waitlist);
        seriesRoutes(app, bookings);
        noShowRoutes(app, new NoShows(db, needs));
      },
      jobs: [...jobs, ...paid.queues()],
      schedules,
      listen: [(notifier) => busy.listen(notifier)],
      contributes: {
        busySources: [busy],
        stripeEvents: [paid.stripeEvents],
        // Test mode's payment holds and waitlist offers, on each account's test clock.
        timedWork: waitlist.timedWork(),
        mailRenderers: [bookingMailRenderer],
      },
    };
  },
});
