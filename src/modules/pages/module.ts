import { defineModule } from '../module.js';
import type { PagesApi, PagesNeeds } from './api.js';
import { pageRoutes } from './routes.js';
import { PageService } from './service.js';
import { siteRoutes } from './site.js';

/**
 * The pages Kairos serves to people: the booking page, the attendee's page, the pages behind the
 * other mailed links (`/p/`, `/w/`, `/invitations/`) and the embed (`/embed.js`), with their client
 * code bundled from src/web at first use (docs/design.md#pages); the site's front (`/`, the problem
 * type pages `/errors/…`, the favicon). No API of its own.
 */
export const pagesModule = defineModule<PagesNeeds>()({
  name: 'pages',
  needs: ['apiKeys', 'bookingLinks', 'bookings', 'principals', 'network'],
  create({ platform, needs, extensions }) {
    const pages = new PageService(platform, needs, extensions);
    const api: PagesApi = {};
    return {
      api,
      routes: (app) => {
        pageRoutes(app, pages);
        siteRoutes(app, () => platform.config.baseUrl);
      },
    };
  },
});
