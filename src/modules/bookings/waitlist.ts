/**
 * The waitlist of a booking link (docs/api.md#waitlist). Visitors join with the window they could
 * make; when a live booking of the link is cancelled or expires, its time is held — occupancy rows
 * owned by the entry, under the same exclusion constraint as bookings — for the earliest waiting entry
 * whose window contains it, and offered by mail with a claim link. A claim turns the hold into a
 * booking in one transaction; a hold not claimed in time (KAIROS_WAITLIST_HOLD_MINUTES) passes to the
 * next entry, then is released. Offers and the reaper run on the job runner with the injected clock.
 *
 * Test mode (docs/api.md#test-mode): an entry has its link's mode, and its times (the window's end,
 * the offer's hold) run on the clock of that mode. The live reaper leaves test entries alone;
 * `timedWork()` passes on test offers and ends test windows as the test clock passes them, and makes
 * the offer of time a test payment hold freed at once, on that clock.
 */
import type { Static } from '@sinclair/typebox';
import type { Config } from '../../config.js';
import { inBatches } from '../../db/purge.js';
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import type { Job } from '../../jobs/runner.js';
import type { Interval } from '../../lib/intervals.js';
import type { Actor } from '../../platform/actor.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import type { TestClocks } from '../../platform/test-clocks.js';
import type { BookingLink } from '../booking-links/api.js';
import type { TimedWork } from '../test-clock/api.js';
import { Conflict, NotFound, Unprocessable } from '../../platform/errors.js';
import { isPrefixedId, prefixedId } from '../../platform/ids.js';
import { decodeCursor, encodeCursor } from '../../platform/pagination.js';
import type { JobContribution, ScheduleContribution } from '../module.js';
import type { PrincipalProfile } from '../principals/api.js';
import type { BookingsNeeds } from './api.js';
import type { BookingBusySource } from './busy.js';
import * as input from './input.js';
import { offerMail } from './mails.js';
import { presentEntry, presentPublicEntry } from './present.js';
import * as repo from './repo.js';
import * as testRepo from './test-mode-repo.js';
import type { ClaimBody, JoinBody } from './schemas.js';
import { occupancyOf } from './helpers.js';
import type { PublicBookings } from './public.js';
import { WAITLIST_OFFER_QUEUE } from './notices.js';
import type { BookingWrites } from './write.js';
import { isTokenShape, newClaimToken, tokenHash } from './tokens.js';
import type { ListQuery } from '../../platform/schemas.js';
import { Problems } from '../../platform/validation.js';
import { DAY, MINUTE } from '../../lib/time.js';

const MAX_WINDOW_DAYS = 90;
/** Waiting entries whose window ended, marked expired per statement by the reaper. */
const ENDED_BATCH = 500;

/** The freed time a job offers (a cancelled or expired booking, or a hold that passed on). */
interface FreedTime {
  link_id: string;
  account_id: string;
  principal_id: string;
  host_ids: string[];
  start: string;
  end: string;
}

export interface WaitlistDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'baseUrl' | 'waitlistHoldMinutes'>;
  /** The clock of an entry's mode (live: the server's clock, without a statement). */
  testClocks: Pick<TestClocks, 'clockFor'>;
  principals: Pick<BookingsNeeds['principals'], 'profiles'>;
  links: Pick<BookingsNeeds['bookingLinks'], 'get'>;
  mail: BookingsNeeds['mail'];
  busy: Pick<BookingBusySource, 'changed'>;
  writes: BookingWrites;
  publicBookings: Pick<PublicBookings, 'publicLink' | 'publicCreated'>;
}

export class WaitlistService {
  constructor(private readonly deps: WaitlistDeps) {}

  /** The clock of a mode of the account. */
  private clockOf(accountId: string, livemode: boolean): Promise<Clock> {
    return livemode ? Promise.resolve(this.deps.clock) : this.deps.testClocks.clockFor(accountId, false);
  }

