/**
 * The one write path of bookings (docs/api.md#bookings; docs/design.md#bookings).
 *
 * A booking takes time by inserting occupancy rows, one per host it occupies, padded with that host's
 * buffers; the exclusion constraint of migration 0008 refuses any overlap (SQLSTATE 23P01 → 409), so
 * no check-then-insert decides a race. Hours, notice, horizon and calendar busy time are checked first
 * (availability.refusal); the booking row, its occupancy, its event and its mails commit together.
 * Rescheduling and cancelling go through here too. The public surface (public.ts), the authenticated
 * API (service.ts) and the waitlist's claims (waitlist.ts) each hold this one writer; it holds what
 * tells others (notices.ts) and what a priced booking adds (paid.ts).
 */
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import { WriteBatch } from '../../jobs/runner.js';
import type { Interval } from '../../lib/intervals.js';
import type { Clock } from '../../platform/clock.js';
import { iso, MINUTE } from '../../lib/time.js';
import { Conflict, Unprocessable, ValidationFailed } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import type { BookingLimits, SlotRefusal } from '../availability/api.js';
import type { BookingLink } from '../booking-links/api.js';
import type { PrincipalContact, PrincipalProfile } from '../principals/api.js';
import type { BookingsNeeds } from './api.js';
import type { BookingBusySource } from './busy.js';
import {
  type BookingsPlatform,
  contactOf,
  limitsOf,
  liveHosts,
  meetingOf,
  type Mode,
  occupancyOf,
  type ReturnUrls,
  slotUnavailable,
} from './helpers.js';
import type { BookingNotices } from './notices.js';
import type { PaidBookings, PaidHold } from './paid.js';
import { meetingWith, presentBooking } from './present.js';
import * as repo from './repo.js';
import { seriesMail } from './series-mails.js';
import * as seriesRepo from './series-repo.js';
import { manageToken, newManageNonce, tokenHash } from './tokens.js';

export type Assignment = 'single' | 'round_robin' | 'collective';

/** Everything needed to write one booking. */
export interface Plan {
  accountId: string;
  link: BookingLink | null;
  /** Hosts in the order to try (round robin) or all of them (collective). */
  hosts: PrincipalProfile[];
  assignment: Assignment;
  slot: Interval;
  customer: { email: string; name: string; timezone: string | null };
  /** More attendees' addresses (lowercase, distinct): mailed and invited, never managing it. */
  guests?: readonly string[];
  notes: string | null;
  answers: Record<string, string | boolean>;
  metadata: Record<string, string>;
  waitlistEntryId?: string | null;
  /** The time is known to be bookable (a waitlist hold being claimed): no hours or calendar checks. */
  skipChecks?: boolean;
  /** First work in the transaction (a claim locks its entry and frees its hold for the booking). */
  before?: (trx: Tx) => Promise<void>;
  /** Last work in the transaction (a claim marks its entry booked). */
  alsoIn?: (trx: Tx, booking: repo.BookingRow) => Promise<void>;
  /** A priced link: the booking is a hold (`pending_payment`) until paid (paid.ts). */
  paid?: PaidHold | null;
  /**
   * The mode it is made in and that mode's clock (docs/api.md#test-mode): the actor's, or on the public
   * surface the link's. Absent: live, on the server's clock.
   */
  mode?: Mode;
}

/** A written booking: its row, its self-service link (shown once) and its hosts' contacts. */
export interface Written {
  row: repo.BookingRow;
  manageUrl: string;
  contacts: Map<string, PrincipalContact>;
}

export class BookingWrites {
  private readonly db: Db;
  private readonly clock: BookingsPlatform['clock'];
  private readonly linkKey: Buffer;

  constructor(
    platform: Pick<BookingsPlatform, 'db' | 'clock' | 'keys'>,
    private readonly needs: Omit<BookingsNeeds, 'mail' | 'payments'>,
    private readonly busy: Pick<BookingBusySource, 'changed'>,
    readonly paid: PaidBookings,
    private readonly notices: BookingNotices,
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.linkKey = platform.keys.linkKey;
  }

