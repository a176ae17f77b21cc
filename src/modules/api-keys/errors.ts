/** The problem `code`s the API-keys module answers (docs/api.md, Errors): its part of the closed set. */
import { errorCodes } from '../../platform/errors.js';

export const KEY_CODES = errorCodes('api-keys', {
  live_mode_only: {
    status: 403,
    meaning: 'A test key asked for something of live mode (here: a live key); use a live key or a session',
  },
});
type Codes = typeof KEY_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}
