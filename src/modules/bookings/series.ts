/**
 * Recurring series (docs/api.md#recurring-series; docs/design.md#series-and-seats): a series made
 * all or nothing, its occurrences cancelled one, from one on, or all, and what an occurrence's change
 * tells the series' invite. Every occurrence is a booking with its own occupancy, so the exclusion
 * constraint checks each one; the cheap checks run first and name every failing occurrence.
 */
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import { rowsInsert } from '../../db/parts.js';
import { WriteBatch } from '../../jobs/runner.js';
import type { Interval } from '../../lib/intervals.js';
import { occurrences, type RecurrenceRule } from '../../lib/recurrence.js';
import { iso } from '../../lib/time.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict, ValidationFailed } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import type { BookingLimits, SlotRefusal } from '../availability/api.js';
import type { PrincipalContact, PrincipalProfile } from '../principals/api.js';
import type { BookingsNeeds } from './api.js';
import type { BookingBusySource } from './busy.js';
import {
  type BookingsPlatform,
  contactOf,
  limitsOf,
  meetingOf,
  type Mode,
  occupancyOf,
  slotUnavailable,
} from './helpers.js';
import type { BookingNotices } from './notices.js';
import { meetingWith, presentBooking } from './present.js';
import * as repo from './repo.js';
import * as seriesRepo from './series-repo.js';
import { seriesMail } from './series-mails.js';
import { manageToken, newManageNonce, tokenHash } from './tokens.js';
import type { Plan, Written } from './write.js';
import type { BookingWrites } from './write.js';

export type CancelScope = 'single' | 'following' | 'series';

/** A series to write: a booking's plan (its slot is the first occurrence) and the rule. */
export interface SeriesPlan
  extends Omit<Plan, 'paid' | 'before' | 'alsoIn' | 'skipChecks' | 'waitlistEntryId'> {
  rule: RecurrenceRule;
}

export interface SeriesWritten {
  /** The first occurrence, with its self-service link. */
  first: Written;
  series: seriesRepo.SeriesRow;
  occurrences: repo.BookingRow[];
}

/** One occurrence that cannot be booked, and why. */
export interface SeriesConflict {
  start_time: string;
  end_time: string;
  reason: SlotRefusal | 'taken' | 'no_host';
}

/** A scope other than `single` names a booking outside any series: 400. */
export function notInSeries(scope: CancelScope | undefined): void {
  if (scope !== undefined && scope !== 'single') {
    throw new ValidationFailed({
      scope: 'this booking is not an occurrence of a series: only `single` applies',
    });
  }
}

/** 409 `slot_unavailable` naming every failing occurrence (docs/api.md#recurring-series). */
export function seriesUnavailable(conflicts: readonly SeriesConflict[]): Conflict {
  const n = conflicts.length;
  return new Conflict(
    n === 0
      ? 'The series’ time was taken while it was being booked; nothing was booked, try again'
      : `${n} of the series’ occurrences ${n === 1 ? 'is' : 'are'} not available; nothing was booked`,
    { code: 'slot_unavailable', reason: conflicts[0]?.reason ?? 'taken', conflicts },
  );
}

export class SeriesWrites {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly linkKey: Buffer;

  constructor(
    platform: Pick<BookingsPlatform, 'db' | 'clock' | 'keys'>,
    private readonly needs: Omit<BookingsNeeds, 'mail' | 'payments'>,
    private readonly busy: Pick<BookingBusySource, 'changed'>,
    private readonly writes: BookingWrites,
    private readonly notices: BookingNotices,
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.linkKey = platform.keys.linkKey;
  }

  // ---- making a series ---------------------------------------------------------------------------

