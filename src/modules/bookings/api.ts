/**
 * The bookings module's public surface (docs/architecture.md#modules): types only. What other modules
 * may call (`BookingsApi`, implemented by the bookings service) and what this module needs from the
 * modules built before it (`BookingsNeeds`, declared once here and taken as it is by the service).
 */
import type { Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { Tx } from '../../db/store.js';
import type { Interval } from '../../lib/intervals.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import type { AvailabilityApi } from '../availability/api.js';
import type { BookingLink, BookingLinksApi } from '../booking-links/api.js';
import type { CalendarsApi } from '../calendars/api.js';
import type { MailApi } from '../mail/api.js';
import type { PaymentsApi } from '../payments/api.js';
import type { PrincipalProfile, PrincipalsApi } from '../principals/api.js';
import type { WebhooksApi } from '../webhooks/api.js';
import type { PublicLinkAnswer } from './schemas.js';
import type { BookingsTable } from './tables.js';

export type { BookingStatus } from './tables.js';

/** A stored booking, as the bookings table holds it. */
export type BookingRow = Selectable<BookingsTable>;

/** What the bookings module needs from the modules built before it. */
export interface BookingsNeeds {
  principals: Pick<PrincipalsApi, 'profiles' | 'contacts' | 'lockedProfiles'> & {
    access: Pick<PrincipalsApi['access'], 'actingFor'>;
  };
  availability: Pick<AvailabilityApi, 'refusal' | 'scheduleRefusal' | 'linkSlots'>;
  bookingLinks: Pick<BookingLinksApi, 'get' | 'bySlug'>;
  mail: Pick<MailApi, 'enqueue'>;
  calendars: Pick<CalendarsApi, 'writeMeeting' | 'removeMeeting' | 'calendarSync'>;
  payments: Pick<PaymentsApi, 'payee' | 'createCheckout' | 'expireCheckout' | 'refund' | 'sessionState'>;
  webhooks: Pick<WebhooksApi, 'emit'>;
}

/** The bookings an accepted proposal makes (docs/design.md#proposals-and-polls). */
/** Whom a meeting's booking is with, as its customer fields show it. */
export interface MeetingCustomer {
  name: string;
  email: string;
  timezone: string | null;
}

export interface MeetingBookingInput {
  proposalId: string;
  /** Everyone the meeting occupies, each booked in their own account. */
  principals: readonly PrincipalProfile[];
  slot: Interval;
  /**
   * Each booking's customer, by the principal booked: the other side of the meeting (the requester's
   * booking: its participants or the poll's voters; a participant's: the requester). Every principal
   * of `principals` has one.
   */
  customers: ReadonlyMap<string, MeetingCustomer>;
  notes: string | null;
  metadata: Record<string, string>;
  /** What the bookings are called: the proposal's title, or a name made from its parties (`meetingTitle`). */
  title: string;
  /**
   * The proposal's mode (docs/api.md#test-mode): the bookings, their occupancy and events are of it; a
   * test meeting is refused (`taken`) where live time is taken. Absent: live.
   */
  livemode: boolean;
  /** That mode's clock (the bookings' `created_at`); absent: the server's. */
  clock?: Clock;
}

/**
 * What a meeting's bookings came to: `booked`, or `taken` when anyone's time was already taken (or two
 * takers of it deadlocked). After `taken` with `ifTaken: 'abort'` the caller's transaction is failed and
 * must end; with `'undo'` only the meeting's writes were undone and the transaction goes on.
 */
export type MeetingBooked = 'booked' | 'taken';

export interface BookingsApi {
  /**
   * Books everyone of an accepted proposal at once inside its transaction (all or nothing), with
   * booking.created to each booking's account; a taken time is answered, not thrown (`MeetingBooked`).
   */
  takeMeeting(trx: Tx, m: MeetingBookingInput, ifTaken: 'abort' | 'undo'): Promise<MeetingBooked>;
  /** Cancels the bookings of a cancelled proposal inside its transaction; answers whose time was freed. */
  cancelMeeting(trx: Tx, proposalId: string, reason: string | null): Promise<string[]>;
  /**
   * The live (confirmed or pending payment) bookings of one mode occupying `principalId` that overlap
   * `range`, by start: what a new out-of-office range names as its conflicts (docs/api.md#out-of-office).
   */
  liveBookingsIn(principalId: string, livemode: boolean, range: Interval): Promise<BookingSpan[]>;
  /** Drops this process's copy of these principals' booked time (after a commit that changed it). */
  busyChanged(principalIds: Iterable<string>): void;
  /** The title of a booking made without a link (docs/api.md#bookings): "Meeting with" these names. */
  meetingTitle(names: readonly string[]): string;
  /**
   * The live, active link behind a slug as `caller` may see it (docs/api.md#public-booking-surface);
   * anything else is 404.
   */
  publicLink(caller: Caller, slug: string): Promise<BookingLink>;
  /** GET /v1/public/links/{slug}: what a booking page shows; no ids, no e-mails. */
  publicLinkView(caller: Caller, slug: string): Promise<Static<typeof PublicLinkAnswer>>;
  /** The booking behind a self-service token, while its link works; else 404. */
  byToken(token: string): Promise<BookingRow>;
  /**
   * Whether a self-service token was ever issued (its booking exists), however long ago: the page of a
   * token `byToken` refuses tells an expired link (410) from a wrong one (404). Compares its hash only.
   */
  manageTokenIssued(token: string): Promise<boolean>;
  /** The waitlist entry behind a claim link (compared by its hash), as stored; null: no such entry. */
  waitlistClaim(token: string): Promise<WaitlistClaim | null>;
}

/** A booking's id and time (`liveBookingsIn`). */
export interface BookingSpan extends Interval {
  id: string;
}

/** A waitlist entry as its claim link's page shows it (`waitlistClaim`). */
export interface WaitlistClaim {
  accountId: string;
  bookingLinkId: string;
  customerName: string;
  status: 'waiting' | 'offered' | 'booked' | 'expired' | 'removed';
  offerStart: Date | null;
  offerEnd: Date | null;
  offerExpiresAt: Date | null;
}