  /** For a held paid booking: its Checkout Session (paid.ts); a free booking passes through. */
  async checkout(
    created: Written,
    link: BookingLink | null,
    hold: PaidHold | null,
    urls: ReturnUrls,
  ): Promise<Written> {
    if (!hold || !link) return created;
    return { ...created, row: await this.paid.startCheckout(created.row, link, hold, urls) };
  }

  // ---- the one write path ------------------------------------------------------------------------

  /** Checks every host, then writes booking, occupancy, event and mails in one transaction. */
  async book(plan: Plan): Promise<Written> {
    const { link, slot } = plan;
    const mode: Mode = plan.mode ?? { livemode: true, clock: this.clock };
    const { livemode, clock } = mode;
    if (plan.hosts.length === 0) throw slotUnavailable('no_host');
    const limits = limitsOf(link);
    const refusals = plan.skipChecks
      ? plan.hosts.map(() => null)
      : await Promise.all(
          plan.hosts.map((h) => this.needs.availability.refusal(h, slot, limits, clock, livemode)),
        );
    let candidates: PrincipalProfile[];
    if (plan.assignment === 'collective') {
      const i = refusals.findIndex((r) => r !== null);
      if (i >= 0)
        throw slotUnavailable(refusals[i]!, plan.hosts.length > 1 ? 'for one of the hosts' : undefined);
      candidates = plan.hosts;
    } else {
      candidates = plan.hosts.filter((_, i) => refusals[i] === null);
      if (candidates.length === 0) throw slotUnavailable(refusals[0] ?? 'no_host');
      if (plan.assignment === 'round_robin' && link && candidates.length > 1) {
        candidates = await this.roundRobinOrder(link, candidates, slot);
      }
    }

    const now = clock.now();
    // The id's time is real time (ids sort by when they were made); the row's times are the mode's.
    const id = prefixedId('booking', this.clock.nowMs());
    const nonce = newManageNonce();
    const token = manageToken(this.linkKey, id, nonce);
    let everyHost = plan.assignment === 'collective' ? candidates : null;
    let occupied: string[] = [];
    let contacts = new Map<string, PrincipalContact>();
    // Read before the transaction: inside it, a second pooled connection could wait behind its locks.
    const knownContacts = plan.skipChecks
      ? await this.needs.principals.contacts(candidates.map((h) => h.id))
      : null;
    try {
      const row = await withTransaction(this.db, async (trx) => {
        await plan.before?.(trx);
        if (plan.skipChecks) {
          contacts = knownContacts ?? new Map();
        } else {
          // The schedules as stored now, locked until commit: a change of hours, zone or buffers (or
          // a deletion) made since the checks above either waits for this booking or is seen here.
          const checked = await this.recheck(trx, everyHost ?? candidates, slot, limits, !!everyHost, clock);
          if (everyHost) everyHost = checked.passed;
          else candidates = checked.passed;
          contacts = checked.contacts;
        }
        let attributed: PrincipalProfile;
        // The time to take with the booking row, in its statement (round robin takes it before).
        let occupancy: repo.OccupancyRow[] = [];
        // Test mode: the constraint is per mode, so live time is checked here (one more statement).
        const liveTaken = livemode
          ? null
          : await repo.liveOverlaps(
              trx,
              (everyHost ?? candidates).map((h) => occupancyOf(id, h, slot, false)),
            );
        if (liveTaken && everyHost && liveTaken.size > 0) throw slotUnavailable('taken');
        if (liveTaken && !everyHost) {
          candidates = candidates.filter((h) => !liveTaken.has(h.id));
          if (candidates.length === 0) throw slotUnavailable('taken');
        }
        let seatSessionId: string | null = null;
        if (link?.seats) {
          // A seat (docs/design.md#series-and-seats): the slot's session holds the hosts' time.
          const taking = everyHost ?? [candidates[0]!];
          seatSessionId = await this.takeSeat(trx, link, taking, slot, livemode, now);
          attributed = taking[0]!;
          occupied = taking.map((h) => h.id);
        } else if (everyHost) {
          occupancy = everyHost.map((h) => occupancyOf(id, h, slot, livemode));
          attributed = everyHost[0]!;
          occupied = everyHost.map((h) => h.id);
        } else if (candidates.length === 1) {
          occupancy = [occupancyOf(id, candidates[0]!, slot, livemode)];
          attributed = candidates[0]!;
          occupied = [attributed.id];
        } else {
          let chosen: PrincipalProfile | null = null;
          for (const [i, h] of candidates.entries()) {
            if (await repo.tryOccupy(trx, [occupancyOf(id, h, slot, livemode)], `rr_${i}`)) {
              chosen = h;
              break;
            }
          }
          if (!chosen) throw slotUnavailable('taken');
          attributed = chosen;
          occupied = [chosen.id];
        }
        const created: repo.NewBooking = {
          row: {
            id,
            account_id: plan.accountId,
            principal_id: attributed.id,
            host_ids: occupied,
            booking_link_id: link?.id ?? null,
            livemode,
            title: link?.title ?? meetingWith(occupied.map((h) => contacts.get(h)?.name ?? '')),
            status: plan.paid ? 'pending_payment' : 'confirmed',
            start_time: new Date(slot.start),
            end_time: new Date(slot.end),
            customer_email: plan.customer.email,
            customer_name: plan.customer.name,
            customer_timezone: plan.customer.timezone,
            guests: [...(plan.guests ?? [])],
            notes: plan.notes,
            answers: JSON.stringify(plan.answers),
            metadata: JSON.stringify(plan.metadata),
            manage_token_hash: tokenHash(token),
            manage_nonce: nonce,
            sequence: 0,
            waitlist_entry_id: plan.waitlistEntryId ?? null,
            ...(seatSessionId ? { seat_session_id: seatSessionId } : {}),
            ...(plan.paid
              ? {
                  payment_amount: plan.paid.amount,
                  payment_currency: plan.paid.currency,
                  payment_expires_at: plan.paid.expiresAt,
                  stripe_account_id: plan.paid.payee.stripeAccount,
                }
              : {}),
            created_at: now,
            updated_at: now,
          },
          answers: plan.answers,
          metadata: plan.metadata,
        };
        let booking: repo.BookingRow;
        if (plan.paid) {
          // A hold until paid: no event, mail or calendar event yet (paid.ts announces it when paid).
          booking = await repo.insertBooking(trx, created.row, occupancy);
          await this.paid.queueHoldEnd(trx, booking.id, plan.paid.expiresAt);
        } else {
          // The booking and its occupancy, its event, the calendar meeting, the mails and their jobs:
          // one statement (a taken time fails all of it with 23P01).
          const batch = new WriteBatch();
          booking = repo.addBookingWrites(batch, created, occupancy);
          await this.needs.webhooks.emit(
            trx,
            {
              accountId: plan.accountId,
              type: 'booking.created',
              data: { booking: presentBooking(booking) },
              livemode: booking.livemode,
            },
            batch,
          );
          await this.notices.announce(trx, booking, link, contacts, token, batch);
          await batch.run(trx);
        }
        await plan.alsoIn?.(trx, booking);
        return booking;
      });
      return { row, manageUrl: this.notices.manageUrl(token), contacts };
    } catch (err) {
      if (repo.isExclusionViolation(err)) throw slotUnavailable('taken');
      throw err;
    } finally {
      this.busy.changed(occupied);
    }
  }