  /**
   * Checks every occurrence for every host it would occupy, then writes the series, its bookings,
   * their occupancy, events and calendar meetings and one confirmation in one transaction: all or
   * nothing. A round-robin link gives the whole series to the first host (in its order) free for all.
   */
  async create(plan: SeriesPlan): Promise<SeriesWritten> {
    const { link } = plan;
    const mode: Mode = plan.mode ?? { livemode: true, clock: this.clock };
    const slots = occurrences(plan.slot, plan.rule);
    const limits = limitsOf(link);
    if (plan.hosts.length === 0) throw slotUnavailable('no_host');
    let choices: PrincipalProfile[][];
    if (plan.assignment === 'collective') choices = [plan.hosts];
    else if (plan.assignment === 'round_robin' && link && plan.hosts.length > 1) {
      choices = (await this.writes.roundRobinOrder(link, plan.hosts, plan.slot)).map((h) => [h]);
    } else choices = [[plan.hosts[0]!]];
    let hosts: PrincipalProfile[] | null = null;
    let refused: SeriesConflict[] | null = null;
    for (const candidate of choices) {
      const conflicts = await this.conflicts(this.db, candidate, slots, limits, mode);
      if (conflicts.length === 0) {
        hosts = candidate;
        break;
      }
      refused ??= conflicts;
    }
    if (!hosts) throw seriesUnavailable(refused ?? []);

    const { livemode, clock } = mode;
    const now = clock.now();
    const seriesId = prefixedId('ser', this.clock.nowMs());
    const ids = slots.map(() => prefixedId('booking', this.clock.nowMs()));
    const nonces = slots.map(() => newManageNonce());
    const firstToken = manageToken(this.linkKey, ids[0]!, nonces[0]!);
    const hostIds = hosts.map((h) => h.id);
    let contacts = new Map<string, PrincipalContact>();
    let occupancy: repo.OccupancyRow[] = [];
    try {
      const written = await withTransaction(this.db, async (trx) => {
        // The schedules as stored now, locked until commit (as a single booking does, write.ts).
        const locked = await this.needs.principals.lockedProfiles(trx, hostIds);
        contacts = locked.contacts;
        const fresh = hostIds.map((id) => locked.profiles.get(id));
        const late: SeriesConflict[] = [];
        for (const s of slots) {
          const why = fresh
            .map((h) => (h ? this.needs.availability.scheduleRefusal(h, s, limits, clock) : 'no_host'))
            .find((r) => r !== null);
          if (why) late.push(conflictOf(s, why));
        }
        if (late.length > 0) throw seriesUnavailable(late);
        const profiles = fresh as PrincipalProfile[];
        occupancy = slots.flatMap((s, i) => profiles.map((h) => occupancyOf(ids[i]!, h, s, livemode)));
        // Test mode: the constraint is per mode, so live time is checked here (one statement).
        if (!livemode) {
          const taken = takenConflicts(await seriesRepo.overlapping(trx, occupancy), slots, profiles.length);
          if (taken.length > 0) throw seriesUnavailable(taken);
        }
        const title = link?.title ?? meetingWith(hostIds.map((h) => contacts.get(h)?.name ?? ''));
        const news: repo.NewBooking[] = slots.map((s, i) => ({
          row: {
            id: ids[i]!,
            account_id: plan.accountId,
            principal_id: hostIds[0]!,
            host_ids: hostIds,
            booking_link_id: link?.id ?? null,
            livemode,
            title,
            status: 'confirmed',
            start_time: new Date(s.start),
            end_time: new Date(s.end),
            customer_email: plan.customer.email,
            customer_name: plan.customer.name,
            customer_timezone: plan.customer.timezone,
            guests: [...(plan.guests ?? [])],
            notes: plan.notes,
            answers: JSON.stringify(plan.answers),
            metadata: JSON.stringify(plan.metadata),
            manage_token_hash: tokenHash(manageToken(this.linkKey, ids[i]!, nonces[i]!)),
            manage_nonce: nonces[i]!,
            sequence: 0,
            waitlist_entry_id: null,
            series_id: seriesId,
            occurrence_start: new Date(s.start),
            created_at: now,
            updated_at: now,
          },
          answers: plan.answers,
          metadata: plan.metadata,
        }));
        const series: seriesRepo.SeriesRow = {
          id: seriesId,
          account_id: plan.accountId,
          livemode,
          principal_id: hostIds[0]!,
          booking_link_id: link?.id ?? null,
          frequency: plan.rule.frequency,
          interval: plan.rule.interval,
          count: plan.rule.count,
          timezone: plan.rule.timezone,
          sequence: 0,
          created_at: now,
          updated_at: now,
        };
        // The series, every occurrence and its time, their events, meetings and the one mail: one
        // statement (a taken time fails all of it with 23P01).
        const batch = new WriteBatch();
        batch.add(rowsInsert('booking_series', [series]));
        batch.add(repo.occupancyInsert(occupancy));
        batch.add(
          rowsInsert(
            'bookings',
            news.map((n) => n.row),
          ),
        );
        const rows = news.map((n) => repo.newBookingRow(n));
        let calendarWritten = new Set<string>();
        for (const b of rows) {
          await this.needs.webhooks.emit(
            trx,
            {
              accountId: plan.accountId,
              type: 'booking.created',
              data: { booking: presentBooking(b) },
              livemode,
            },
            batch,
          );
          const w = await this.needs.calendars.writeMeeting(trx, meetingOf(b, link), batch);
          if (b === rows[0]) calendarWritten = w;
        }
        await this.notices.mailAbout(
          trx,
          'confirmation',
          rows[0]!,
          link,
          hostIds.map((h) => contactOf(contacts, h, calendarWritten)),
          firstToken,
          batch,
          seriesMail(series, rows, { cancelled: [], whole: false }),
        );
        await batch.run(trx);
        return { series, rows };
      });
      return {
        first: { row: written.rows[0]!, manageUrl: this.notices.manageUrl(firstToken), contacts },
        series: written.series,
        occurrences: written.rows,
      };
    } catch (err) {
      if (!repo.isExclusionViolation(err)) throw err;
      // Another writer took time first: name every occurrence it now holds (read after the rollback).
      const taken = takenConflicts(await seriesRepo.overlapping(this.db, occupancy), slots, hostIds.length);
      throw seriesUnavailable(taken);
    } finally {
      this.busy.changed(hostIds);
    }
  }

