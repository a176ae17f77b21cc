/**
 * Bookings (docs/api.md#bookings, #public-booking-surface; docs/design.md#bookings): the
 * authenticated API and what other modules call (`BookingsApi`). It holds the one write path
 * (write.ts) and the public surface (public.ts), and answers for both to other modules.
 */
import type { Static } from '@sinclair/typebox';
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import type { Interval } from '../../lib/intervals.js';
import { MINUTE } from '../../lib/time.js';
import type { Actor } from '../../platform/actor.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { Forbidden, NotFound } from '../../platform/errors.js';
import { isPrefixedId, isUuid } from '../../platform/ids.js';
import { decodeCursor, pageBy } from '../../platform/pagination.js';
import { Problems } from '../../platform/validation.js';
import type { BookingLink } from '../booking-links/api.js';
import type { PrincipalProfile } from '../principals/api.js';
import type {
  BookingSpan,
  BookingsApi,
  BookingsNeeds,
  MeetingBooked,
  MeetingBookingInput,
  WaitlistClaim,
} from './api.js';
import type { BookingBusySource } from './busy.js';
import { type BookingsPlatform, occupancyOf, returnUrls } from './helpers.js';
import * as input from './input.js';
import { bookMeeting, cancelMeeting } from './meetings.js';
import { meetingWith, presentBooking, presentSeries } from './present.js';
import type { PublicBookings } from './public.js';
import * as repo from './repo.js';
import type { CreateBody, ListQuery, UpdateBody } from './schemas.js';
import { isTokenShape, tokenHash } from './tokens.js';
import { type CancelScope, notInSeries, type SeriesWrites } from './series.js';
import type { Assignment, BookingWrites } from './write.js';

export class BookingService implements BookingsApi {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly linkKey: Buffer;

  constructor(
    platform: Pick<BookingsPlatform, 'db' | 'clock' | 'keys'>,
    private readonly needs: BookingsNeeds,
    private readonly busy: Pick<BookingBusySource, 'changed'>,
    private readonly writes: BookingWrites,
    private readonly publicSurface: PublicBookings,
    private readonly series: SeriesWrites,
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.linkKey = platform.keys.linkKey;
  }

  /** POST /v1/bookings */
  async create(actor: Actor, body: Static<typeof CreateBody>) {
    const p = new Problems();
    let link: BookingLink | null = null;
    if (body.booking_link_id !== undefined) {
      link = isPrefixedId(body.booking_link_id)
        ? await this.needs.bookingLinks.get(actor.accountId, body.booking_link_id)
        : null;
      // A link of the other mode is as absent as another account's (docs/api.md#test-mode).
      if (link && link.livemode !== actor.livemode) link = null;
      if (!link) p.add('booking_link_id', 'is not a booking link of this account');
    }
    if (body.principal_id !== undefined && !isUuid(body.principal_id))
      p.add('principal_id', 'must be a UUID');
    if (link && body.principal_id !== undefined && !link.hostIds.includes(body.principal_id.toLowerCase())) {
      p.add('principal_id', 'must be one of the booking link’s hosts');
    }
    returnUrls(body, p);
    const fields = input.bookingFields(body, link, p);
    const recurrence = input.recurrenceOf(body, link, p, false);
    p.throwIfAny();
    this.writes.notPast(fields.slot, actor.clock);
    const hold = await this.writes.paid.holdFor(link);

    let hosts: PrincipalProfile[];
    let assignment: Assignment;
    if (link) {
      const pinned = body.principal_id?.toLowerCase();
      assignment = pinned !== undefined && link.assignment !== 'collective' ? 'single' : link.assignment;
      hosts = await this.writes.hostsOf(
        pinned !== undefined && link.assignment !== 'collective' ? [pinned] : link.hostIds,
      );
    } else {
      const target = body.principal_id ?? actor.principalId;
      const profile = await this.needs.principals.access.actingFor(actor, target);
      if (!profile) throw new Forbidden('The principal does not exist or this caller may not book for it');
      hosts = [profile];
      assignment = 'single';
    }
    if (recurrence) {
      const made = await this.series.create({
        accountId: actor.accountId,
        link,
        hosts,
        assignment,
        ...fields,
        rule: { ...recurrence, timezone: recurrence.timezone ?? hosts[0]?.schedule.timezone ?? 'UTC' },
        mode: { livemode: actor.livemode, clock: actor.clock },
      });
      return {
        booking: { ...presentBooking(made.first.row), manage_url: made.first.manageUrl },
        series: presentSeries(made.series, made.occurrences),
      };
    }
    const created = await this.writes.checkout(
      await this.writes.book({
        accountId: actor.accountId,
        link,
        hosts,
        assignment,
        ...fields,
        paid: hold,
        mode: { livemode: actor.livemode, clock: actor.clock },
      }),
      link,
      hold,
      body,
    );
    return { booking: { ...presentBooking(created.row), manage_url: created.manageUrl } };
  }