  /**
   * Repeats the schedule checks (notice, horizon, working hours) inside the booking's transaction,
   * against the hosts' profiles read from the database and locked until commit (a schedule,
   * zone or deletion waits for the booking, or the booking sees it). `all`: every host must pass
   * (collective, reschedule); otherwise the hosts that pass, in the given order. Answers those hosts
   * as stored now (their buffers pad the occupancy), with the contacts read under the same lock.
   * Calendar busy time is not repeated: it is a copy
   * of a provider's data, as fresh inside the transaction as before it.
   */
  private async recheck(
    trx: Tx,
    hosts: readonly PrincipalProfile[],
    slot: Interval,
    limits: BookingLimits,
    all: boolean,
    clock: Clock,
  ): Promise<{ passed: PrincipalProfile[]; contacts: Map<string, PrincipalContact> }> {
    const { profiles: fresh, contacts } = await this.needs.principals.lockedProfiles(
      trx,
      hosts.map((h) => h.id),
    );
    const passed: PrincipalProfile[] = [];
    let first: SlotRefusal | 'no_host' | null = null;
    for (const h of hosts) {
      const now = fresh.get(h.id);
      const why = now ? this.needs.availability.scheduleRefusal(now, slot, limits, clock) : 'no_host';
      if (why === null) passed.push(now!);
      else {
        first ??= why;
        if (all) throw slotUnavailable(why, hosts.length > 1 ? 'for one of the hosts' : undefined);
      }
    }
    if (passed.length === 0) throw slotUnavailable(first ?? 'no_host');
    return { passed, contacts };
  }

