/** The problem `code`s the principals module answers (docs/api.md, Errors): its part of the closed set. */
import { errorCodes } from '../../platform/errors.js';

export const PRINCIPAL_CODES = errorCodes('principals', {
  live_mode_only: {
    status: 403,
    meaning:
      'A test key asked to change something shared by both modes (here: the schedule of the account’s or a user’s own principal); use a live key or a session, or a test host',
  },
});
type Codes = typeof PRINCIPAL_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}
