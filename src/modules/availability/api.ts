/**
 * The availability module's public surface (docs/architecture.md#modules): types only. What other
 * modules may call (`AvailabilityApi`, implemented by the availability service), what it needs
 * (`AvailabilityNeeds`), and the busy-source contract other modules contribute to.
 */
import type { Static } from '@sinclair/typebox';
import type { Interval } from '../../lib/intervals.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import type { PrincipalProfile, PrincipalsApi } from '../principals/api.js';
import type { SlotsQuery } from './schemas.js';

export type { Interval } from '../../lib/intervals.js';
export type {
  BusyAnswer,
  BusyOptions,
  BusySource,
  TitledInterval,
  WholeBusy,
} from './busy-source.js';

declare module '../module.js' {
  interface ExtensionPointTypes {
    /** Where availability reads busy time (calendars, bookings). */
    busySources: import('./busy-source.js').BusySource;
  }
}

/** What availability needs: principals' profiles and their access rules. */
export interface AvailabilityNeeds {
  principals: Pick<PrincipalsApi, 'profiles'> & { access: Pick<PrincipalsApi['access'], 'canReadMany'> };
}

/** Why a slot cannot be booked for a host (before other bookings are looked at). */
export type SlotRefusal =
  | 'minimum_notice'
  | 'max_days_ahead'
  | 'outside_working_hours'
  | 'calendar_busy'
  | 'out_of_office';

/** A booking link's overrides of its hosts' schedules; null or absent: the schedule decides. */
export interface BookingLimits {
  minimumNoticeMinutes?: number | null;
  maxDaysAhead?: number | null;
}

export interface LinkSlotsInput {
  hosts: readonly PrincipalProfile[];
  mode: 'any' | 'all';
  window: Interval;
  durationMinutes: number;
  timezone: string;
  limits: BookingLimits;
  /** The link's mode (docs/api.md#test-mode): test mode counts live bookings as busy too. */
  livemode: boolean;
  /** The link's mode's clock: the server's, or the account's test clock. */
  clock: Clock;
  /** A seated link (docs/api.md#seats): its capacity and its sessions in (or near) the window. */
  seats?: LinkSeatsInput;
}

/** A seated link's seats, for its slots (docs/design.md#series-and-seats). */
export interface LinkSeatsInput {
  /** Seats of a slot that has no session yet. */
  capacity: number;
  /** Whether each slot says `seats_remaining`. */
  showRemaining: boolean;
  /** The link's sessions overlapping the window (their own seats, and the occupancy they hold). */
  sessions: readonly SeatSessionSlot[];
}

/** One session of a seated link: its slot, its seats, and the hosts' time it holds. */
export interface SeatSessionSlot {
  start: number;
  end: number;
  /** The session's own capacity (copied from the link when it was made). */
  capacity: number;
  seatsTaken: number;
  /** Its occupancy rows (padded with buffers), one per host it holds. */
  occupancy: readonly { principalId: string; start: number; end: number }[];
}

/** GET /v1/availability/slots's query, once checked against its schema (defaults filled in). */
export type SlotsParams = Static<typeof SlotsQuery>;

/**
 * What availability answers for other modules: the bookings module (docs/api.md#bookings,
 * #public-booking-surface) and the MCP tools (docs/mcp.md).
 */
export interface AvailabilityApi {
  /**
   * Why `slot` cannot be booked for host `p`: outside its working hours, inside its minimum notice,
   * beyond its horizon, inside an out-of-office range or against calendar busy time (both with its
   * buffers); null when none applies. Other bookings are not looked at: the exclusion constraint
   * decides those when the booking is written. `limits` are a booking link's overrides (null: the
   * host's schedule decides). `clock`: the booking's mode's (notice and horizon count from its now; a
   * test clock in test mode). `livemode`: the booking's mode (absent: live), whose out-of-office
   * ranges count (test mode: live and test ranges).
   */
  refusal(
    p: PrincipalProfile,
    slot: Interval,
    limits: BookingLimits,
    clock: Clock,
    livemode?: boolean,
  ): Promise<SlotRefusal | null>;
  /**
   * The part of `refusal` that depends on the schedule alone (notice, horizon, working hours): no I/O,
   * so a booking repeats it inside its transaction against the schedule it has locked.
   */
  scheduleRefusal(
    p: PrincipalProfile,
    slot: Interval,
    limits: BookingLimits,
    clock: Clock,
  ): SlotRefusal | null;
  /**
   * The bookable slots of a booking link (GET /v1/public/links/{slug}/availability) as JSON text: `any`
   * host free (single, round robin) or `all` free (collective), under the link's limits.
   */
  linkSlots(input: LinkSlotsInput): Promise<Buffer | string>;
  /**
   * GET /v1/availability/slots for `caller` as JSON text: the route's answer, with its access rules
   * (403 for a principal the caller may not read), cross-field checks and problems (thrown AppErrors).
   * `params` must already satisfy the route's query schema. A remembered answer read without a consent
   * is the same object each time, until anything it was computed from changes (then another object).
   * `zoned`: every instant written with the offset of the answer's `timezone` (present.ts), as the
   * MCP tools show times; the route's own answer is in UTC.
   */
  slots(caller: Caller, params: SlotsParams, zoned?: boolean): Promise<Buffer | string>;
}
