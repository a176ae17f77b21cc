// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { PrincipalsApi } from '../principals/api.js';
import { calendarRoutes } from './routes.js';
import { CalendarService } from './service.js';

export interface CalendarsNeeds {
  principals: Pick<PrincipalsApi, 'isManagedHost' | 'storedZoneOf'> & {
    access: Pick<PrincipalsApi['access'], 'mayActFor'>;
  };
}

/**
 * Connected calendars (Google, Microsoft, CalDAV, ICS), connect links, busy time kept fresh in the
 * background. Contributes the calendar busy source to availability and the calendar status to hosts.
 */
export const calendarsModule = defineModule<CalendarsNeeds>()({
  name: 'calendars',
  needs: ['principals'],
  create({ platform, needs }) {
    const { db, clock, config, keys, log } = platform;
    const principals = needs.principals;
    const calendars = new CalendarService({
      db,
      clock,
      config,
      keys,
      directory: {
        mayActFor: (actor, principalId) => principals.access.mayActFor(actor, principalId),
        isManagedHost: (accountId: string, principalId: string) =>
          principals.isManagedHost(accountId, principalId),
        timeZoneOf: (principalId: string) => principals.storedZoneOf(principalId),
      },
      log,
    });
    const { jobs, schedules } = calendars.work();
    return {
      api: calendars,
      routes: (app) => calendarRoutes(app, calendars),
      jobs,
      schedules,
      // Busy reads are kept in memory once changes can be heard from every process.
      listen: [(notifier) => calendars.busySource.listen(notifier)],
      contributes: { busySources: [calendars.busySource], calendarStatus: [calendars] },
    };
  },
});
