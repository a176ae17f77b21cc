/** The problem `code`s the test-clock module answers (docs/api.md, Errors): its part of the closed set. */
import { errorCodes } from '../../platform/errors.js';

export const TEST_CLOCK_CODES = errorCodes('test-clock', {
  test_mode_only: {
    status: 403,
    meaning: 'Only a test key may read or move the test clock (a live key or a session asked)',
  },
});
type Codes = typeof TEST_CLOCK_CODES;

declare module '../../platform/errors.js' {
  interface ErrorCodes extends Codes {}
}