  /**
   * Moves a live booking to `slot` for the same hosts: same checks, 409 when taken, `booking.updated`.
   * `clock`: the booking's mode's (the actor's, or the test clock of a test booking's token).
   */
  async reschedule(
    b: repo.BookingRow,
    slot: Interval,
    also: { notes?: string | null; metadata?: Record<string, string> },
    clock: Clock,
  ): Promise<repo.BookingRow> {
    if (!repo.LIVE_STATUSES.includes(b.status)) {
      throw new Conflict(`A ${b.status} booking cannot be rescheduled`, { code: 'booking_not_live' });
    }
    if (b.status === 'pending_payment') {
      throw new Conflict('A booking waiting for its payment cannot be rescheduled', {
        code: 'payment_pending',
      });
    }
    this.notPast(slot, clock);
    const link = b.booking_link_id
      ? await this.needs.bookingLinks.get(b.account_id, b.booking_link_id)
      : null;
    if (link && !link.durations.includes((slot.end - slot.start) / MINUTE)) {
      throw new ValidationFailed({
        end_time: `this booking link offers ${link.durations.join(', ')} minutes`,
      });
    }
    const profiles = await this.needs.principals.profiles(b.host_ids);
    const hosts = b.host_ids
      .map((h) => profiles.get(h))
      .filter((h): h is PrincipalProfile => h !== undefined);
    const limits = limitsOf(link);
    const refusals = await Promise.all(
      hosts.map((h) => this.needs.availability.refusal(h, slot, limits, clock, b.livemode)),
    );
    const refused = refusals.find((r) => r !== null);
    if (refused) throw slotUnavailable(refused);
    try {
      return await withTransaction(this.db, async (trx) => {
        const locked = await repo.lockBooking(trx, b.id);
        if (!locked || !repo.LIVE_STATUSES.includes(locked.status)) {
          throw new Conflict('The booking is no longer live', { code: 'booking_not_live' });
        }
        const { passed, contacts } = await this.recheck(trx, hosts, slot, limits, true, clock);
        const moved = passed.map((h) => occupancyOf(b.id, h, slot, b.livemode));
        // Test mode: live time is checked here (the constraint is per mode).
        if (!b.livemode && (await repo.liveOverlaps(trx, moved)).size > 0) throw slotUnavailable('taken');
        let seat: { seat_session_id: string | null } | null = null;
        if (locked.seat_session_id) {
          // A seat moves alone: its seat given back, one taken in the new slot (or, the link no longer
          // seated, its own time), in this transaction.
          await seriesRepo.releaseSeat(trx, locked.seat_session_id);
          if (link?.seats) {
            seat = { seat_session_id: await this.takeSeat(trx, link, passed, slot, b.livemode, clock.now()) };
          } else {
            await repo.insertOccupancy(trx, moved);
            seat = { seat_session_id: null };
          }
        } else await repo.moveOccupancy(trx, moved);
        const row = await repo.updateBooking(trx, b.id, {
          ...seat,
          start_time: new Date(slot.start),
          end_time: new Date(slot.end),
          sequence: locked.sequence + 1,
          updated_at: clock.now(),
          ...(also.notes !== undefined ? { notes: also.notes } : {}),
          ...(also.metadata !== undefined ? { metadata: JSON.stringify(also.metadata) } : {}),
        });
        await this.needs.webhooks.emit(trx, {
          accountId: row.account_id,
          type: 'booking.updated',
          data: {
            booking: presentBooking(row),
            previous: { start_time: iso(locked.start_time), end_time: iso(locked.end_time) },
          },
          livemode: row.livemode,
        });
        const written = await this.needs.calendars.writeMeeting(trx, meetingOf(row, link));
        // An occurrence of a series moves alone: its invite is an override of the series' (RECURRENCE-ID).
        const series = row.series_id ? await seriesRepo.lockSeries(trx, row.series_id) : undefined;
        await this.notices.mailAbout(
          trx,
          'reschedule',
          row,
          link,
          b.host_ids.map((h) => contactOf(contacts, h, written)),
          undefined,
          undefined,
          series
            ? seriesMail(
                await seriesRepo.bumpSeries(trx, series.id, clock.now()),
                await seriesRepo.occurrencesOf(trx, series.id),
                { cancelled: [], whole: false, recurrenceId: row.occurrence_start ?? locked.start_time },
              )
            : undefined,
        );
        return row;
      });
    } catch (err) {
      if (repo.isExclusionViolation(err)) throw slotUnavailable('taken');
      throw err;
    } finally {
      this.busy.changed(b.host_ids);
    }
  }

