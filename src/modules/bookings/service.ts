/**
 * Bookings (docs/api.md#bookings, #public-booking-surface; docs/architecture.md#bookings).
 *
 * A booking takes time by inserting occupancy rows, one per host it occupies, padded with that host's
 * buffers; the exclusion constraint of migration 0008 refuses any overlap (SQLSTATE 23P01 → 409), so
 * no check-then-insert decides a race. Hours, notice, horizon and calendar busy time are checked first
 * (availability.refusal); the booking row, its occupancy, its event and its mails commit together.
 */
import type { Static } from '@sinclair/typebox';
import type { Config } from '../../config.js';
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import { enqueue, WriteBatch } from '../../jobs/runner.js';
import type { Interval } from '../../lib/intervals.js';
import type { Actor } from '../../platform/actor.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict, Forbidden, NotFound, Unprocessable, ValidationFailed } from '../../platform/errors.js';
import { isPrefixedId, isUuid, prefixedId } from '../../platform/ids.js';
import { decodeCursor, encodeCursor } from '../../platform/pagination.js';
import type { AvailabilityApi, BookingLimits, SlotRefusal } from '../availability/api.js';
import type { BookingLink, BookingLinksApi } from '../booking-links/api.js';
import type { CalendarsApi, MeetingSpec } from '../calendars/api.js';
import { addressOf, type MailApi } from '../mail/api.js';
import type { PaymentsApi } from '../payments/api.js';
import type { PrincipalContact, PrincipalProfile, PrincipalsApi } from '../principals/api.js';
import { emitEvent } from '../webhooks/api.js';
import type { BookingBusySource } from './busy.js';
import * as input from './input.js';
import { type BookingMailKind, bookingMails, type Contact } from './mails.js';
import { bookMeeting, cancelMeeting, type MeetingBookingInput } from './meetings.js';
import { type Announcement, type BookingWriter, type PaidHold, PaidBookings } from './paid.js';
import { meetingWith, presentBooking, presentPublicBooking } from './present.js';
import * as repo from './repo.js';
import type { CreateBody, ListQuery, PublicCreateBody, UpdateBody } from './schemas.js';
import { isTokenShape, manageToken, newManageNonce, tokenHash } from './tokens.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
/** A self-service link keeps working this long after its booking ended (then 404). */
const MANAGE_LINK_AFTER_END_MS = 30 * DAY;
/** Queue of waitlist offers for freed time (waitlist.ts). */
export const WAITLIST_OFFER_QUEUE = 'waitlist-offer';

export interface BookingsDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'baseUrl' | 'mailFrom' | 'stripe'>;
  linkKey: Buffer;
  principals: Pick<PrincipalsApi, 'profiles' | 'contacts' | 'lockedProfiles'> & {
    access: Pick<PrincipalsApi['access'], 'actingFor'>;
  };
  availability: Pick<AvailabilityApi, 'refusal' | 'scheduleRefusal' | 'linkSlots'>;
  links: Pick<BookingLinksApi, 'get' | 'bySlug'>;
  mail: Pick<MailApi, 'enqueue'>;
  calendars: Pick<CalendarsApi, 'writeMeeting' | 'removeMeeting' | 'calendarSync'>;
  payments: Pick<PaymentsApi, 'payee' | 'createCheckout' | 'expireCheckout' | 'refund'>;
  busy: Pick<BookingBusySource, 'changed'>;
  log: { error(obj: object, msg: string): void };
}

type Assignment = 'single' | 'round_robin' | 'collective';

/** Everything needed to write one booking. */
interface Plan {
  accountId: string;
  link: BookingLink | null;
  /** Hosts in the order to try (round robin) or all of them (collective). */
  hosts: PrincipalProfile[];
  assignment: Assignment;
  slot: Interval;
  customer: { email: string; name: string; timezone: string | null };
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
}

/** Where Stripe sends the customer back (default: the link's page). */
export type ReturnUrls = Pick<Static<typeof PublicCreateBody>, 'success_url' | 'cancel_url'>;

const REFUSALS: Record<SlotRefusal | 'taken' | 'no_host', string> = {
  minimum_notice: 'The start is inside the minimum notice',
  max_days_ahead: 'The start is further ahead than bookings are taken',
  outside_working_hours: 'The time is outside working hours',
  calendar_busy: 'The time is busy in a connected calendar',
  taken: 'The time overlaps another booking',
  no_host: 'No host of this booking link is available',
};

export function slotUnavailable(reason: SlotRefusal | 'taken' | 'no_host', who?: string): Conflict {
  return new Conflict(`${REFUSALS[reason]}${who ? ` (${who})` : ''}; the requested time is not available`, {
    code: 'slot_unavailable',
    reason,
  });
}

