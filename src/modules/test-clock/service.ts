import type { Actor } from '../../platform/actor.js';
import { Forbidden, ValidationFailed } from '../../platform/errors.js';
import { FixedClock, type OffsetClock, TEST_CLOCK_MAX_OFFSET_MS } from '../../platform/test-clocks.js';
import type { Extensions, Platform } from '../module.js';
import type { TestClockApi, TimedWork } from './api.js';
import type { AdvanceBody, TestClockView } from './schemas.js';

/** More steps than any advance needs (each step does at least one piece of work); a guard, not a limit. */
const MAX_STEPS = 10_000;

/**
 * The test clock (docs/api.md#test-clock): read it, move it forward, and do the account's test-mode work
 * on it, from the work other modules contribute (`timedWork`).
 */
export class TestClockService implements TestClockApi {
  constructor(
    private readonly platform: Pick<Platform, 'testClocks' | 'clock' | 'log'>,
    private readonly extensions: Pick<Extensions, 'all'>,
  ) {}

  private get work(): readonly TimedWork[] {
    return this.extensions.all('timedWork');
  }

  /** The caller's test clock; a live caller has none (403 `test_mode_only`). */
  async get(actor: Actor): Promise<TestClockView> {
    testOnly(actor);
    return present(await this.platform.testClocks.testClock(actor.accountId));
  }

  /**
   * Moves the caller's test clock forward by `seconds` or to `to`, doing first, in time order, all the
   * account's test-mode work that falls due on the way (as at the time it fell due). Two advances at
   * once run one after the other; each answers the clock as its own move left it.
   */
  async advance(actor: Actor, body: AdvanceBody): Promise<TestClockView> {
    testOnly(actor);
    if ((body.seconds === undefined) === (body.to === undefined)) {
      throw new ValidationFailed({
        seconds: 'give exactly one of seconds and to',
        to: 'give exactly one of seconds and to',
      });
    }
    const clock = await this.platform.testClocks.moveForward(
      actor.accountId,
      (nowMs, offsetMs) => {
        const target =
          body.seconds !== undefined ? nowMs + body.seconds * 1000 : Date.parse(body.to as string);
        if (target <= nowMs) {
          throw new ValidationFailed({
            to: `must be after the test clock’s now (${new Date(nowMs).toISOString()})`,
          });
        }
        if (offsetMs + (target - nowMs) > TEST_CLOCK_MAX_OFFSET_MS) {
          const field = body.seconds !== undefined ? 'seconds' : 'to';
          throw new ValidationFailed({
            [field]: 'would put the test clock more than 400 days ahead of real time',
          });
        }
        return target;
      },
      (fromMs, toMs) => this.runUntil(actor.accountId, fromMs, toMs),
    );
    return present(clock);
  }

  /**
   * Does the account's test-mode work due up to `toMs`, one instant at a time: the earliest pending
   * deadline first, at that deadline's time (never before `fromMs`), then the next, so work one piece
   * makes (the next waitlist offer) is found and done at its own time too.
   */
  async runUntil(accountId: string, fromMs: number, toMs: number): Promise<void> {
    const until = new Date(toMs);
    for (let step = 0; step < MAX_STEPS; step++) {
      let next: number | null = null;
      for (const w of this.work) {
        const due = await w.nextDue(accountId, until);
        if (due !== null && (next === null || due.getTime() < next)) next = due.getTime();
      }
      if (next === null) return;
      const at = new FixedClock(Math.max(next, fromMs));
      for (const w of this.work) await w.runDue(accountId, at);
    }
    this.platform.log.error({ account_id: accountId }, 'test clock: work still due after the step limit');
  }

  /**
   * The periodic sweep of test mode: for each account with a test clock, the work due at its clock's
   * now, under the clock's lock (so never beside an advance of the same account).
   */
  async sweep(): Promise<void> {
    if (this.work.length === 0) return;
    for (const { accountId } of await this.platform.testClocks.all()) {
      await this.platform.testClocks.moveForward(
        accountId,
        (nowMs) => nowMs,
        (fromMs, toMs) => this.runUntil(accountId, fromMs, toMs),
      );
    }
  }
}

function testOnly(actor: Actor): void {
  if (actor.livemode) {
    throw new Forbidden('The test clock is for test keys (svc_sk_test_…); live keys and sessions have none', {
      code: 'test_mode_only',
    });
  }
}

function present(clock: OffsetClock): TestClockView {
  return { now: clock.now().toISOString(), offset_seconds: Math.floor(clock.offsetMs / 1000) };
}