  /** POST /v1/public/links/{slug}/waitlist */
  async join(caller: Caller, slug: string, body: Static<typeof JoinBody>) {
    const link = await this.deps.publicBookings.publicLink(caller, slug);
    // The entry is of the link's mode, and so are its times.
    const clock = await this.clockOf(link.accountId, link.livemode);
    const p = new Problems();
    // A seated link's freed seat is a seat, not time to hold for someone (docs/api.md#seats): no waitlist.
    if (link.seats)
      p.add('booking_link', 'a seated booking link has no waitlist: its slots show the seats left');
    // Formats and lengths are the route schema's (schemas.ts JoinBody).
    const email = body.customer_email.trim();
    const name = body.customer_name.trim();
    const notes = body.notes?.trim() || null;
    const from = input.instant(body.preferred_from, 'preferred_from', p);
    const to = input.instant(body.preferred_to, 'preferred_to', p);
    if (from !== undefined && to !== undefined) {
      if (to <= from) p.add('preferred_to', 'must be after preferred_from');
      else if (to - from > MAX_WINDOW_DAYS * DAY)
        p.add('preferred_to', `must be at most ${MAX_WINDOW_DAYS} days after preferred_from`);
      else if (to <= clock.nowMs()) p.add('preferred_to', 'must be in the future');
    }
    p.throwIfAny();
    const now = clock.now();
    const row = await repo.insertEntry(this.deps.db, {
      id: prefixedId('wl', now.getTime()),
      account_id: link.accountId,
      booking_link_id: link.id,
      customer_email: email,
      customer_name: name,
      notes,
      preferred_from: new Date(from as number),
      preferred_to: new Date(to as number),
      status: 'waiting',
      livemode: link.livemode,
      created_at: now,
      updated_at: now,
    });
    return { waitlist_entry: presentPublicEntry(row) };
  }

  /** GET /v1/booking-links/{id}/waitlist (oldest first, the order offers follow). */
  async list(actor: Pick<Actor, 'accountId' | 'livemode'>, linkId: string, q: Static<typeof ListQuery>) {
    await this.ownedLink(actor, linkId);
    const after = decodeCursor(q.cursor, { prefix: 'wl' });
    const rows = await repo.listEntries(this.deps.db, linkId, after, q.limit);
    const hasMore = rows.length > q.limit;
    const items = hasMore ? rows.slice(0, q.limit) : rows;
    const last = items[items.length - 1];
    return {
      waitlist_entries: items.map(presentEntry),
      pagination: {
        next_cursor: hasMore && last ? encodeCursor({ at: last.created_at, id: last.id }) : null,
        has_more: hasMore,
      },
    };
  }

  /** DELETE /v1/booking-links/{id}/waitlist/{entry_id}: removed; a hold it had passes on. */
  async remove(actor: Pick<Actor, 'accountId' | 'livemode' | 'clock'>, linkId: string, entryId: string) {
    await this.ownedLink(actor, linkId);
    if (!isPrefixedId(entryId) || !entryId.startsWith('wl_'))
      throw new NotFound('No waitlist entry with this id');
    let released: string[] = [];
    try {
      const row = await withTransaction(this.deps.db, async (trx) => {
        const e = await repo.lockEntry(trx, entryId);
        if (!e || e.booking_link_id !== linkId) throw new NotFound('No waitlist entry with this id');
        if (e.status !== 'waiting' && e.status !== 'offered') return e;
        if (e.status === 'offered') {
          released = await repo.releaseOccupancy(trx, e.id);
          await this.passOn(trx, e, actor.clock);
        }
        return repo.updateEntry(trx, e.id, {
          status: 'removed',
          claim_token_hash: null,
          updated_at: actor.clock.now(),
        });
      });
      return { waitlist_entry: presentEntry(row) };
    } finally {
      this.deps.busy.changed(released);
    }
  }

