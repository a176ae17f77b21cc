/**
 * The one source of time for services, jobs and caches, so tests can move time. Date.now() is read
 * directly only for real elapsed time (jobs/runner.ts's store-retry deadline, cluster.ts) and as the
 * default time of platform/ids.ts.
 */
export interface Clock {
  now(): Date;
  /** Milliseconds since the epoch; same instant as now(). */
  nowMs(): number;
}

export const systemClock: Clock = {
  now: () => new Date(),
  nowMs: () => Date.now(),
};

/** A clock that only moves when told to. For tests of retries, expiries and reapers. */
export class FakeClock implements Clock {
  private ms: number;
  constructor(start: Date | string | number = '2026-06-01T12:00:00.000Z') {
    this.ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  nowMs(): number {
    return this.ms;
  }
  set(to: Date | string | number): void {
    this.ms = new Date(to).getTime();
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
