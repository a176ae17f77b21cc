/**
 * The test clock's public surface (docs/api.md#test-clock): types only. Modules with timed work (payment
 * holds, waitlist offers, proposal and consent expiry, reminders) contribute a `TimedWork` so that an
 * account's test mode runs on its test clock: the periodic sweep does what became due as the clock
 * runs, and an advance does everything that fell due in the time it skipped, in order, before it answers.
 */
import type { Clock } from '../../platform/clock.js';

/** The test clock needs no other module. */
export type TestClockNeeds = Record<never, never>;

/** Nothing other modules call: they contribute `timedWork` instead. */
export type TestClockApi = Record<never, never>;

/**
 * One kind of timed work of test mode, for one account at a time. Work for live mode never comes here:
 * each module's own schedules and jobs do it on the server's clock, and leave test-mode objects alone.
 */
export interface TimedWork {
  /** Names the work in logs. */
  name: string;
  /**
   * The earliest time at or before `until` at which some of the account's test-mode work of this kind
   * is due and not yet done (it may be in the past: work the sweep has not reached), or null.
   */
  nextDue(accountId: string, until: Date): Promise<Date | null>;
  /**
   * Does all of the account's test-mode work of this kind that is due at `clock.now()` or before, as it
   * would have been done at that time: whatever it stamps (events, mails, `cancelled_at`) reads
   * `clock`. Safe to run twice (work is claimed by its state, as the live sweeps do).
   */
  runDue(accountId: string, clock: Clock): Promise<void>;
}

declare module '../module.js' {
  interface ExtensionPointTypes {
    /** Test-mode work that runs on an account's test clock (bookings, network, proposals). */
    timedWork: TimedWork;
  }
}
