// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { CalendarsApi, CalendarsNeeds } from './api.js';
import { calendarRoutes } from './routes.js';
import { CalendarService } from './service.js';

/**
 * Connected calendars (Google, Microsoft, CalDAV, ICS), connect links, busy time kept fresh in the
 * background. Contributes the calendar busy source to availability and the calendar status to hosts.
 */
export const calendarsModule = defineModule<CalendarsNeeds>()({
  name: 'calendars',
  needs: ['principals'],
  create({ platform, needs }) {
    const calendars = new CalendarService(platform, needs);
    const { jobs, schedules } = calendars.work();
    const api: CalendarsApi = calendars;
    return {
      api,
      routes: (app) => calendarRoutes(app, calendars),
      jobs,
      schedules,
      // Busy reads are kept in memory once changes can be heard from every process.
      listen: [(notifier) => calendars.busySource.listen(notifier)],
      contributes: { busySources: [calendars.busySource], calendarStatus: [calendars] },
    };
  },
});