  /**
   * POST /v1/public/waitlist/{token}/claim → 201 booking. The answers to the link's questions are
   * checked as a public booking's are (input.answers: required ones, types, no unknown ones; 400 with
   * `errors["answers.<id>"]`), once the offer is known to be held.
   */
  async claim(token: string, body: Static<typeof ClaimBody> = {}) {
    const hash = isTokenShape(token) ? tokenHash(token) : null;
    const e = hash ? await repo.findEntryByClaimHash(this.deps.db, hash) : undefined;
    if (!e) throw new NotFound('This claim link is not valid');
    const clock = await this.clockOf(e.account_id, e.livemode);
    const nowMs = clock.nowMs();
    if (e.status !== 'offered' || !e.offer_expires_at || new Date(e.offer_expires_at).getTime() <= nowMs) {
      throw new Conflict('This offer is no longer held', {
        code: e.status === 'booked' ? 'offer_claimed' : 'offer_expired',
      });
    }
    const slot: Interval = {
      start: new Date(e.offer_start!).getTime(),
      end: new Date(e.offer_end!).getTime(),
    };
    if (slot.start <= nowMs)
      throw new Unprocessable('The offered time has already started', { code: 'start_in_past' });
    const link = await this.deps.links.get(e.account_id, e.booking_link_id);
    const profiles = await this.deps.principals.profiles(e.offer_host_ids ?? []);
    const hosts = (e.offer_host_ids ?? [])
      .map((h) => profiles.get(h))
      .filter((h): h is PrincipalProfile => !!h);
    if (!link || hosts.length === 0)
      throw new Conflict('This offer is no longer held', { code: 'offer_expired' });
    const p = new Problems();
    const answers = input.answers(body.answers, link.questions, p);
    p.throwIfAny();
    // A priced link's claim is a booking like any other: held until paid.
    const hold = await this.deps.writes.paid.holdFor(link);
    // The hold's rows go in the same transaction that writes the booking's: the time never becomes free.
    const created = await this.deps.writes.book({
      accountId: e.account_id,
      link,
      hosts,
      assignment: hosts.length > 1 ? 'collective' : 'single',
      slot,
      customer: { email: e.customer_email, name: e.customer_name, timezone: null },
      notes: e.notes,
      answers,
      metadata: {},
      waitlistEntryId: e.id,
      skipChecks: true,
      paid: hold,
      before: async (trx) => {
        const locked = await repo.lockEntry(trx, e.id);
        if (locked?.status !== 'offered' || locked.claim_token_hash !== hash) {
          throw new Conflict('This offer is no longer held', { code: 'offer_expired' });
        }
        await repo.releaseOccupancy(trx, e.id);
      },
      alsoIn: async (trx, booking) => {
        await repo.updateEntry(trx, e.id, {
          status: 'booked',
          booking_id: booking.id,
          // The hash stays: a second use of the link answers 409 offer_claimed, not 404.
          updated_at: clock.now(),
        });
      },
    });
    return this.deps.publicBookings.publicCreated(
      await this.deps.writes.checkout(created, link, hold, {}),
      link,
    );
  }

  /** Background work: offers of freed time, and the reaper of holds not claimed in time. */
  work(): { jobs: JobContribution[]; schedules: ScheduleContribution[] } {
    return {
      jobs: [
        {
          queue: WAITLIST_OFFER_QUEUE,
          handler: (job: Job<FreedTime>) => this.offer(job.payload),
          options: { concurrency: 2 },
        },
      ],
      schedules: [{ name: 'waitlist-hold-reaper', everyMs: 30_000, run: () => this.reap() }],
    };
  }

  /** Offers freed time to the earliest waiting entry whose window contains it (nothing if none). */
  async offer(freed: FreedTime): Promise<void> {
    let held: string[] = [];
    try {
      await withTransaction(this.deps.db, async (trx) => {
        held = await this.offerIn(trx, freed);
      });
    } finally {
      this.deps.busy.changed(held);
    }
  }

  /**
   * Passes expired live holds on to the next entry, or releases them; then marks expired the waiting
   * live entries whose window has ended, ENDED_BATCH a statement. How many entries it changed. Test
   * entries are left to test mode's timed work (`timedWork`).
   */
  async reap(): Promise<number> {
    const ids = await repo.expiredOffers(this.deps.db, this.deps.clock.now(), 100);
    for (const id of ids) await this.expireOffer(id, true, this.deps.clock);
    // Bounded per run as a purge is: the schedule runs in the job runner's pump, so a backlog is
    // worked off over several runs.
    const ended = await inBatches(
      () => repo.expireEndedWindows(this.deps.db, this.deps.clock.now(), ENDED_BATCH),
      ENDED_BATCH,
    );
    return ids.length + ended;
  }

  /** An offer whose hold ended on `clock`: expired, its time passed on to the next entry (or released). */
  private async expireOffer(id: string, livemode: boolean, clock: Clock): Promise<void> {
    let changed: string[] = [];
    try {
      await withTransaction(this.deps.db, async (trx) => {
        const e = await repo.lockEntry(trx, id);
        if (e?.status !== 'offered' || e.livemode !== livemode) return;
        if (new Date(e.offer_expires_at!).getTime() > clock.nowMs()) return;
        changed = await repo.releaseOccupancy(trx, e.id);
        await repo.updateEntry(trx, e.id, {
          status: 'expired', // the hash stays: a late claim answers 409 offer_expired
          updated_at: clock.now(),
        });
        changed = [...changed, ...(await this.passOn(trx, e, clock))];
      });
    } finally {
      this.deps.busy.changed(changed);
    }
  }