export class BookingService implements BookingWriter {
  readonly paid: PaidBookings;

  constructor(private readonly deps: BookingsDeps) {
    this.paid = new PaidBookings(
      {
        db: deps.db,
        clock: deps.clock,
        config: deps.config,
        payments: deps.payments,
        principals: deps.principals,
        mail: deps.mail,
        busy: deps.busy,
        log: deps.log,
      },
      this,
    );
  }

  // ---- authenticated API -------------------------------------------------------------------------

  /** POST /v1/bookings */
  async create(actor: Actor, body: Static<typeof CreateBody>) {
    const p = new input.Problems();
    let link: BookingLink | null = null;
    if (body.booking_link_id !== undefined) {
      link = isPrefixedId(body.booking_link_id)
        ? await this.deps.links.get(actor.accountId, body.booking_link_id)
        : null;
      if (!link) p.add('booking_link_id', 'is not a booking link of this account');
    }
    if (body.principal_id !== undefined && !isUuid(body.principal_id))
      p.add('principal_id', 'must be a UUID');
    if (link && body.principal_id !== undefined && !link.hostIds.includes(body.principal_id.toLowerCase())) {
      p.add('principal_id', 'must be one of the booking link’s hosts');
    }
    returnUrls(body, p);
    const fields = this.fields(body, link, p);
    p.throwIfAny();
    this.notPast(fields.slot);
    const hold = await this.paid.holdFor(link);

    let hosts: PrincipalProfile[];
    let assignment: Assignment;
    if (link) {
      const pinned = body.principal_id?.toLowerCase();
      assignment = pinned !== undefined && link.assignment !== 'collective' ? 'single' : link.assignment;
      hosts = await this.hostsOf(
        pinned !== undefined && link.assignment !== 'collective' ? [pinned] : link.hostIds,
      );
    } else {
      const target = body.principal_id ?? actor.principalId;
      const profile = await this.deps.principals.access.actingFor(actor, target);
      if (!profile) throw new Forbidden('The principal does not exist or this caller may not book for it');
      hosts = [profile];
      assignment = 'single';
    }
    const created = await this.checkout(
      await this.book({ accountId: actor.accountId, link, hosts, assignment, ...fields, paid: hold }),
      link,
      hold,
      body,
    );
    return { booking: { ...presentBooking(created.row), manage_url: created.manageUrl } };
  }

  /** GET /v1/bookings */
  async list(accountId: string, q: Static<typeof ListQuery>) {
    const p = new input.Problems();
    if (q.principal_id !== undefined && !isUuid(q.principal_id)) p.add('principal_id', 'must be a UUID');
    const from = input.instant(q.from, 'from', p);
    const to = input.instant(q.to, 'to', p);
    if (from !== undefined && to !== undefined && to <= from) p.add('to', 'must be after from');
    p.throwIfAny();
    const after = decodeCursor(q.cursor, { prefix: 'booking' });
    const rows = await repo.listBookings(this.deps.db, {
      accountId,
      principalId: q.principal_id?.toLowerCase(),
      status: q.status,
      from: from === undefined ? undefined : new Date(from),
      to: to === undefined ? undefined : new Date(to),
      after,
      limit: q.limit,
    });
    const hasMore = rows.length > q.limit;
    const items = hasMore ? rows.slice(0, q.limit) : rows;
    const last = items[items.length - 1];
    const sync = await this.deps.calendars.calendarSync(items.map((b) => b.id));
    return {
      bookings: items.map((b) => ({ ...presentBooking(b), calendar_sync: sync.get(b.id) ?? [] })),
      pagination: {
        next_cursor: hasMore && last ? encodeCursor({ at: last.start_time, id: last.id }) : null,
        has_more: hasMore,
      },
    };
  }

  /** GET /v1/bookings/{id}: another account's booking is 404. */
  async get(accountId: string, id: string) {
    const row = await this.owned(accountId, id);
    const sync = await this.deps.calendars.calendarSync([row.id]);
    return { booking: { ...presentBooking(row), calendar_sync: sync.get(row.id) ?? [] } };
  }

