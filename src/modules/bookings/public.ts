/**
 * The public booking surface (docs/api.md#public-booking-surface): a link's page and its free time,
 * booking without an account, and the attendee's self-service by token. Writes go through the one
 * write path (write.ts), which this surface holds.
 */
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../db/store.js';
import type { Clock } from '../../platform/clock.js';
import type { Interval } from '../../lib/intervals.js';
import { onGrid, slotInterval } from '../../lib/slots.js';
import type { Caller } from '../../platform/auth.js';
import { NotFound } from '../../platform/errors.js';
import { publicName } from '../../lib/mail-text.js';
import { Problems } from '../../platform/validation.js';
import type { LinkSeatsInput, SeatSessionSlot } from '../availability/api.js';
import type { BookingLink } from '../booking-links/api.js';
import type { PrincipalContact, PrincipalProfile } from '../principals/api.js';
import type { BookingsNeeds } from './api.js';
import { DAY } from '../../lib/time.js';
import { type BookingsPlatform, limitsOf, type Mode, returnUrls, titleOf } from './helpers.js';
import * as input from './input.js';
import { presentPublicBooking, presentPublicSeries } from './present.js';
import * as repo from './repo.js';
import { type CancelScope, notInSeries, type SeriesWrites } from './series.js';
import * as seriesRepo from './series-repo.js';
import type { PublicCreateBody } from './schemas.js';
import { isTokenShape, tokenHash } from './tokens.js';
import type { BookingWrites, Written } from './write.js';

/**
 * Whether a link offers a slot starting where `slot` does, as far as the grid decides (the link's
 * slots: GET /v1/public/links/{slug}/availability): a point of the grid of min(duration, 15 min) steps
 * from local midnight in a host's zone — the first host's for a collective link (its slots are aligned
 * there), any host's otherwise (each host's own slots are). Working hours, notice, horizon, busy time
 * and buffers are the booking's own checks (409 slot_unavailable).
 */
function offeredStart(slot: Interval, link: BookingLink, hosts: readonly PrincipalProfile[]): boolean {
  if (hosts.length === 0) return true; // no host: the booking itself refuses the time
  const step = slotInterval({ durationMs: slot.end - slot.start });
  const zones =
    link.assignment === 'collective' ? [hosts[0]!.schedule.timezone] : hosts.map((h) => h.schedule.timezone);
  return zones.some((zone) => onGrid(slot.start, step, zone));
}

/** A self-service link keeps working this long after its booking ended (then 404). */
const MANAGE_LINK_AFTER_END_MS = 30 * DAY;

export class PublicBookings {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly testClocks: BookingsPlatform['testClocks'];

  constructor(
    platform: Pick<BookingsPlatform, 'db' | 'clock' | 'testClocks'>,
    private readonly needs: Pick<BookingsNeeds, 'bookingLinks' | 'principals' | 'availability'>,
    private readonly writes: BookingWrites,
    private readonly series: SeriesWrites,
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.testClocks = platform.testClocks;
  }

  /**
   * The mode of the public surface (docs/api.md#test-mode): the link's (or the booking's), with that
   * mode's clock — the server's for live mode (no statement), the account's test clock for test mode.
   */
  async modeOf(accountId: string, livemode: boolean): Promise<Mode> {
    return { livemode, clock: await this.testClocks.clockFor(accountId, livemode) };
  }

  /**
   * The live, active link behind a slug as `caller` may see it: anonymous callers and other keys see
   * every active link; a publishable key only its own account's. Anything else is 404.
   */
  async publicLink(caller: Caller, slug: string): Promise<BookingLink> {
    const link = /^[a-z0-9-]{3,64}$/.test(slug) ? await this.needs.bookingLinks.bySlug(slug) : null;
    if (!link?.active || (caller.kind === 'publishable' && caller.accountId !== link.accountId)) {
      throw new NotFound('No booking link with this slug');
    }
    return link;
  }