  /** GET /v1/bookings: the actor's account's bookings of its mode. */
  async list(actor: Actor, q: Static<typeof ListQuery>) {
    const p = new Problems();
    if (q.principal_id !== undefined && !isUuid(q.principal_id)) p.add('principal_id', 'must be a UUID');
    const from = input.instant(q.from, 'from', p);
    const to = input.instant(q.to, 'to', p);
    if (from !== undefined && to !== undefined && to <= from) p.add('to', 'must be after from');
    p.throwIfAny();
    const after = decodeCursor(q.cursor, { prefix: 'booking' });
    const rows = await repo.listBookings(this.db, {
      accountId: actor.accountId,
      livemode: actor.livemode,
      principalId: q.principal_id?.toLowerCase(),
      bookingLinkId: q.booking_link_id,
      status: q.status,
      from: from === undefined ? undefined : new Date(from),
      to: to === undefined ? undefined : new Date(to),
      after,
      limit: q.limit,
    });
    const { items, pagination } = pageBy(rows, q.limit, (b) => b.start_time);
    const sync = await this.needs.calendars.calendarSync(items.map((b) => b.id));
    return {
      bookings: items.map((b) => ({ ...presentBooking(b), calendar_sync: sync.get(b.id) ?? [] })),
      pagination,
    };
  }

  /** GET /v1/bookings/{id}: another account's (or mode's) booking is 404. */
  async get(actor: Actor, id: string) {
    const row = await this.owned(actor, id);
    const sync = await this.needs.calendars.calendarSync([row.id]);
    return { booking: { ...presentBooking(row), calendar_sync: sync.get(row.id) ?? [] } };
  }