  /** PATCH /v1/bookings/{id}: notes and metadata; a new time is a reschedule. */
  async update(accountId: string, id: string, body: Static<typeof UpdateBody>) {
    const b = await this.owned(accountId, id);
    const p = new input.Problems();
    const notes =
      body.notes === undefined || body.notes === null
        ? body.notes
        : input.text(body.notes, 'notes', p, 5000, false);
    const metadata = body.metadata === undefined ? undefined : input.metadata(body.metadata, p);
    let slot: Interval | undefined;
    if (body.start_time !== undefined || body.end_time !== undefined) {
      const start = input.instant(body.start_time ?? new Date(b.start_time).toISOString(), 'start_time', p);
      const end =
        body.end_time !== undefined
          ? input.instant(body.end_time, 'end_time', p)
          : start === undefined
            ? undefined
            : start + (new Date(b.end_time).getTime() - new Date(b.start_time).getTime());
      if (start !== undefined && end !== undefined) {
        const minutes = (end - start) / MINUTE;
        if (end <= start) p.add('end_time', 'must be after start_time');
        else if (
          !(
            Number.isInteger(minutes) &&
            minutes >= input.MIN_BOOKING_MINUTES &&
            minutes <= input.MAX_BOOKING_MINUTES
          )
        ) {
          p.add(
            'end_time',
            `the booking must last a whole number of minutes from ${input.MIN_BOOKING_MINUTES} to ${input.MAX_BOOKING_MINUTES}`,
          );
        } else slot = { start, end };
      }
    }
    p.throwIfAny();
    if (
      slot &&
      (slot.start !== new Date(b.start_time).getTime() || slot.end !== new Date(b.end_time).getTime())
    ) {
      const moved = await this.reschedule(b, slot, { notes, metadata });
      return { booking: presentBooking(moved) };
    }
    if (notes === undefined && metadata === undefined) return { booking: presentBooking(b) };
    const row = await withTransaction(this.deps.db, (trx) =>
      repo.updateBooking(trx, b.id, {
        ...(notes !== undefined ? { notes } : {}),
        ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) } : {}),
        updated_at: this.deps.clock.now(),
      }),
    );
    return { booking: presentBooking(row) };
  }

  /** DELETE /v1/bookings/{id}?reason= */
  async cancel(accountId: string, id: string, reason: string | undefined) {
    const b = await this.owned(accountId, id);
    return { booking: presentBooking(await this.cancelBooking(b, reason)) };
  }

  // ---- public surface ----------------------------------------------------------------------------

  /**
   * The live, active link behind a slug as `caller` may see it: anonymous callers and other keys see
   * every active link; a publishable key only its own account's. Anything else is 404.
   */
  async publicLink(caller: Caller, slug: string): Promise<BookingLink> {
    const link = /^[a-z0-9-]{3,64}$/.test(slug) ? await this.deps.links.bySlug(slug) : null;
    if (!link?.active || (caller.kind === 'publishable' && caller.accountId !== link.accountId)) {
      throw new NotFound('No booking link with this slug');
    }
    return link;
  }

  /** GET /v1/public/links/{slug}: what a booking page shows; no ids, no e-mails. */
  async publicLinkView(caller: Caller, slug: string) {
    const link = await this.publicLink(caller, slug);
    const contacts = await this.deps.principals.contacts(link.hostIds);
    return {
      booking_link: {
        slug: link.slug,
        title: link.title,
        description: link.description,
        duration_minutes: link.defaultDuration,
        durations: link.durations,
        hosts: link.hostIds.map((id) => ({ display_name: contacts.get(id)?.name ?? '' })),
        questions: link.questions,
        price_amount: link.priceAmount,
        price_currency: link.priceCurrency,
      },
    };
  }

  /** GET /v1/public/links/{slug}/availability */
  async publicAvailability(
    caller: Caller,
    slug: string,
    q: { from: string; to: string; timezone?: string; duration_minutes?: number },
  ): Promise<Buffer | string> {
    const link = await this.publicLink(caller, slug);
    const p = new input.Problems();
    const from = input.instant(q.from, 'from', p);
    const to = input.instant(q.to, 'to', p);
    if (from !== undefined && to !== undefined) {
      if (to <= from) p.add('to', 'must be after from');
      else if (to - from > 62 * DAY) p.add('to', 'must be at most 62 days after from');
    }
    const duration = q.duration_minutes ?? link.defaultDuration;
    if (!link.durations.includes(duration)) {
      p.add('duration_minutes', `this booking link offers ${link.durations.join(', ')} minutes`);
    }
    const timezone = input.zone(q.timezone, 'timezone', p);
    p.throwIfAny();
    const hosts = await this.hostsOf(link.hostIds);
    if (hosts.length === 0) {
      return JSON.stringify({
        duration_minutes: duration,
        timezone: timezone ?? 'UTC',
        stale: false,
        busy_as_of: null,
        slots: [],
      });
    }
    return this.deps.availability.linkSlots({
      hosts,
      mode: link.assignment === 'collective' ? 'all' : 'any',
      window: { start: from as number, end: to as number },
      durationMinutes: duration,
      timezone: timezone ?? hosts[0]!.schedule.timezone,
      limits: limitsOf(link),
    });
  }

  /** POST /v1/public/links/{slug}/bookings */
  async createPublic(caller: Caller, slug: string, body: Static<typeof PublicCreateBody>) {
    const link = await this.publicLink(caller, slug);
    const p = new input.Problems();
    returnUrls(body, p);
    const fields = this.fields(body, link, p);
    p.throwIfAny();
    this.notPast(fields.slot);
    const hold = await this.paid.holdFor(link);
    const hosts = await this.hostsOf(link.hostIds);
    const created = await this.book({
      accountId: link.accountId,
      link,
      hosts,
      assignment: link.assignment,
      ...fields,
      paid: hold,
    });
    return this.publicCreated(await this.checkout(created, link, hold, body));
  }

  /** For a held paid booking: its Checkout Session (paid.ts); a free booking passes through. */
  async checkout(
    created: { row: repo.BookingRow; manageUrl: string },
    link: BookingLink | null,
    hold: PaidHold | null,
    urls: ReturnUrls,
  ): Promise<{ row: repo.BookingRow; manageUrl: string }> {
    if (!hold || !link) return created;
    return {
      row: await this.paid.startCheckout(created.row, link, hold, urls),
      manageUrl: created.manageUrl,
    };
  }

  /** The creation answer of the public surface: the attendee's view and, once, the self-service link. */
  async publicCreated(created: { row: repo.BookingRow; manageUrl: string }) {
    return { booking: { ...(await this.publicBooking(created.row)), manage_url: created.manageUrl } };
  }

  /** The booking behind a self-service token, while its link works; else 404. */
  async byToken(token: string): Promise<repo.BookingRow> {
    const row = isTokenShape(token) ? await repo.findByTokenHash(this.deps.db, tokenHash(token)) : undefined;
    if (!row || new Date(row.end_time).getTime() + MANAGE_LINK_AFTER_END_MS < this.deps.clock.nowMs()) {
      throw new NotFound('This booking link is not valid');
    }
    return row;
  }

  /** GET /v1/public/bookings/{token} */
  async publicView(token: string) {
    return { booking: await this.publicBooking(await this.byToken(token)) };
  }

  /** POST /v1/public/bookings/{token}/cancel */
  async publicCancel(token: string, reason: string | undefined) {
    const b = await this.byToken(token);
    if (repo.LIVE_STATUSES.includes(b.status)) this.notStarted(b);
    return { booking: await this.publicBooking(await this.cancelBooking(b, reason)) };
  }

  /** POST /v1/public/bookings/{token}/reschedule: the same length at a new start. */
  async publicReschedule(token: string, startTime: string) {
    const b = await this.byToken(token);
    const p = new input.Problems();
    const start = input.instant(startTime, 'start_time', p);
    p.throwIfAny();
    this.notStarted(b);
    const length = new Date(b.end_time).getTime() - new Date(b.start_time).getTime();
    const moved = await this.reschedule(b, { start: start as number, end: (start as number) + length }, {});
    return { booking: await this.publicBooking(moved) };
  }

  // ---- bookings of accepted proposals (meetings.ts) ----------------------------------------------

  /** Books everyone of an accepted proposal inside its transaction; 23P01 when anyone's time is taken. */
  bookMeeting(trx: Tx, m: MeetingBookingInput): Promise<repo.BookingRow[]> {
    return bookMeeting(trx, { clock: this.deps.clock, linkKey: this.deps.linkKey }, m, occupancyOf);
  }

  /** Cancels the bookings of a cancelled proposal inside its transaction; answers whose time was freed. */
  cancelMeeting(trx: Tx, proposalId: string, reason: string | null): Promise<string[]> {
    return cancelMeeting(trx, this.deps.clock, proposalId, reason);
  }

  /** Drops this process's copy of these principals' booked time (after a commit that changed it). */
  busyChanged(principalIds: Iterable<string>): void {
    this.deps.busy.changed(principalIds);
  }

  // ---- the one write path ------------------------------------------------------------------------

  /** Checks every host, then writes booking, occupancy, event and mails in one transaction. */
  async book(plan: Plan): Promise<{ row: repo.BookingRow; manageUrl: string }> {
    const { link, slot } = plan;
    if (plan.hosts.length === 0) throw slotUnavailable('no_host');
    const limits = limitsOf(link);
    const refusals = plan.skipChecks
      ? plan.hosts.map(() => null)
      : await Promise.all(plan.hosts.map((h) => this.deps.availability.refusal(h, slot, limits)));
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

    const now = this.deps.clock.now();
    const id = prefixedId('booking', now.getTime());
    const nonce = newManageNonce();
    const token = manageToken(this.deps.linkKey, id, nonce);
    let everyHost = plan.assignment === 'collective' ? candidates : null;
    let occupied: string[] = [];
    // Read before the transaction: inside it, a second pooled connection could wait behind its locks.
    const knownContacts = plan.skipChecks
      ? await this.deps.principals.contacts(candidates.map((h) => h.id))
      : null;
    try {
      const row = await withTransaction(this.deps.db, async (trx) => {
        await plan.before?.(trx);
        let contacts: Map<string, PrincipalContact>;
        if (plan.skipChecks) {
          contacts = knownContacts ?? new Map();
        } else {
          // The schedules as stored now, locked until commit: a change of hours, zone or buffers (or
          // a deletion) made since the checks above either waits for this booking or is seen here.
          const checked = await this.recheck(trx, everyHost ?? candidates, slot, limits, !!everyHost);
          if (everyHost) everyHost = checked.passed;
          else candidates = checked.passed;
          contacts = checked.contacts;
        }
        let attributed: PrincipalProfile;
        // The time to take with the booking row, in its statement (round robin takes it before).
        let occupancy: repo.OccupancyRow[] = [];
        if (everyHost) {
          occupancy = everyHost.map((h) => occupancyOf(id, h, slot));
          attributed = everyHost[0]!;
          occupied = everyHost.map((h) => h.id);
        } else if (candidates.length === 1) {
          occupancy = [occupancyOf(id, candidates[0]!, slot)];
          attributed = candidates[0]!;
          occupied = [attributed.id];
        } else {
          let chosen: PrincipalProfile | null = null;
          for (const [i, h] of candidates.entries()) {
            if (await repo.tryOccupy(trx, [occupancyOf(id, h, slot)], `rr_${i}`)) {
              chosen = h;
              break;
            }
          }
          if (!chosen) throw slotUnavailable('taken');
          attributed = chosen;
          occupied = [chosen.id];
        }
        const booking = await repo.insertBooking(
          trx,
          {
            id,
            account_id: plan.accountId,
            principal_id: attributed.id,
            host_ids: occupied,
            booking_link_id: link?.id ?? null,
            title: link?.title ?? meetingWith(occupied.map((h) => contacts.get(h)?.name ?? '')),
            status: plan.paid ? 'pending_payment' : 'confirmed',
            start_time: new Date(slot.start),
            end_time: new Date(slot.end),
            customer_email: plan.customer.email,
            customer_name: plan.customer.name,
            customer_timezone: plan.customer.timezone,
            notes: plan.notes,
            answers: JSON.stringify(plan.answers),
            metadata: JSON.stringify(plan.metadata),
            manage_token_hash: tokenHash(token),
            manage_nonce: nonce,
            sequence: 0,
            waitlist_entry_id: plan.waitlistEntryId ?? null,
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
          occupancy,
        );
        if (plan.paid) {
          // A hold until paid: no event, mail or calendar event yet (paid.ts announces it when paid).
          await this.paid.queueHoldEnd(trx, booking.id, plan.paid.expiresAt);
        } else {
          // The event, the mails and their jobs go in one statement after the calendar meeting's.
          const batch = new WriteBatch();
          await emitEvent(
            trx,
            this.deps.clock,
            {
              accountId: plan.accountId,
              type: 'booking.created',
              data: { booking: presentBooking(booking) },
            },
            batch,
          );
          await this.announce(trx, booking, link, contacts, token, batch);
          await batch.run(trx);
        }
        await plan.alsoIn?.(trx, booking);
        return booking;
      });
      return { row, manageUrl: this.manageUrl(token) };
    } catch (err) {
      if (repo.isExclusionViolation(err)) throw slotUnavailable('taken');
      throw err;
    } finally {
      this.deps.busy.changed(occupied);
    }
  }

  /** Confirmation mails and the hosts' calendars of a confirmed booking (in its transaction). */
  private async announce(
    trx: Tx,
    booking: repo.BookingRow,
    link: BookingLink | null,
    contacts: Map<string, PrincipalContact>,
    token?: string,
    batch?: WriteBatch,
  ): Promise<void> {
    const written = await this.deps.calendars.writeMeeting(trx, meetingOf(booking, link));
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

  /** What confirming a paid booking needs (paid.ts), read before its transaction. */
  async announcementOf(b: repo.BookingRow): Promise<Announcement> {
    const [link, contacts, hosts] = await Promise.all([
      b.booking_link_id ? this.deps.links.get(b.account_id, b.booking_link_id) : null,
      this.deps.principals.contacts(b.host_ids),
      this.hostsOf(b.host_ids),
    ]);
    const slot = { start: new Date(b.start_time).getTime(), end: new Date(b.end_time).getTime() };
    return { link, contacts, occupancy: hosts.map((h) => occupancyOf(b.id, h, slot)) };
  }

  /** A paid booking just became confirmed (paid.ts): its mails and calendar events. */
  async announceConfirmed(trx: Tx, b: repo.BookingRow, a: Announcement): Promise<void> {
    await this.announce(trx, b, a.link, a.contacts);
  }

  /**
   * Repeats the schedule checks (notice, horizon, working hours) inside the booking's transaction,
   * against the hosts' profiles read from the database and locked FOR SHARE until commit (a schedule,
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
  ): Promise<{ passed: PrincipalProfile[]; contacts: Map<string, PrincipalContact> }> {
    const { profiles: fresh, contacts } = await this.deps.principals.lockedProfiles(
      trx,
      hosts.map((h) => h.id),
    );
    const passed: PrincipalProfile[] = [];
    let first: SlotRefusal | 'no_host' | null = null;
    for (const h of hosts) {
      const now = fresh.get(h.id);
      const why = now ? this.deps.availability.scheduleRefusal(now, slot, limits) : 'no_host';
      if (why === null) passed.push(now!);
      else {
        first ??= why;
        if (all) throw slotUnavailable(why, hosts.length > 1 ? 'for one of the hosts' : undefined);
      }
    }
    if (passed.length === 0) throw slotUnavailable(first ?? 'no_host');
    return { passed, contacts };
  }

  /** Moves a live booking to `slot` for the same hosts: same checks, 409 when taken, `booking.updated`. */
  private async reschedule(
    b: repo.BookingRow,
    slot: Interval,
    also: { notes?: string | null; metadata?: Record<string, string> },
  ): Promise<repo.BookingRow> {
    if (!repo.LIVE_STATUSES.includes(b.status)) {
      throw new Conflict(`A ${b.status} booking cannot be rescheduled`, { code: 'booking_not_live' });
    }
    if (b.status === 'pending_payment') {
      throw new Conflict('A booking waiting for its payment cannot be rescheduled', {
        code: 'payment_pending',
      });
    }
    this.notPast(slot);
    const link = b.booking_link_id ? await this.deps.links.get(b.account_id, b.booking_link_id) : null;
    if (link && !link.durations.includes((slot.end - slot.start) / MINUTE)) {
      throw new ValidationFailed({
        end_time: `this booking link offers ${link.durations.join(', ')} minutes`,
      });
    }
    const profiles = await this.deps.principals.profiles(b.host_ids);
    const hosts = b.host_ids
      .map((h) => profiles.get(h))
      .filter((h): h is PrincipalProfile => h !== undefined);
    const limits = limitsOf(link);
    const refusals = await Promise.all(hosts.map((h) => this.deps.availability.refusal(h, slot, limits)));
    const refused = refusals.find((r) => r !== null);
    if (refused) throw slotUnavailable(refused);
    try {
      return await withTransaction(this.deps.db, async (trx) => {
        const locked = await repo.lockBooking(trx, b.id);
        if (!locked || !repo.LIVE_STATUSES.includes(locked.status)) {
          throw new Conflict('The booking is no longer live', { code: 'booking_not_live' });
        }
        const { passed, contacts } = await this.recheck(trx, hosts, slot, limits, true);
        await repo.moveOccupancy(
          trx,
          passed.map((h) => occupancyOf(b.id, h, slot)),
        );
        const row = await repo.updateBooking(trx, b.id, {
          start_time: new Date(slot.start),
          end_time: new Date(slot.end),
          sequence: locked.sequence + 1,
          updated_at: this.deps.clock.now(),
          ...(also.notes !== undefined ? { notes: also.notes } : {}),
          ...(also.metadata !== undefined ? { metadata: JSON.stringify(also.metadata) } : {}),
        });
        await emitEvent(trx, this.deps.clock, {
          accountId: row.account_id,
          type: 'booking.updated',
          data: {
            booking: presentBooking(row),
            previous: { start_time: iso(locked.start_time), end_time: iso(locked.end_time) },
          },
        });
        const written = await this.deps.calendars.writeMeeting(trx, meetingOf(row, link));
        await this.mailAbout(
          trx,
          'reschedule',
          row,
          link,
          b.host_ids.map((h) => contactOf(contacts, h, written)),
        );
        return row;
      });
    } catch (err) {
      if (repo.isExclusionViolation(err)) throw slotUnavailable('taken');
      throw err;
    } finally {
      this.deps.busy.changed(b.host_ids);
    }
  }

  /**
   * Cancels once: the first cancel frees the time, emits `booking.cancelled`, mails a CANCEL and offers
   * the time to the link's waitlist; a repeat (or a booking no longer live) answers as it is.
   */
  async cancelBooking(b: repo.BookingRow, reason: string | undefined): Promise<repo.BookingRow> {
    if (!repo.LIVE_STATUSES.includes(b.status)) return b;
    const p = new input.Problems();
    const why = reason === undefined ? null : input.text(reason, 'reason', p, 1000, false) || null;
    p.throwIfAny();
    const link = b.booking_link_id ? await this.deps.links.get(b.account_id, b.booking_link_id) : null;
    const contacts = await this.deps.principals.contacts(b.host_ids);
    let wasPending = false;
    let row: repo.BookingRow;
    try {
      row = await withTransaction(this.deps.db, async (trx) => {
        const locked = await repo.lockBooking(trx, b.id);
        if (!locked || !repo.LIVE_STATUSES.includes(locked.status)) return locked ?? b;
        const now = this.deps.clock.now();
        wasPending = locked.status === 'pending_payment';
        // A paid booking is refunded in full (paid.ts, a retried job).
        const refund = locked.status === 'confirmed' && locked.stripe_payment_intent !== null;
        await repo.releaseOccupancy(trx, b.id);
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
          await emitEvent(trx, this.deps.clock, {
            accountId: cancelled.account_id,
            type: 'booking.cancelled',
            data: { booking: presentBooking(cancelled) },
          });
          const written = await this.deps.calendars.removeMeeting(trx, cancelled.id);
          await this.mailAbout(
            trx,
            'cancellation',
            cancelled,
            link,
            b.host_ids.map((h) => contactOf(contacts, h, written)),
          );
        }
        await this.offerFreedTime(trx, cancelled);
        return cancelled;
      });
    } finally {
      this.deps.busy.changed(b.host_ids);
    }
    if (wasPending) await this.paid.closeSession(row);
    return row;
  }

  /** Queues the waitlist offer of a booking's freed time (a link booking, not yet started). */
  async offerFreedTime(trx: Tx, b: repo.BookingRow): Promise<void> {
    if (b.booking_link_id === null || new Date(b.start_time).getTime() <= this.deps.clock.nowMs()) return;
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
      },
      this.deps.clock.now(),
    );
  }

  // ---- helpers -----------------------------------------------------------------------------------

  /** What a creating request asks for, after the surface-specific parts (who, which link). */
  private fields(body: Static<typeof PublicCreateBody>, link: BookingLink | null, p: input.Problems) {
    const slot = input.interval(body, link, p);
    const customer = {
      email: input.email(body.customer_email, 'customer_email', p),
      name: input.text(body.customer_name, 'customer_name', p, 200),
      timezone: input.zone(body.customer_timezone, 'customer_timezone', p),
    };
    const notes = body.notes === undefined ? null : input.text(body.notes, 'notes', p, 5000, false) || null;
    const metadata = input.metadata(body.metadata, p);
    const answers = link
      ? input.answers(body.answers, link.questions, p)
      : (() => {
          if (body.answers !== undefined && Object.keys(body.answers).length > 0) {
            p.add('answers', 'are only taken for bookings through a booking link');
          }
          return {};
        })();
    return { slot: slot as Interval, customer, notes, metadata, answers };
  }

  private notPast(slot: Interval): void {
    if (slot.start < this.deps.clock.nowMs()) {
      throw new Unprocessable('start_time is in the past; choose a time in the future', {
        code: 'start_in_past',
      });
    }
  }

  private notStarted(b: repo.BookingRow): void {
    if (new Date(b.start_time).getTime() <= this.deps.clock.nowMs()) {
      throw new Unprocessable('The booking has already started', { code: 'booking_started' });
    }
  }

  private async owned(accountId: string, id: string): Promise<repo.BookingRow> {
    const row =
      isPrefixedId(id) && id.startsWith('booking_')
        ? await repo.findBooking(this.deps.db, accountId, id)
        : undefined;
    if (!row) throw new NotFound('No booking with this id');
    return row;
  }

  /** Live hosts among `ids`, in that order (a deleted host is skipped). */
  private async hostsOf(ids: readonly string[]): Promise<PrincipalProfile[]> {
    const profiles = await this.deps.principals.profiles(ids);
    return ids
      .map((id) => profiles.get(id.toLowerCase()))
      .filter((p): p is PrincipalProfile => p !== undefined);
  }

  /** Round robin: fewest live bookings of the link around the slot first, then least recently booked. */
  private async roundRobinOrder(link: BookingLink, hosts: PrincipalProfile[], slot: Interval) {
    const load = await repo.roundRobinLoad(
      this.deps.db,
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

  private async publicBooking(b: repo.BookingRow) {
    const link = b.booking_link_id ? await this.deps.links.get(b.account_id, b.booking_link_id) : null;
    const contacts = await this.deps.principals.contacts(b.host_ids);
    return presentPublicBooking(
      b,
      titleOf(b, link),
      b.host_ids.map((h) => contacts.get(h)?.name ?? ''),
    );
  }

  private manageUrl(token: string): string {
    return `${this.deps.config.baseUrl}/b/${token}`;
  }

  private async mailAbout(
    trx: Tx,
    kind: BookingMailKind,
    booking: repo.BookingRow,
    link: BookingLink | null,
    hosts: Contact[],
    token?: string,
    batch?: WriteBatch,
  ): Promise<void> {
    const manage = token ?? manageToken(this.deps.linkKey, booking.id, booking.manage_nonce);
    await this.deps.mail.enqueue(
      trx,
      bookingMails({
        kind,
        booking,
        title: titleOf(booking, link),
        hosts,
        manageUrl: this.manageUrl(manage),
        fromAddress: addressOf(this.deps.config.mailFrom),
      }),
      batch,
    );
  }
}

function iso(d: Date | string): string {
  return new Date(d).toISOString();
}

/** What a booking is called: as stored when it was made, else (made before titles were stored) its link's. */
function titleOf(b: Pick<repo.BookingRow, 'title'>, link: BookingLink | null): string {
  return b.title ?? link?.title ?? 'Booking';
}

/**
 * The booking as its hosts' calendars show it (calendar write-through): the link's title with the
 * customer's name, the customer as guest, and what they wrote. No self-service link: that is the
 * customer's, not the host's.
 */
function meetingOf(b: repo.BookingRow, link: BookingLink | null): MeetingSpec {
  const lines = [`Booked through Kairos by ${b.customer_name} <${b.customer_email}>.`];
  if (b.notes) lines.push('', b.notes);
  const answers = Object.entries(b.answers ?? {});
  if (answers.length > 0) {
    const labels = new Map((link?.questions ?? []).map((q) => [q.id, q.label]));
    lines.push(
      '',
      ...answers.map(([id, v]) => `${labels.get(id) ?? id}: ${Array.isArray(v) ? v.join(', ') : String(v)}`),
    );
  }
  return {
    key: b.id,
    accountId: b.account_id,
    principalIds: b.host_ids,
    title: `${link?.title ?? 'Booking'} with ${b.customer_name}`,
    description: lines.join('\n'),
    attendees: [{ name: b.customer_name, email: b.customer_email }],
    start: new Date(b.start_time),
    end: new Date(b.end_time),
  };
}

function limitsOf(link: BookingLink | null): BookingLimits {
  return link ? { minimumNoticeMinutes: link.minimumNoticeMinutes, maxDaysAhead: link.maxDaysAhead } : {};
}

function contactOf(
  contacts: Map<string, PrincipalContact>,
  id: string,
  calendarWritten: ReadonlySet<string> = new Set(),
): Contact {
  const c = contacts.get(id);
  return { id, name: c?.name ?? '', email: c?.email ?? null, calendarWritten: calendarWritten.has(id) };
}

/** The occupancy of host `h` for a booking at `slot`: the slot padded with the host's buffers. */
export function occupancyOf(ownerId: string, h: PrincipalProfile, slot: Interval): repo.OccupancyRow {
  return {
    ownerId,
    principalId: h.id,
    start: new Date(slot.start - h.schedule.buffer_before_minutes * MINUTE),
    end: new Date(slot.end + h.schedule.buffer_after_minutes * MINUTE),
  };
}

/** `success_url` / `cancel_url`: absolute http(s) URLs when given. */
function returnUrls(body: ReturnUrls, p: input.Problems): void {
  for (const field of ['success_url', 'cancel_url'] as const) {
    const v = body[field];
    if (v !== undefined && !isHttpUrl(v)) p.add(field, 'must be an absolute http(s) URL');
  }
}

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'https:' || u.protocol === 'http:') && v.length <= 2048;
  } catch {
    return false;
  }
}
