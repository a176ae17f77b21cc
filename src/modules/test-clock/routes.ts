import { actorOf } from '../../platform/actor.js';
import { answer, withExample } from '../../platform/openapi.js';
import type { TypedApp } from '../../platform/routes.js';
import { wrap } from '../../platform/schemas.js';
import { AdvanceBody, TestClock } from './schemas.js';
import type { TestClockService } from './service.js';

const CLOCK = { now: '2054-06-09T09:00:00.000Z', offset_seconds: 604_800 };
const TEST_ONLY = {
  '403': { description: 'A live key or a session (`test_mode_only`)', codes: ['test_mode_only' as const] },
};

/** The test clock's routes (docs/api.md#test-clock): test keys only. */
export function testClockRoutes(app: TypedApp, clocks: TestClockService): void {
  const tags = ['Test mode'];

  app.get(
    '/v1/test-clock',
    {
      config: { access: 'private', problems: TEST_ONLY },
      schema: {
        operationId: 'getTestClock',
        tags,
        summary: 'The test clock of the caller’s account (test keys only)',
        response: { 200: answer('The test clock', wrap('test_clock', TestClock), { test_clock: CLOCK }) },
      },
    },
    async (request) => ({ test_clock: await clocks.get(actorOf(request.caller)) }),
  );

  app.post(
    '/v1/test-clock/advance',
    {
      config: { access: 'private', idempotent: true, problems: TEST_ONLY },
      schema: {
        operationId: 'advanceTestClock',
        tags,
        summary: 'Move the test clock forward; what falls due on the way is done before this answers',
        description:
          'Forward only, at most 400 days ahead of real time in all. Every timed thing of the account’s ' +
          'test mode runs on this clock: "in the past" checks, minimum notice, payment and waitlist ' +
          'holds, proposal, poll and consent expiry. The work that falls due in the time skipped is done ' +
          'in time order, at the time it fell due (its events and suppressed mails included), before ' +
          'the answer; two advances at once run one after the other. Live mode is never affected.',
        body: withExample(AdvanceBody, { seconds: 604_800 }),
        response: {
          200: answer('The test clock, moved', wrap('test_clock', TestClock), { test_clock: CLOCK }),
        },
      },
    },
    async (request) => ({ test_clock: await clocks.advance(actorOf(request.caller), request.body) }),
  );
}
