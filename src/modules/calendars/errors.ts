/** The problem `code`s the calendars module answers (docs/api.md, Errors): its part of the closed set. */
import { errorCodes } from '../../platform/errors.js';

export const CALENDAR_CODES = errorCodes('calendars', {
  calendar_read_only: { status: 422, meaning: 'An ICS feed cannot be the destination for written meetings' },
  calendar_unavailable: {
    status: 503,
    meaning:
      'A calendar could not be read and nothing usable is cached (principal_id, connection_id, provider)',
  },
  calendar_disconnected: {
    status: 503,
    meaning: 'A calendar’s access was revoked and nothing usable is cached; reconnect it',
  },
  live_mode_only: {
    status: 403,
    meaning:
      'A test key asked to change something shared with live mode (here: the calendars of the account’s or a user’s own principal); use a live key or a session, or a test host',
  },
});
type Codes = typeof CALENDAR_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}