  /**
   * Every occurrence that fails a single booking's checks for one of `hosts`, with the first reason:
   * hours, notice, horizon and calendar busy time (availability), then occupancy, including the
   * series' own occurrences overlapping each other, in one statement.
   */
  private async conflicts(
    db: Db | Tx,
    hosts: readonly PrincipalProfile[],
    slots: readonly Interval[],
    limits: BookingLimits,
    mode: Mode,
  ): Promise<SeriesConflict[]> {
    const refusals = await Promise.all(
      slots.flatMap((s) =>
        hosts.map((h) => this.needs.availability.refusal(h, s, limits, mode.clock, mode.livemode)),
      ),
    );
    const rows = slots.flatMap((s, i) => hosts.map((h) => occupancyOf(`${i}`, h, s, mode.livemode)));
    const taken = await seriesRepo.overlapping(db, rows);
    // Occurrences overlapping the next one of the same host (a long daily booking, with buffers).
    for (let k = 0; k + hosts.length < rows.length; k++) {
      if (rows[k]!.end > rows[k + hosts.length]!.start) taken.add(k + hosts.length);
    }
    const out: SeriesConflict[] = [];
    slots.forEach((s, i) => {
      let why: SeriesConflict['reason'] | null = null;
      for (let j = 0; j < hosts.length && why === null; j++) {
        const k = i * hosts.length + j;
        why = refusals[k] ?? (taken.has(k) ? 'taken' : null);
      }
      if (why !== null) out.push(conflictOf(s, why));
    });
    return out;
  }

  // ---- cancelling --------------------------------------------------------------------------------

