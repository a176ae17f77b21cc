/** The calendars module's public surface (docs/architecture.md#modules). */
export type { CalendarService as CalendarsApi } from './service.js';