  /**
   * Test mode's waitlist work (docs/api.md#test-clock), and the payment holds' (paid.ts) whose freed
   * time it offers at once: what the live reaper and offer jobs do, for one account's test entries, at
   * the test clock's time.
   */
  timedWork(): TimedWork[] {
    const waitlist: TimedWork = {
      name: 'bookings.waitlist',
      nextDue: (accountId, until) => testRepo.nextTestWaitlistDue(this.deps.db, accountId, until),
      runDue: async (accountId, clock) => {
        for (const id of await testRepo.expiredTestOffers(this.deps.db, accountId, clock.now())) {
          await this.expireOffer(id, false, clock);
        }
        await inBatches(
          () => repo.expireEndedWindows(this.deps.db, clock.now(), ENDED_BATCH, accountId),
          ENDED_BATCH,
        );
      },
    };
    return [this.deps.writes.paid.timedWork((trx, b, clock) => this.offerFreedIn(trx, b, clock)), waitlist];
  }

  /** Offers the time a booking freed at once, in the caller's transaction, on `clock` (test mode). */
  private async offerFreedIn(trx: Tx, b: repo.BookingRow, clock: Clock): Promise<string[]> {
    if (b.booking_link_id === null) return [];
    return this.offerIn(
      trx,
      {
        link_id: b.booking_link_id,
        account_id: b.account_id,
        principal_id: b.principal_id,
        host_ids: b.host_ids,
        start: new Date(b.start_time).toISOString(),
        end: new Date(b.end_time).toISOString(),
      },
      clock,
    );
  }

  /** Offers an entry's held time to the next waiting entry (inside the caller's transaction). */
  private async passOn(trx: Tx, e: repo.WaitlistRow, clock: Clock): Promise<string[]> {
    if (!e.offer_start || !e.offer_end || !e.offer_host_ids || !e.offer_principal_id) return [];
    return this.offerIn(
      trx,
      {
        link_id: e.booking_link_id,
        account_id: e.account_id,
        principal_id: e.offer_principal_id,
        host_ids: e.offer_host_ids,
        start: new Date(e.offer_start).toISOString(),
        end: new Date(e.offer_end).toISOString(),
      },
      clock,
    );
  }

  /**
   * Offers freed time to the earliest waiting entry of the link (of the link's mode, as all its
   * entries are), on `clock`, else on the clock of the link's mode.
   */
  private async offerIn(trx: Tx, freed: FreedTime, given?: Clock): Promise<string[]> {
    const start = new Date(freed.start);
    const end = new Date(freed.end);
    const link = await this.deps.links.get(freed.account_id, freed.link_id);
    if (!link?.active) return [];
    const clock = given ?? (await this.clockOf(link.accountId, link.livemode));
    const now = clock.now();
    if (start.getTime() <= now.getTime()) return [];
    const entry = await repo.earliestWaiting(trx, freed.link_id, start, end);
    if (!entry) return [];
    const profiles = await this.deps.principals.profiles(freed.host_ids);
    const hosts = freed.host_ids.map((h) => profiles.get(h)).filter((h): h is PrincipalProfile => !!h);
    if (hosts.length === 0) return [];
    const slot = { start: start.getTime(), end: end.getTime() };
    const rows = hosts.map((h) => ({ ...occupancyOf(entry.id, h, slot), livemode: entry.livemode }));
    // Someone may have booked the time since it was freed: then there is nothing to offer.
    if (!(await repo.tryOccupy(trx, rows, 'hold'))) return [];
    const expiresAt = new Date(now.getTime() + this.deps.config.waitlistHoldMinutes * MINUTE);
    const token = newClaimToken();
    await repo.updateEntry(trx, entry.id, {
      status: 'offered',
      offer_start: start,
      offer_end: end,
      offer_host_ids: hosts.map((h) => h.id),
      offer_principal_id: freed.principal_id,
      offer_expires_at: expiresAt,
      claim_token_hash: tokenHash(token),
      updated_at: now,
    });
    await this.deps.mail.enqueue(trx, [
      {
        ...offerMail({
          entryId: entry.id,
          to: entry.customer_email,
          name: entry.customer_name,
          title: link.title,
          start,
          end,
          expiresAt,
          claimUrl: `${this.deps.config.baseUrl}/w/${token}`,
          // The entry keeps no zone of its own: the time as the host it is attributed to reads it.
          timezone: (profiles.get(freed.principal_id) ?? hosts[0]!).schedule.timezone,
        }),
        livemode: entry.livemode,
      },
    ]);
    return hosts.map((h) => h.id);
  }

  /** The caller's link: another account's or another mode's is 404 (and so are its entries). */
  private async ownedLink(
    actor: Pick<Actor, 'accountId' | 'livemode'>,
    linkId: string,
  ): Promise<BookingLink> {
    const link = isPrefixedId(linkId) ? await this.deps.links.get(actor.accountId, linkId) : null;
    if (!link || link.livemode !== actor.livemode) throw new NotFound('No booking link with this id');
    return link;
  }
}
