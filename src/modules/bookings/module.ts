// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import type { AvailabilityApi } from '../availability/api.js';
import type { BookingLinksApi } from '../booking-links/api.js';
import type { CalendarsApi } from '../calendars/api.js';
import type { MailApi } from '../mail/api.js';
import type { PaymentsApi } from '../payments/api.js';
import { defineModule } from '../module.js';
import { bookingEvents } from './events.js';
import type { PrincipalsApi } from '../principals/api.js';
import { BookingBusySource } from './busy.js';
import { bookingRoutes } from './routes.js';
import { BookingService } from './service.js';
import { WaitlistService } from './waitlist.js';

export interface BookingsNeeds {
  principals: Pick<PrincipalsApi, 'profiles' | 'contacts' | 'lockedProfiles'> & {
    access: Pick<PrincipalsApi['access'], 'actingFor'>;
  };
  availability: Pick<AvailabilityApi, 'refusal' | 'scheduleRefusal' | 'linkSlots'>;
  bookingLinks: Pick<BookingLinksApi, 'get' | 'bySlug'>;
  mail: Pick<MailApi, 'enqueue'>;
  calendars: Pick<CalendarsApi, 'writeMeeting' | 'removeMeeting' | 'calendarSync'>;
  payments: Pick<PaymentsApi, 'payee' | 'createCheckout' | 'expireCheckout' | 'refund'>;
}

/**
 * Bookings (authenticated and public), the attendee's self-service, the waitlist. Contributes the
 * `booking` busy source to availability; emits booking.created, booking.updated, booking.cancelled.
 */
export const bookingsModule = defineModule<BookingsNeeds>()({
  name: 'bookings',
  needs: ['principals', 'availability', 'bookingLinks', 'mail', 'calendars', 'payments'],
  events: bookingEvents,
  create({ platform, needs }) {
    const { db, clock, config, keys, log } = platform;
    const busy = new BookingBusySource(db, clock);
    const bookings = new BookingService({
      db,
      clock,
      config,
      linkKey: keys.linkKey,
      principals: needs.principals,
      availability: needs.availability,
      links: needs.bookingLinks,
      mail: needs.mail,
      calendars: needs.calendars,
      payments: needs.payments,
      busy,
      log,
    });
    const waitlist = new WaitlistService({
      db,
      clock,
      config,
      principals: needs.principals,
      links: needs.bookingLinks,
      mail: needs.mail,
      busy,
      bookings,
    });
    const { jobs, schedules } = waitlist.work();
    return {
      api: bookings,
      routes: (app) => bookingRoutes(app, bookings, waitlist),
      jobs: [...jobs, ...bookings.paid.queues()],
      schedules,
      listen: [(notifier) => busy.listen(notifier)],
      contributes: { busySources: [busy], stripeEvents: [bookings.paid.stripeEvents] },
    };
  },
});
