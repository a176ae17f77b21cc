/** The test clock's request and answer schemas (docs/design.md#openapi). */
import { type Static, Type } from '@sinclair/typebox';
import { named, Timestamp } from '../../platform/schemas.js';
import { TEST_CLOCK_MAX_OFFSET_MS } from '../../platform/test-clocks.js';

const MAX_SECONDS = TEST_CLOCK_MAX_OFFSET_MS / 1000;

export const TestClock = named(
  'TestClock',
  Type.Object({
    now: Timestamp,
    offset_seconds: Type.Integer({
      minimum: 0,
      maximum: MAX_SECONDS,
      description: 'how far the test clock runs ahead of real time',
    }),
  }),
);
export type TestClockView = Static<typeof TestClock>;

export const AdvanceBody = Type.Object(
  {
    seconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_SECONDS, description: 'how far to move the clock forward' }),
    ),
    to: Type.Optional(
      Type.String({ format: 'date-time', description: 'the instant to move the clock to (after its now)' }),
    ),
  },
  {
    additionalProperties: false,
    'x-checks': [
      'exactly one of `seconds` and `to`',
      '`to` is after the clock’s now',
      'the clock runs at most 400 days ahead of real time, in all',
    ],
  },
);
export type AdvanceBody = Static<typeof AdvanceBody>;
