/** Half-open UTC interval in epoch milliseconds. */
export interface Interval {
  start: number;
  end: number;
}

export interface BusyAnswer {
  /**
   * Busy time inside the asked window, normalized (sorted, merged). Sources may hand out the same
   * array for the same question again (availability remembers answers by it): never mutate it. A
   * source that returns a new array each time still gives correct answers, only never remembered
   * ones; when two sources both have busy time, availability merges them into a new array per request
   * (to remember those too, that merge would have to be memoized by the pair of arrays).
   */
  intervals: readonly Interval[];
  /** True when a provider could not be reached and the answer is the last known busy time. */
  stale: boolean;
  /** When the answer was last confirmed by its source (ms), for freshness reporting. */
  asOf: number;
}

/**
 * Something that knows when a principal is busy. Availability reads busy time only through this
 * interface: the calendars module registers one source (connected calendars), the bookings module
 * another (confirmed and held bookings).
 */
export interface BusySource {
  readonly name: 'calendar' | 'booking';
  /**
   * Busy time of one principal in a window. Returns null when this source knows nothing about the
   * principal (for the calendar source: no connected calendar). Throws ServiceUnavailable when the
   * source failed and nothing is cached: never "all free".
   */
  busy(principalId: string, window: Interval): Promise<BusyAnswer | null>;
  /**
   * The busy occurrences behind `busy` with their events' titles, for readers allowed to see details
   * (`availability:read:details`); read from the source itself, never remembered. Optional: sources
   * without titles leave it out.
   */
  titles?(principalId: string, window: Interval): Promise<readonly TitledInterval[]>;
}

/** A busy occurrence with its event's title. */
export interface TitledInterval extends Interval {
  title: string;
}