  /**
   * Cancels once: the first cancel frees the time, emits `booking.cancelled`, mails a CANCEL and offers
   * the time to the link's waitlist; a repeat (or a booking no longer live) answers as it is. `clock`:
   * the booking's mode's.
   */
  async cancelBooking(
    b: repo.BookingRow,
    reason: string | undefined,
    clock: Clock,
  ): Promise<repo.BookingRow> {
    if (!repo.LIVE_STATUSES.includes(b.status)) return b;
    // Its length is the route schema's (schemas.ts CancelQuery, CancelBody).
    const why = reason?.trim() || null;
    const link = b.booking_link_id
      ? await this.needs.bookingLinks.get(b.account_id, b.booking_link_id)
      : null;
    const contacts = await this.needs.principals.contacts(b.host_ids);
    let wasPending = false;
    let row: repo.BookingRow;
    try {
      row = await withTransaction(this.db, async (trx) => {
        const locked = await repo.lockBooking(trx, b.id);
        if (!locked || !repo.LIVE_STATUSES.includes(locked.status)) return locked ?? b;
        const now = clock.now();
        wasPending = locked.status === 'pending_payment';
        // A paid booking is refunded in full (paid.ts, a retried job).
        const refund = locked.status === 'confirmed' && locked.stripe_payment_intent !== null;
        if (locked.seat_session_id) await seriesRepo.releaseSeat(trx, locked.seat_session_id);
        else await repo.releaseOccupancy(trx, b.id);
        const cancelled = await repo.updateBooking(trx, b.id, {
          status: 'cancelled',
          cancellation_reason: why,
          cancelled_at: now,
          sequence: locked.sequence + 1,
          checkout_url: null,
          ...(refund ? { refund_status: 'pending' as const } : {}),
          updated_at: now,
        });
        if (refund) await this.paid.queueRefund(trx, cancelled.id);
        if (!wasPending) {
          // A hold that was never paid was never announced: no event, mail or calendar event to undo.
          await this.needs.webhooks.emit(trx, {
            accountId: cancelled.account_id,
            type: 'booking.cancelled',
            data: { booking: presentBooking(cancelled) },
            livemode: cancelled.livemode,
          });
          const written = await this.needs.calendars.removeMeeting(trx, cancelled.id);
          await this.notices.mailAbout(
            trx,
            'cancellation',
            cancelled,
            link,
            b.host_ids.map((h) => contactOf(contacts, h, written)),
          );
        }
        await this.notices.offerFreedTime(trx, cancelled, clock);
        return cancelled;
      });
    } finally {
      this.busy.changed(b.host_ids);
    }
    if (wasPending) await this.paid.closeSession(row);
    return row;
  }

