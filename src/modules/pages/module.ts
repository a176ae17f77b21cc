import type { ApiKeysApi } from '../api-keys/api.js';
import type { BookingLinksApi } from '../booking-links/api.js';
import type { BookingsApi } from '../bookings/api.js';
import { defineModule } from '../module.js';
import type { PrincipalsApi } from '../principals/api.js';
import { pageRoutes } from './routes.js';
import { PageService } from './service.js';

export interface PagesNeeds {
  apiKeys: Pick<ApiKeysApi, 'allowedDomains' | 'resolve' | 'hash'>;
  bookingLinks: Pick<BookingLinksApi, 'get'>;
  bookings: Pick<BookingsApi, 'publicLink' | 'publicLinkView' | 'byToken'>;
  principals: Pick<PrincipalsApi, 'contacts'>;
}

/**
 * The pages Kairos serves to people: the booking page, the attendee's page, the pages behind the
 * other mailed links (`/p/`, `/w/`, `/invitations/`) and the embed (`/embed.js`), with their client
 * code bundled from src/web at first use (docs/architecture.md#pages). No API of its own.
 */
export const pagesModule = defineModule<PagesNeeds>()({
  name: 'pages',
  needs: ['apiKeys', 'bookingLinks', 'bookings', 'principals'],
  create({ platform, needs }) {
    const pages = new PageService({
      db: platform.db,
      clock: platform.clock,
      bookingLinks: needs.bookingLinks,
      bookings: needs.bookings,
      apiKeys: needs.apiKeys,
      principals: needs.principals,
    });
    return { api: {}, routes: (app) => pageRoutes(app, pages) };
  },
});
