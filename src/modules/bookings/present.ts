/** How bookings and waitlist entries look on the wire (docs/api.md#bookings, #waitlist). */
import { publicName } from '../../lib/mail-text.js';
import type { BookingRow, WaitlistRow } from './repo.js';
import type { SeriesRow } from './series-repo.js';
import { isoOrNull } from '../../lib/time.js';

/** The `booking` object of the authenticated API and of booking events. */
export function presentBooking(b: BookingRow) {
  return {
    id: b.id,
    status: b.status,
    principal_id: b.principal_id,
    host_ids: b.host_ids,
    booking_link_id: b.booking_link_id,
    title: b.title,
    ...customerView(b),
    metadata: b.metadata,
    no_show: b.no_show ?? [],
    seat_session_id: b.seat_session_id ?? null,
    ...paymentAndLife(b),
  };
}

export type PresentedBooking = ReturnType<typeof presentBooking>;

/**
 * The attendee's view (public surface, by token): their own booking, the hosts by display name only —
 * no principal, link or other party's ids or addresses, no owner metadata.
 */
export function presentPublicBooking(b: BookingRow, title: string, hostNames: readonly string[]) {
  return {
    id: b.id,
    status: b.status,
    title,
    hosts: hostNames.map((display_name) => ({ display_name })),
    // The SEQUENCE of the booking's latest invite, for the page's "Add to calendar" file.
    sequence: b.sequence,
    ...customerView(b),
    ...paymentAndLife(b),
  };
}

/** Time and what the customer gave: the same in both views. */
function customerView(b: BookingRow) {
  return {
    start_time: isoOrNull(b.start_time) as string,
    end_time: isoOrNull(b.end_time) as string,
    customer_email: b.customer_email,
    customer_name: b.customer_name,
    customer_timezone: b.customer_timezone,
    notes: b.notes,
    answers: b.answers,
    guests: b.guests ?? [],
    livemode: b.livemode,
  };
}

/** Payment (its link and deadline only while pending), cancellation and timestamps: both views. */
function paymentAndLife(b: BookingRow) {
  const pending = b.status === 'pending_payment';
  return {
    payment_amount: b.payment_amount,
    payment_currency: b.payment_currency,
    checkout_url: pending ? b.checkout_url : null,
    payment_expires_at: pending ? isoOrNull(b.payment_expires_at) : null,
    refund_status: b.refund_status,
    cancellation_reason: b.cancellation_reason,
    cancelled_at: isoOrNull(b.cancelled_at),
    series_id: b.series_id ?? null,
    created_at: isoOrNull(b.created_at) as string,
    updated_at: isoOrNull(b.updated_at) as string,
  };
}

/** The entry as the visitor who joined sees it. */
export function presentPublicEntry(e: WaitlistRow) {
  return {
    id: e.id,
    status: e.status,
    preferred_from: isoOrNull(e.preferred_from) as string,
    preferred_to: isoOrNull(e.preferred_to) as string,
    livemode: e.livemode,
    created_at: isoOrNull(e.created_at) as string,
  };
}

/** The entry as the link's owner sees it. */
export function presentEntry(e: WaitlistRow) {
  return {
    ...presentPublicEntry(e),
    booking_link_id: e.booking_link_id,
    customer_email: e.customer_email,
    customer_name: e.customer_name,
    notes: e.notes,
    offer:
      e.status === 'offered' && e.offer_start && e.offer_end && e.offer_expires_at
        ? {
            start_time: isoOrNull(e.offer_start) as string,
            end_time: isoOrNull(e.offer_end) as string,
            expires_at: isoOrNull(e.offer_expires_at) as string,
          }
        : null,
    booking_id: e.booking_id,
    updated_at: isoOrNull(e.updated_at) as string,
  };
}

/** The title of a booking made without a link (docs/api.md#bookings): "Meeting with" its hosts' names. */
export function meetingWith(names: readonly string[]): string {
  // A title is shown to the customer (page, mails): names only, never an address.
  const named = names.filter((n) => n.trim() !== '').map((n) => publicName(n));
  if (named.length === 0) return 'Meeting';
  const list = named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
  return `Meeting with ${list}`;
}

/** A recurring series as its attendee sees it: its rule and occurrences, no host ids. */
export function presentPublicSeries(s: SeriesRow, occurrences: readonly BookingRow[]) {
  return {
    id: s.id,
    recurrence: { frequency: s.frequency, interval: s.interval, count: s.count, timezone: s.timezone },
    occurrences: occurrences.map((o) => ({
      booking_id: o.id,
      start_time: isoOrNull(o.start_time) as string,
      end_time: isoOrNull(o.end_time) as string,
      status: o.status,
    })),
  };
}

/** The `series` object of the authenticated API (docs/api.md#recurring-series). */
export function presentSeries(s: SeriesRow, occurrences: readonly BookingRow[]) {
  return {
    ...presentPublicSeries(s, occurrences),
    principal_id: s.principal_id,
    booking_link_id: s.booking_link_id,
    livemode: s.livemode,
    created_at: isoOrNull(s.created_at) as string,
  };
}