  // ---- helpers of the use cases ---------------------------------------------------------------------

  /**
   * Takes a seat of `link`'s slot for `hosts` (docs/design.md#series-and-seats): one statement adds a
   * seat to the slot's session or makes the session; a new session takes the hosts' time (23P01 when
   * it is not free). 409 `slot_full` when no seat is left. Answers the session's id.
   */
  private async takeSeat(
    trx: Tx,
    link: BookingLink,
    hosts: readonly PrincipalProfile[],
    slot: Interval,
    livemode: boolean,
    now: Date,
  ): Promise<string> {
    const got = await seriesRepo.takeSeat(trx, {
      id: prefixedId('sess', this.clock.nowMs()),
      accountId: link.accountId,
      livemode,
      linkId: link.id,
      start: new Date(slot.start),
      end: new Date(slot.end),
      hostIds: hosts.map((h) => h.id),
      capacity: link.seats?.capacity ?? 1,
      now,
    });
    if (!got) {
      const session = await seriesRepo.sessionAt(trx, link.id, new Date(slot.start));
      if (session && new Date(session.end_time).getTime() !== slot.end) throw slotUnavailable('taken');
      throw new Conflict('Every seat of this slot is taken; choose another time', { code: 'slot_full' });
    }
    if (got.created)
      await repo.insertOccupancy(
        trx,
        hosts.map((h) => occupancyOf(got.id, h, slot, livemode)),
      );
    return got.id;
  }

  /** 422 when `slot` starts before `clock`'s now (the mode's: a test clock in test mode). */
  notPast(slot: Interval, clock: Clock): void {
    if (slot.start < clock.nowMs()) {
      throw new Unprocessable('start_time is in the past; choose a time in the future', {
        code: 'start_in_past',
      });
    }
  }

  notStarted(b: repo.BookingRow, clock: Clock): void {
    if (new Date(b.start_time).getTime() <= clock.nowMs()) {
      throw new Unprocessable('The booking has already started', { code: 'booking_started' });
    }
  }

  /** Live hosts among `ids`, in that order (a deleted host is skipped). */
  async hostsOf(ids: readonly string[]): Promise<PrincipalProfile[]> {
    return liveHosts(ids, await this.needs.principals.profiles(ids));
  }

  /** Round robin: fewest live bookings of the link around the slot first, then least recently booked. */
  async roundRobinOrder(link: BookingLink, hosts: PrincipalProfile[], slot: Interval) {
    const load = await repo.roundRobinLoad(
      this.db,
      link.id,
      hosts.map((h) => h.id),
      new Date(slot.start),
    );
    const order = new Map(link.hostIds.map((id, i) => [id, i]));
    return [...hosts].sort((a, b) => {
      const la = load.get(a.id) ?? { count: 0, last: 0 };
      const lb = load.get(b.id) ?? { count: 0, last: 0 };
      return la.count - lb.count || la.last - lb.last || (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0);
    });
  }
}