  /**
   * Cancels occurrences of `b`'s series: `single` (b alone), `following` (b and the later live ones),
   * `series` (every live one starting after now). One transaction: their time, `booking.cancelled`
   * each, `booking_series.cancelled` for the wider scopes, their meetings, and one mail about the
   * series. Answers `b` as it is after.
   */
  async cancel(b: repo.BookingRow, scope: CancelScope, reason: string | undefined, clock: Clock) {
    const seriesId = b.series_id as string;
    const why = reason?.trim() || null;
    const link = b.booking_link_id
      ? await this.needs.bookingLinks.get(b.account_id, b.booking_link_id)
      : null;
    const contacts = await this.needs.principals.contacts(b.host_ids);
    try {
      return await withTransaction(this.db, async (trx) => {
        const series = await seriesRepo.lockSeries(trx, seriesId);
        const now = clock.now();
        const targets = series
          ? await seriesRepo.lockOccurrencesToCancel(
              trx,
              seriesId,
              scope === 'single' ? { one: b.id } : { from: scope === 'following' ? b.start_time : now },
            )
          : [];
        if (!series || targets.length === 0) return (await repo.lockBooking(trx, b.id)) ?? b;
        const ids = targets.map((t) => t.id);
        await repo.releaseOccupancyOf(trx, ids);
        const cancelled = await repo.cancelBookings(trx, ids, why, now);
        const bumped = await seriesRepo.bumpSeries(trx, seriesId, now);
        let written = new Set<string>();
        // The events in one statement at the end (a series may cancel 52 occurrences at once).
        const batch = new WriteBatch();
        for (const c of cancelled) {
          await this.needs.webhooks.emit(
            trx,
            {
              accountId: c.account_id,
              type: 'booking.cancelled',
              data: { booking: presentBooking(c) },
              livemode: c.livemode,
            },
            batch,
          );
          written = new Set([...written, ...(await this.needs.calendars.removeMeeting(trx, c.id))]);
          await this.notices.offerFreedTime(trx, c, clock);
        }
        if (scope !== 'single') {
          await this.needs.webhooks.emit(
            trx,
            {
              accountId: series.account_id,
              type: 'booking_series.cancelled',
              data: { series_id: seriesId, cancelled_booking_ids: ids },
              livemode: series.livemode,
            },
            batch,
          );
        }
        const all = await seriesRepo.occurrencesOf(trx, seriesId);
        const left = all.filter((o) => repo.LIVE_STATUSES.includes(o.status) && o.start_time > now);
        const mine = cancelled.find((c) => c.id === b.id) ?? all.find((o) => o.id === b.id) ?? b;
        await this.notices.mailAbout(
          trx,
          'cancellation',
          mine.status === 'cancelled' ? mine : cancelled[0]!,
          link,
          b.host_ids.map((h) => contactOf(contacts, h, written)),
          undefined,
          batch,
          seriesMail(bumped, all, { cancelled, whole: left.length === 0 }),
        );
        await batch.run(trx);
        return mine;
      });
    } finally {
      this.busy.changed(b.host_ids);
    }
  }

  // ---- reading -----------------------------------------------------------------------------------

  /** The series and its occurrences, for an actor of its account and mode (else undefined). */
  async find(accountId: string, id: string, livemode: boolean) {
    const series = await seriesRepo.findSeries(this.db, accountId, id, livemode);
    if (!series) return undefined;
    return { series, occurrences: await seriesRepo.occurrencesOf(this.db, id) };
  }
}

function conflictOf(s: Interval, reason: SeriesConflict['reason']): SeriesConflict {
  return { start_time: iso(s.start), end_time: iso(s.end), reason };
}

/** The occurrences among `slots` with a row (of `perSlot` per occurrence) in `taken`. */
function takenConflicts(
  taken: ReadonlySet<number>,
  slots: readonly Interval[],
  perSlot: number,
): SeriesConflict[] {
  return slots.flatMap((s, i) => {
    for (let j = 0; j < perSlot; j++) if (taken.has(i * perSlot + j)) return [conflictOf(s, 'taken')];
    return [];
  });
}
