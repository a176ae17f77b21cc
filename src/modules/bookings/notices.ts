/**
 * What a booking tells others, inside the transaction that changes it (docs/design.md#bookings): its
 * mails (intents rendered after commit, mails.ts), the hosts' calendar meeting, and the waitlist offer of
 * time it frees. Shared by the write path (write.ts) and paid confirmation (paid.ts), which both hold it;
 * it holds neither.
 */
import type { Tx } from '../../db/store.js';
import { enqueue, type WriteBatch } from '../../jobs/runner.js';
import { addressOf } from '../../lib/mail-text.js';
import { iso } from '../../lib/time.js';
import type { Clock } from '../../platform/clock.js';
import type { BookingLink } from '../booking-links/api.js';
import type { PrincipalContact } from '../principals/api.js';
import type { BookingsNeeds } from './api.js';
import { type BookingsPlatform, contactOf, liveHosts, meetingOf, occupancyOf, titleOf } from './helpers.js';
import { type BookingMailKind, bookingMailIntents, type Contact, type SeriesMail } from './mails.js';
import type * as repo from './repo.js';
import { manageToken } from './tokens.js';

/** Queue of waitlist offers for freed time (waitlist.ts). */
export const WAITLIST_OFFER_QUEUE = 'waitlist-offer';

/**
 * What confirming a booking needs that is read outside its transaction: its link, its hosts'
 * contacts, and its hosts' occupancy at its time as their buffers are now.
 */
export interface Announcement {
  link: BookingLink | null;
  contacts: Map<string, PrincipalContact>;
  occupancy: repo.OccupancyRow[];
}

export class BookingNotices {
  private readonly clock: BookingsPlatform['clock'];
  private readonly config: BookingsPlatform['config'];
  private readonly linkKey: Buffer;

  constructor(
    platform: Pick<BookingsPlatform, 'clock' | 'config' | 'keys'>,
    private readonly needs: Pick<BookingsNeeds, 'calendars' | 'mail' | 'bookingLinks' | 'principals'>,
  ) {
    this.clock = platform.clock;
    this.config = platform.config;
    this.linkKey = platform.keys.linkKey;
  }

  manageUrl(token: string): string {
    return `${this.config.baseUrl}/b/${token}`;
  }

  /** Confirmation mails and the hosts' calendars of a confirmed booking (in its transaction). */
  async announce(
    trx: Tx,
    booking: repo.BookingRow,
    link: BookingLink | null,
    contacts: Map<string, PrincipalContact>,
    token?: string,
    batch?: WriteBatch,
  ): Promise<void> {
    const written = await this.needs.calendars.writeMeeting(trx, meetingOf(booking, link), batch);
    await this.mailAbout(
      trx,
      'confirmation',
      booking,
      link,
      booking.host_ids.map((h) => contactOf(contacts, h, written)),
      token,
      batch,
    );
  }

  /** What confirming a booking needs (a paid one, paid.ts), read before its transaction. */
  async announcementOf(b: repo.BookingRow): Promise<Announcement> {
    const [link, contacts, profiles] = await Promise.all([
      b.booking_link_id ? this.needs.bookingLinks.get(b.account_id, b.booking_link_id) : null,
      this.needs.principals.contacts(b.host_ids),
      this.needs.principals.profiles(b.host_ids),
    ]);
    const slot = { start: new Date(b.start_time).getTime(), end: new Date(b.end_time).getTime() };
    // A seat's time is its session's: a seat paid too late is refunded, not taken again (paid.ts).
    const occupancy = b.seat_session_id
      ? []
      : liveHosts(b.host_ids, profiles).map((h) => occupancyOf(b.id, h, slot, b.livemode));
    return { link, contacts, occupancy };
  }

  async mailAbout(
    trx: Tx,
    kind: BookingMailKind,
    booking: repo.BookingRow,
    link: BookingLink | null,
    hosts: Contact[],
    token?: string,
    batch?: WriteBatch,
    series?: SeriesMail,
  ): Promise<void> {
    const manage = token ?? manageToken(this.linkKey, booking.id, booking.manage_nonce);
    // Intents: the mails are rendered by the mail worker after commit (mails.ts, bookingMailRenderer).
    await this.needs.mail.enqueue(
      trx,
      bookingMailIntents({
        kind,
        booking,
        title: titleOf(booking, link),
        hosts,
        manageUrl: this.manageUrl(manage),
        fromAddress: addressOf(this.config.mailFrom),
        ...(series ? { series } : {}),
      }),
      batch,
    );
  }

  /**
   * Queues the waitlist offer of a booking's freed time (a link booking, not yet started by `clock`, the
   * booking's mode's; absent: the server's). The payload names the booking's mode.
   */
  async offerFreedTime(trx: Tx, b: repo.BookingRow, clock: Clock = this.clock): Promise<void> {
    // A seat frees a seat, not the hosts' time (the session still holds it while others sit in it).
    if (b.seat_session_id !== null) return;
    if (b.booking_link_id === null || new Date(b.start_time).getTime() <= clock.nowMs()) return;
    await enqueue(
      trx,
      WAITLIST_OFFER_QUEUE,
      {
        link_id: b.booking_link_id,
        account_id: b.account_id,
        principal_id: b.principal_id,
        host_ids: b.host_ids,
        start: iso(b.start_time),
        end: iso(b.end_time),
        livemode: b.livemode,
      },
      this.clock.now(),
    );
  }
}
