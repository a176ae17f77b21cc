// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { BookingLinksApi, BookingLinksNeeds } from './api.js';
import { bookingLinkRoutes } from './routes.js';
import { BookingLinkService } from './service.js';

/** Booking links (docs/api.md#booking-links): owners' CRUD, and look-ups by id and slug for bookings. */
export const bookingLinksModule = defineModule<BookingLinksNeeds>()({
  name: 'bookingLinks',
  needs: ['principals'],
  create({ platform, needs }) {
    const service = new BookingLinkService(platform, needs);
    const api: BookingLinksApi = service;
    return {
      api,
      routes: (app) => bookingLinkRoutes(app, service),
      // Links by slug are cached once changes can be heard from every process.
      listen: [(notifier) => service.listen(notifier)],
    };
  },
});