  /** GET /v1/public/links/{slug}: what a booking page shows; no ids, no e-mails. */
  async publicLinkView(caller: Caller, slug: string) {
    const link = await this.publicLink(caller, slug);
    const contacts = await this.needs.principals.contacts(link.hostIds);
    return {
      booking_link: {
        slug: link.slug,
        title: link.title,
        description: link.description,
        duration_minutes: link.defaultDuration,
        durations: link.durations,
        hosts: link.hostIds.map((id) => ({ display_name: publicName(contacts.get(id)?.name) })),
        questions: link.questions,
        price_amount: link.priceAmount,
        price_currency: link.priceCurrency,
        livemode: link.livemode,
        recurrence: link.recurrence,
        seats: link.seats && { capacity: link.seats.capacity, show_remaining: link.seats.showRemaining },
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
    const p = new Problems();
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
    const timezone = q.timezone ?? null;
    p.throwIfAny();
    const [hosts, mode] = await Promise.all([
      this.writes.hostsOf(link.hostIds),
      this.modeOf(link.accountId, link.livemode),
    ]);
    if (hosts.length === 0) {
      return JSON.stringify({
        duration_minutes: duration,
        timezone: timezone ?? 'UTC',
        stale: false,
        busy_as_of: null,
        slots: [],
      });
    }
    return this.needs.availability.linkSlots({
      ...(link.seats ? { seats: await this.seatsOf(link, from as number, to as number) } : {}),
      hosts,
      mode: link.assignment === 'collective' ? 'all' : 'any',
      window: { start: from as number, end: to as number },
      durationMinutes: duration,
      timezone: timezone ?? hosts[0]!.schedule.timezone,
      limits: limitsOf(link),
      livemode: mode.livemode,
      clock: mode.clock,
    });
  }

  /**
   * A seated link's sessions near the window (a session starting before `from` may hold a host's time
   * into it), with the occupancy each holds: what its slots show (docs/api.md#seats).
   */
  private async seatsOf(link: BookingLink, from: number, to: number): Promise<LinkSeatsInput> {
    const rows = await seriesRepo.sessionsOfLink(this.db, link.id, new Date(from - DAY), new Date(to + DAY));
    const sessions = new Map<
      string,
      SeatSessionSlot & { occupancy: SeatSessionSlot['occupancy'][number][] }
    >();
    for (const r of rows) {
      let s = sessions.get(r.id);
      if (!s) {
        s = {
          start: new Date(r.start_time).getTime(),
          end: new Date(r.end_time).getTime(),
          capacity: r.capacity,
          seatsTaken: r.seats_taken,
          occupancy: [],
        };
        sessions.set(r.id, s);
      }
      if (r.principal_id !== null && r.o_start !== null && r.o_end !== null) {
        s.occupancy.push({
          principalId: r.principal_id,
          start: new Date(r.o_start).getTime(),
          end: new Date(r.o_end).getTime(),
        });
      }
    }
    return {
      capacity: link.seats?.capacity ?? 1,
      showRemaining: link.seats?.showRemaining ?? false,
      sessions: [...sessions.values()],
    };
  }

  /** POST /v1/public/links/{slug}/bookings */
  async createPublic(caller: Caller, slug: string, body: Static<typeof PublicCreateBody>) {
    const link = await this.publicLink(caller, slug);
    const p = new Problems();
    returnUrls(body, p);
    const fields = input.bookingFields(body, link, p);
    const recurrence = input.recurrenceOf(body, link, p, true);
    const hosts = await this.writes.hostsOf(link.hostIds);
    if (fields.slot !== undefined && !offeredStart(fields.slot, link, hosts)) {
      const step = slotInterval({ durationMs: fields.slot.end - fields.slot.start }) / 60_000;
      p.add(
        'start_time',
        `is not an offered slot start: this link offers starts every ${step} minutes from the host's local midnight; take one from its availability`,
      );
    }
    p.throwIfAny();
    const mode = await this.modeOf(link.accountId, link.livemode);
    this.writes.notPast(fields.slot, mode.clock);
    if (recurrence) {
      const made = await this.series.create({
        accountId: link.accountId,
        link,
        hosts,
        assignment: link.assignment,
        ...fields,
        rule: { ...recurrence, timezone: recurrence.timezone ?? hosts[0]?.schedule.timezone ?? 'UTC' },
        mode,
      });
      return {
        ...this.publicCreated(made.first, link),
        series: presentPublicSeries(made.series, made.occurrences),
      };
    }
    const hold = await this.writes.paid.holdFor(link);
    const created = await this.writes.book({
      accountId: link.accountId,
      link,
      hosts,
      assignment: link.assignment,
      ...fields,
      paid: hold,
      mode,
    });
    return this.publicCreated(await this.writes.checkout(created, link, hold, body), link);
  }

  /**
   * The creation answer of the public surface: the attendee's view and, once, the self-service link.
   * From the link and the hosts' contacts the write held: nothing is read again.
   */
  publicCreated(created: Written, link: BookingLink) {
    return {
      booking: { ...publicView(created.row, link, created.contacts), manage_url: created.manageUrl },
    };
  }

  /** The booking behind a self-service token, while its link works; else 404. */
  async byToken(token: string): Promise<repo.BookingRow> {
    return (await this.withMode(token)).row;
  }

  /**
   * The booking behind a self-service token with its mode's clock (the token acts in the booking's
   * mode), while its link works by that clock; else 404.
   */
  private async withMode(token: string): Promise<{ row: repo.BookingRow; mode: Mode }> {
    const row = isTokenShape(token) ? await repo.findByTokenHash(this.db, tokenHash(token)) : undefined;
    const mode = row ? await this.modeOf(row.account_id, row.livemode) : null;
    // An occurrence's link (the series' mail carries the first's) works as long as its series does.
    const end = row?.series_id ? await seriesRepo.lastEndOf(this.db, row.series_id) : row?.end_time;
    if (
      !row ||
      !mode ||
      new Date(end ?? row.end_time).getTime() + MANAGE_LINK_AFTER_END_MS < mode.clock.nowMs()
    ) {
      throw new NotFound('This booking link is not valid');
    }
    return { row, mode };
  }

  /** GET /v1/public/bookings/{token} */
  async publicView(token: string) {
    return { booking: await this.publicBooking(await this.byToken(token)) };
  }

  /** POST /v1/public/bookings/{token}/cancel; an occurrence of a series takes a `scope`. */
  async publicCancel(token: string, reason: string | undefined, scope?: CancelScope) {
    const { row: b, mode } = await this.withMode(token);
    if (b.series_id !== null && scope !== undefined && scope !== 'single') {
      // The later occurrences through any occurrence's link, even one that has started or been
      // cancelled: `following` from a started one is every occurrence not yet started (`series`).
      const started = new Date(b.start_time).getTime() <= mode.clock.nowMs();
      const row = await this.series.cancel(b, started ? 'series' : scope, reason, mode.clock);
      return { booking: await this.publicBooking(row) };
    }
    if (repo.LIVE_STATUSES.includes(b.status)) this.writes.notStarted(b, mode.clock);
    if (b.series_id !== null) {
      return { booking: await this.publicBooking(await this.series.cancel(b, 'single', reason, mode.clock)) };
    }
    notInSeries(scope);
    return {
      booking: await this.publicBooking(await this.writes.cancelBooking(b, reason, mode.clock)),
    };
  }

  /** POST /v1/public/bookings/{token}/reschedule: the same length at a new start. */
  async publicReschedule(token: string, startTime: string) {
    const { row: b, mode } = await this.withMode(token);
    const p = new Problems();
    const start = input.instant(startTime, 'start_time', p);
    p.throwIfAny();
    this.writes.notStarted(b, mode.clock);
    const length = new Date(b.end_time).getTime() - new Date(b.start_time).getTime();
    const moved = await this.writes.reschedule(
      b,
      { start: start as number, end: (start as number) + length },
      {},
      mode.clock,
    );
    return { booking: await this.publicBooking(moved) };
  }

  private async publicBooking(b: repo.BookingRow) {
    const link = b.booking_link_id
      ? await this.needs.bookingLinks.get(b.account_id, b.booking_link_id)
      : null;
    return publicView(b, link, await this.needs.principals.contacts(b.host_ids));
  }
}

/** A booking as its attendee sees it: its title and its hosts' public names, no ids or e-mails. */
function publicView(b: repo.BookingRow, link: BookingLink | null, contacts: Map<string, PrincipalContact>) {
  return presentPublicBooking(
    b,
    titleOf(b, link),
    b.host_ids.map((h) => publicName(contacts.get(h)?.name)),
  );
}
