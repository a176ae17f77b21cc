/**
 * The bookingLinks module's public surface: what other modules may import (docs/architecture.md#modules).
 * A booking link is a bookable page of an account (docs/api.md#booking-links): its hosts, durations,
 * questions, price and limits, found by id (owners) or by slug (the public booking surface).
 */
import type { PrincipalsApi } from '../principals/api.js';

/** What booking links need: the principals module's answer to "may the caller act for this principal". */
export interface BookingLinksNeeds {
  principals: { access: Pick<PrincipalsApi['access'], 'mayActFor'> };
}

export type Assignment = 'single' | 'round_robin' | 'collective';

export type QuestionType = 'text' | 'textarea' | 'email' | 'phone' | 'select' | 'checkbox';

export interface LinkQuestion {
  id: string;
  label: string;
  type: QuestionType;
  required: boolean;
  /** The choices of a `select` question (and only of one). */
  options?: string[];
}

/** What recurrence a link lets its public bookers ask for (docs/api.md#recurring-series). */
export interface LinkRecurrence {
  frequencies: ('daily' | 'weekly' | 'monthly')[];
  /** The most occurrences a public series may have (2–52). */
  max_count: number;
}

/** A seated link's seats (docs/api.md#seats). */
export interface LinkSeats {
  /** Customers per slot (2–500). */
  capacity: number;
  /** Whether the public slots show `seats_remaining`. */
  showRemaining: boolean;
}

export interface BookingLink {
  id: string;
  accountId: string;
  /**
   * Its mode (docs/api.md#test-mode): false for a link made with a test key. The public surface acts
   * in it (and on its clock); owners of the other mode never see the link.
   */
  livemode: boolean;
  slug: string;
  title: string;
  description: string;
  /** The duration offered first; one of `durations`. */
  defaultDuration: number;
  /** The durations a booker may pick from, sorted ascending, distinct. */
  durations: number[];
  /** Lower-case principal UUIDs, in the order given. */
  hostIds: string[];
  assignment: Assignment;
  questions: LinkQuestion[];
  /** Minor units; null: free. */
  priceAmount: number | null;
  /** Lower-case ISO 4217 code when priced, else null. */
  priceCurrency: string | null;
  /** Null: each host's schedule decides. */
  minimumNoticeMinutes: number | null;
  /** Null: each host's schedule decides. */
  maxDaysAhead: number | null;
  active: boolean;
  /** Null: the public surface refuses `recurrence` (400). */
  recurrence: LinkRecurrence | null;
  /** Null: one customer per slot. */
  seats: LinkSeats | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface BookingLinksApi {
  /**
   * A live (not deleted) link of this account, or null; of mode `livemode` when given (an actor's: a
   * link of the other mode is null), of either mode when left out (a booking's own link).
   */
  get(accountId: string, id: string, livemode?: boolean): Promise<BookingLink | null>;
  /**
   * The live link with this slug (active or not), of either mode (slugs are one namespace; the link
   * says its `livemode` and `accountId`), or null. Served from an in-process cache
   * invalidated by NOTIFY on channel kairos_booking_links, since public booking pages read it on
   * every request. The returned object is shared: callers must not mutate it.
   */
  bySlug(slug: string): Promise<BookingLink | null>;
  /** The JSON the API shows for a link (the `booking_link` object). */
  present(link: BookingLink): Record<string, unknown>;
}
