/** The calendars module's public surface (docs/architecture.md#modules). */
export type { CalendarSync, CalendarService as CalendarsApi, MeetingSpec } from './service.js';