  /** PATCH /v1/bookings/{id}: notes and metadata; a new time is a reschedule. */
  async update(actor: Actor, id: string, body: Static<typeof UpdateBody>) {
    const b = await this.owned(actor, id);
    const p = new Problems();
    // Lengths and metadata limits are the route schema's (schemas.ts UpdateBody).
    const notes = typeof body.notes === 'string' ? body.notes.trim() : body.notes;
    const metadata = body.metadata;
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
        if (end <= start) p.add('end_time', 'must be after start_time');
        else if (input.wholeBookingMinutes((end - start) / MINUTE, p)) slot = { start, end };
      }
    }
    p.throwIfAny();
    if (
      slot &&
      (slot.start !== new Date(b.start_time).getTime() || slot.end !== new Date(b.end_time).getTime())
    ) {
      const moved = await this.writes.reschedule(b, slot, { notes, metadata }, actor.clock);
      return { booking: presentBooking(moved) };
    }
    if (notes === undefined && metadata === undefined) return { booking: presentBooking(b) };
    const row = await withTransaction(this.db, (trx) =>
      repo.updateBooking(trx, b.id, {
        ...(notes !== undefined ? { notes } : {}),
        ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) } : {}),
        updated_at: actor.clock.now(),
      }),
    );
    return { booking: presentBooking(row) };
  }

  /** DELETE /v1/bookings/{id}?reason=&scope= */
  async cancel(actor: Actor, id: string, reason: string | undefined, scope?: CancelScope) {
    const b = await this.owned(actor, id);
    if (b.series_id !== null) {
      return { booking: presentBooking(await this.series.cancel(b, scope ?? 'single', reason, actor.clock)) };
    }
    notInSeries(scope);
    return { booking: presentBooking(await this.writes.cancelBooking(b, reason, actor.clock)) };
  }

  /** GET /v1/booking-series/{id}: another account's (or mode's) series is 404. */
  async getSeries(actor: Actor, id: string) {
    const found = isPrefixedId(id) ? await this.series.find(actor.accountId, id, actor.livemode) : undefined;
    if (!found) throw new NotFound('No booking series with this id');
    return { series: presentSeries(found.series, found.occurrences) };
  }

  // ---- bookings of accepted proposals (meetings.ts) ----------------------------------------------

  takeMeeting(trx: Tx, m: MeetingBookingInput, ifTaken: 'abort' | 'undo'): Promise<MeetingBooked> {
    const deps = { clock: m.clock ?? this.clock, linkKey: this.linkKey, webhooks: this.needs.webhooks };
    if (ifTaken === 'undo') {
      return repo
        .undoIfTaken(trx, 'meeting_booking', () => bookMeeting(trx, deps, m, occupancyOf))
        .then((booked) => (booked ? 'booked' : 'taken'));
    }
    return bookMeeting(trx, deps, m, occupancyOf).then(
      () => 'booked' as const,
      (err: unknown) => {
        if (repo.isExclusionViolation(err)) return 'taken' as const;
        throw err;
      },
    );
  }

  cancelMeeting(trx: Tx, proposalId: string, reason: string | null): Promise<string[]> {
    return cancelMeeting(trx, { clock: this.clock, webhooks: this.needs.webhooks }, proposalId, reason);
  }

  async liveBookingsIn(principalId: string, livemode: boolean, range: Interval): Promise<BookingSpan[]> {
    const rows = await repo.liveBookingsIn(
      this.db,
      principalId,
      livemode,
      new Date(range.start),
      new Date(range.end),
    );
    return rows.map((r) => ({ id: r.id, start: r.start_time.getTime(), end: r.end_time.getTime() }));
  }

  busyChanged(principalIds: Iterable<string>): void {
    this.busy.changed(principalIds);
  }

  meetingTitle(names: readonly string[]): string {
    return meetingWith(names);
  }

  /** The actor's account's booking of the actor's mode; anything else is 404. */
  private async owned(actor: Pick<Actor, 'accountId' | 'livemode'>, id: string): Promise<repo.BookingRow> {
    const row =
      isPrefixedId(id) && id.startsWith('booking_')
        ? await repo.findBooking(this.db, actor.accountId, id, actor.livemode)
        : undefined;
    if (!row) throw new NotFound('No booking with this id');
    return row;
  }

  // ---- the public surface, as other modules ask it (public.ts) -----------------------------------

  publicLink(caller: Caller, slug: string): Promise<BookingLink> {
    return this.publicSurface.publicLink(caller, slug);
  }

  publicLinkView(caller: Caller, slug: string) {
    return this.publicSurface.publicLinkView(caller, slug);
  }

  byToken(token: string): Promise<repo.BookingRow> {
    return this.publicSurface.byToken(token);
  }

  // ---- what the pages ask (pages/service.ts) ------------------------------------------------------

  async manageTokenIssued(token: string): Promise<boolean> {
    return isTokenShape(token) && (await repo.findByTokenHash(this.db, tokenHash(token))) !== undefined;
  }

  async waitlistClaim(token: string): Promise<WaitlistClaim | null> {
    const e = isTokenShape(token) ? await repo.findEntryByClaimHash(this.db, tokenHash(token)) : undefined;
    if (!e) return null;
    return {
      accountId: e.account_id,
      bookingLinkId: e.booking_link_id,
      customerName: e.customer_name,
      status: e.status,
      offerStart: e.offer_start,
      offerEnd: e.offer_end,
      offerExpiresAt: e.offer_expires_at,
    };
  }
}
