import type { Interval } from '../../lib/intervals.js';

export interface BusyAnswer {
  /**
   * Busy time inside the asked window, normalized (sorted, merged). Sources may hand out the same
   * array for the same question again (availability remembers answers by it): never mutate it. A
   * source that returns a new array each time still gives correct answers, only never remembered
   * ones; when two sources both have busy time, availability merges them into a new array per request
   * (to remember those too, that merge would have to be memoized by the pair of arrays).
   */
  intervals: readonly Interval[];
  /**
   * The source's whole known busy time of which `intervals` is the part inside the window, when it
   * has one list: normalized, complete inside [start, end), and the same array while unchanged (like
   * `intervals`). Lets availability remember slots by day across questions (days.ts). Optional.
   */
  whole?: WholeBusy;
  /** True when a provider could not be reached and the answer is the last known busy time. */
  stale: boolean;
  /** When the answer was last confirmed by its source (ms), for freshness reporting. */
  asOf: number;
}

export interface BusyOptions {
  unclipped?: boolean;
  /**
   * The mode asking (docs/api.md#test-mode); absent: live. Live mode sees live bookings only; test mode
   * sees live and test bookings (live ones are busy in test availability). Calendars have no mode.
   */
  livemode?: boolean;
}

/** A source's whole known busy time of a principal: `intervals` is complete inside [start, end). */
export interface WholeBusy {
  intervals: readonly Interval[];
  start: number;
  end: number;
}

/**
 * Something that knows when a principal is busy. Availability reads busy time only through this
 * interface: the calendars module registers one source (connected calendars), the bookings module
 * another (confirmed and held bookings), the outOfOffice module a third (out-of-office ranges, busy as
 * calendar time is: buffers keep slots off them; docs/api.md#out-of-office).
 */
export interface BusySource {
  readonly name: 'calendar' | 'booking' | 'out_of_office';
  /**
   * Busy time of one principal in a window. Returns null when this source knows nothing about the
   * principal (for the calendar source: no connected calendar). Throws ServiceUnavailable when the
   * source failed and nothing is cached: never "all free". With `unclipped`, a source that answers
   * from a whole list may hand that list out as `intervals` (busy time outside the window too),
   * saving the cut: availability asks so where busy time outside the window changes nothing.
   */
  busy(principalId: string, window: Interval, opts?: BusyOptions): Promise<BusyAnswer | null>;
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
