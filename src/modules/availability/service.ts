/**
 * Availability use cases (docs/api.md#availability, #availability-access): slots, next slot, mutual slots and normalized
 * availability blocks. Busy time comes only from the `busySources` extension point; schedules and
 * access from the principals module; the arithmetic from `src/lib`. Every instant is UTC; the `timezone` asked for changes only
 * the labels and the grouping by day, never which slots there are. "Now" is the caller's clock (a test
 * key's: its account's test clock) and busy time is asked in the caller's mode (docs/api.md#test-mode).
 */
import type { Static } from '@sinclair/typebox';
import { clip, type Interval, normalize, subtract, union } from '../../lib/intervals.js';
import { workingIntervals } from '../../lib/schedule.js';
import {
  bookableRange,
  computeSlots,
  firstSlot,
  mutualSlots,
  type PrincipalAvailability,
  slotRange,
} from '../../lib/slots.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { Forbidden } from '../../platform/errors.js';
import { isUuid } from '../../platform/ids.js';
import { Problems } from '../../platform/validation.js';
import type { Extensions, Platform } from '../module.js';
import type { AccessBasis, PrincipalProfile } from '../principals/api.js';
import type {
  AvailabilityApi,
  AvailabilityNeeds,
  BookingLimits,
  LinkSlotsInput,
  SlotRefusal,
  TitledInterval,
} from './api.js';
import { type BusyFor, busyFor } from './busy-for.js';
import { AnswerMemo } from './memo.js';
import { linkSeats } from './seats.js';
import { DaySlots } from './days.js';
import { DAY, isoUtc, MINUTE } from '../../lib/time.js';
import {
  linkSeatSlotsJson,
  linkSlotsJson,
  type PresentedSlot,
  presentSlot,
  slotsBytes,
  slotsFrame,
} from './present.js';
import {
  checkCommon,
  constraintsWith,
  parseWindow,
  profileConstraints,
  queryWindow,
  resolveTarget,
  titlesIn,
  withConsent,
  workingFor,
} from './rules.js';
import {
  type BlocksQuery,
  MAX_NEXT_DAYS_AHEAD,
  MAX_WINDOW_DAYS,
  MUTUAL_MAX_PRINCIPALS,
  MUTUAL_MIN_PRINCIPALS,
  type MutualQuery,
  type NextQuery,
  type SlotsQuery,
} from './schemas.js';

/** Growing windows (days) in which `next` looks for the first slot. */
const NEXT_SEARCH_DAYS = [1, 7, MAX_NEXT_DAYS_AHEAD];

export type BlockStatus = 'busy' | 'free' | 'outside_hours';
export type BlockSource = 'calendar' | 'booking' | 'out_of_office' | 'schedule';

/** The answer of GET /v1/availability/next (shared between requests: never mutate it). */
export interface NextAnswer {
  principal_id: string;
  duration_minutes: number;
  timezone: string;
  stale: boolean;
  /** When stale: the instant the oldest busy time used was read from its calendar (ISO); else null. */
  busy_as_of: string | null;
  slot: PresentedSlot | null;
  /** The consent that allowed the read, when one did. */
  consent?: { id: string };
}

/** Byte budgets of remembered answers (memo.ts), per process. */
const SLOT_ANSWERS_BYTES = 32 * 1024 * 1024;
const NEXT_ANSWERS_BYTES = 4 * 1024 * 1024;
const DAY_SLOTS_BYTES = 16 * 1024 * 1024;

export class AvailabilityService implements AvailabilityApi {
  private readonly slotAnswers = new AnswerMemo<Buffer>(SLOT_ANSWERS_BYTES, (b) => b.length);
  private readonly nextAnswers = new AnswerMemo<NextAnswer>(NEXT_ANSWERS_BYTES, () => 256);
  private readonly days = new DaySlots(DAY_SLOTS_BYTES);

  private readonly counted: Record<'slots' | 'next', Record<'remembered' | 'computed', { inc(): void }>>;

  constructor(
    platform: Pick<Platform, 'metrics'>,
    private readonly needs: AvailabilityNeeds,
    private readonly extensions: Pick<Extensions, 'all'>,
  ) {
    const m = platform.metrics;
    const outcomes = (kind: string) => ({
      remembered: m.availabilityAnswers.labels(kind, 'remembered'),
      computed: m.availabilityAnswers.labels(kind, 'computed'),
    });
    this.counted = { slots: outcomes('slots'), next: outcomes('next') };
    m.gauge('kairos_availability_memo_bytes', 'Bytes of remembered availability answers', () => {
      return this.slotAnswers.stats.bytes + this.nextAnswers.stats.bytes + this.days.stats.bytes;
    });
  }

  /** GET /v1/availability/slots: the answer as JSON text (present.ts), remembered (memo.ts). */
  async slots(caller: Caller, params: Static<typeof SlotsQuery>, zoned = false): Promise<Buffer | string> {
    const problems = new Problems();
    const window = parseWindow(params.from, params.to, MAX_WINDOW_DAYS, problems);
    const target = resolveTarget(params, problems);
    checkCommon(params, problems);
    if (params.buffer !== undefined && !(params.buffer >= 0 && params.buffer <= 1440)) {
      problems.add('buffer', 'must be an integer from 0 to 1440 (minutes)');
    }
    problems.throwIfAny();

    const p = (await this.accessible(caller, [target!], params.consent_id))[0]!;
    const durationMs = params.duration_minutes * MINUTE;
    const extra = (params.buffer ?? 0) * MINUTE;
    const intervalMs = params.slot_interval === undefined ? undefined : params.slot_interval * MINUTE;
    const input = profileConstraints(p, extra);
    const nowMs = caller.clock.nowMs();
    const alignTimezone = p.schedule.timezone;
    // Window and clock matter only through this range (lib/slots.ts), which moves in grid steps.
    const range = slotRange(input, { window: window!, nowMs, durationMs, intervalMs, alignTimezone });
    const timezone = params.timezone ?? p.schedule.timezone;
    const groupByDay = params.group_by_day ?? false;
    // Busy time outside the window changes no slot: the sources' whole lists, not cut per question,
    // where the answer can come from remembered days (below).
    const asked = [queryWindow(input, range, window!)];
    const { busy, stale, busyAsOf } = await this.busyFor([p], asked, {
      unclipped: !groupByDay,
      livemode: caller.livemode,
    });
    const { calendar, booking, whole } = busy[0]!;
    const memo = this.slotAnswers;
    // Calendar and booking busy time are kept apart (bookings are padded occupancy, lib/slots.ts), so
    // the answer is remembered by the pair of stable arrays, never by a merge made per request.
    const state =
      `${memo.idOf(calendar)}|${memo.idOf(booking)}|${memo.idOf(p.schedule)}|${p.id}|` +
      `${durationMs}|${intervalMs}|${extra}`;
    const key = `${state}|${range.start}|${range.end}|${timezone}|${groupByDay}|${busyAsOf}|${zoned}`;
    const known = memo.get(key);
    if (known !== undefined) {
      this.counted.slots.remembered.inc();
      return withConsent(known, p.access.consentId);
    }
    this.counted.slots.computed.inc();
    const head = {
      principal_id: p.id,
      duration_minutes: params.duration_minutes,
      timezone,
      stale,
      busy_as_of: busyAsOf === null ? null : isoUtc(busyAsOf),
    };
    // A new question: from the days already computed for this principal state when the lists are
    // whole ones (days.ts, which keeps UTC texts).
    let json: Buffer | null = null;
    const c = whole.calendar;
    const b = whole.booking;
    if (!zoned && !groupByDay && c?.intervals === calendar && b?.intervals === booking) {
      const q = { ...input, schedule: p.schedule, calendar: c, booking: b, durationMs, intervalMs };
      json = this.days.answer({ ...q, key: state, alignTimezone }, range, slotsFrame(head));
    }
    json ??= slotsBytes(
      {
        ...head,
        group_by_day: groupByDay,
        slots: computeSlots({
          ...input,
          working: workingFor(p.schedule, window!),
          busy: calendar,
          occupied: booking,
          window: window!,
          durationMs,
          intervalMs,
          nowMs,
          alignTimezone,
        }),
      },
      zoned ? timezone : undefined,
    );
    if (memo.admit(key)) memo.set(key, json);
    return withConsent(json, p.access.consentId);
  }

  /** GET /v1/availability/next (remembered like slots). */
  async next(caller: Caller, params: Static<typeof NextQuery>): Promise<NextAnswer> {
    const problems = new Problems();
    const nowMs = caller.clock.nowMs();
    let after = nowMs;
    if (params.after !== undefined) {
      const t = Date.parse(params.after);
      if (Number.isNaN(t)) problems.add('after', 'must be an ISO 8601 timestamp with an offset');
      else after = t;
    }
    if (!(params.days_ahead >= 1 && params.days_ahead <= MAX_NEXT_DAYS_AHEAD)) {
      problems.add('days_ahead', `must be an integer from 1 to ${MAX_NEXT_DAYS_AHEAD}`);
    }
    const target = resolveTarget(params, problems);
    checkCommon(params, problems);
    problems.throwIfAny();

    const p = (await this.accessible(caller, [target!], params.consent_id))[0]!;
    const window = { start: after, end: after + params.days_ahead * DAY };
    const durationMs = params.duration_minutes * MINUTE;
    const intervalMs = params.slot_interval === undefined ? undefined : params.slot_interval * MINUTE;
    const input = profileConstraints(p, 0);
    const alignTimezone = p.schedule.timezone;
    const range = slotRange(input, { window, nowMs, durationMs, intervalMs, alignTimezone });
    const { busy, stale, busyAsOf } = await this.busyFor([p], [queryWindow(input, range, window)], {
      livemode: caller.livemode,
    });
    const { calendar, booking } = busy[0]!;
    const timezone = params.timezone ?? p.schedule.timezone;
    const memo = this.nextAnswers;
    const key =
      `${memo.idOf(calendar)}|${memo.idOf(booking)}|${memo.idOf(p.schedule)}|${p.id}|${range.start}|${range.end}|` +
      `${durationMs}|${intervalMs}|${timezone}|${busyAsOf}`;
    const known = memo.get(key);
    if (known !== undefined) {
      this.counted.next.remembered.inc();
      return p.access.consentId ? { ...known, consent: { id: p.access.consentId } } : known;
    }
    this.counted.next.computed.inc();
    const working = workingFor(p.schedule, window);
    // Look at the first day, then the first week, then the whole window: the first slot of a shorter
    // window that starts at the same instant is the first slot of the longer one, and it is usually near.
    let slot: Interval | null = null;
    for (const days of NEXT_SEARCH_DAYS) {
      const end = Math.min(window.end, window.start + days * DAY);
      const near = { start: window.start - input.bufferAfterMs, end: end + input.bufferBeforeMs };
      slot = firstSlot({
        ...input,
        working,
        busy: clip(calendar, near),
        occupied: clip(booking, {
          start: near.start - input.bufferBeforeMs,
          end: near.end + input.bufferAfterMs,
        }),
        window: { start: window.start, end },
        durationMs,
        intervalMs,
        nowMs,
        alignTimezone,
      });
      if (slot !== null || end === window.end) break;
    }
    const answer: NextAnswer = {
      principal_id: p.id,
      duration_minutes: params.duration_minutes,
      timezone,
      stale,
      busy_as_of: busyAsOf === null ? null : isoUtc(busyAsOf),
      slot: slot ? presentSlot(slot) : null,
    };
    if (memo.admit(key)) memo.set(key, answer);
    return p.access.consentId ? { ...answer, consent: { id: p.access.consentId } } : answer;
  }

  /** GET /v1/availability/mutual */
  async mutual(caller: Caller, params: Static<typeof MutualQuery>) {
    const problems = new Problems();
    const window = parseWindow(params.from, params.to, MAX_WINDOW_DAYS, problems);
    const ids = params.principal_ids.split(',').map((s) => s.trim());
    if (ids.length < MUTUAL_MIN_PRINCIPALS || ids.length > MUTUAL_MAX_PRINCIPALS) {
      problems.add(
        'principal_ids',
        `must list ${MUTUAL_MIN_PRINCIPALS} to ${MUTUAL_MAX_PRINCIPALS} principal ids, comma-separated`,
      );
    } else if (ids.some((id) => !isUuid(id))) {
      problems.add('principal_ids', 'must be UUIDs separated by commas');
    } else if (new Set(ids.map((id) => id.toLowerCase())).size !== ids.length) {
      problems.add('principal_ids', 'must not repeat a principal');
    }
    checkCommon(params, problems);
    problems.throwIfAny();

    const ps = await this.accessible(caller, ids, undefined);
    const durationMs = params.duration_minutes * MINUTE;
    const nowMs = caller.clock.nowMs();
    const inputs = ps.map((p) => profileConstraints(p, 0));
    const windows = inputs.map((input) =>
      queryWindow(input, bookableRange(input, window!, nowMs, durationMs), window!),
    );
    const { busy, stale, busyAsOf } = await this.busyFor(ps, windows, { livemode: caller.livemode });
    const principals: PrincipalAvailability[] = ps.map((p, i) => ({
      ...inputs[i]!,
      working: workingFor(p.schedule, window!),
      busy: busy[i]!.calendar,
      occupied: busy[i]!.booking,
    }));
    const first = ps[0]!;
    const slots = mutualSlots(principals, {
      window: window!,
      durationMs,
      intervalMs: params.slot_interval === undefined ? undefined : params.slot_interval * MINUTE,
      nowMs,
      alignTimezone: first.schedule.timezone,
      limit: params.limit,
    });
    return {
      principal_ids: ps.map((p) => p.id),
      duration_minutes: params.duration_minutes,
      timezone: params.timezone ?? first.schedule.timezone,
      stale,
      busy_as_of: busyAsOf === null ? null : isoUtc(busyAsOf),
      slots: slots.map(presentSlot),
      consents: ps.map((p) => ({
        principal_id: p.id,
        consent_id: p.access.consentId,
        basis: p.access.basis,
      })),
    };
  }

  /** GET /v1/principals/{id}/availability: normalized busy / free / outside_hours blocks. */
  async blocks(caller: Caller, principalId: string, params: Static<typeof BlocksQuery>) {
    const problems = new Problems();
    const window = parseWindow(params.from, params.to, MAX_WINDOW_DAYS, problems);
    problems.throwIfAny();

    const p = (await this.accessible(caller, [principalId], undefined))[0]!;
    const { busy, stale, busyAsOf } = await this.busyFor([p], [window!], { livemode: caller.livemode });
    const booking = clip(normalize(busy[0]!.booking), window!);
    // Out of office wins over the calendar time inside it; a booking over both.
    const away = subtract(clip(normalize(busy[0]!.outOfOffice), window!), booking);
    const calendar = subtract(subtract(clip(normalize(busy[0]!.calendar), window!), booking), away);
    const busyAll = union(union(booking, away), calendar);
    const working = workingFor(p.schedule, window!);
    const free = subtract(working, busyAll);
    const outside = subtract(subtract([window!], working), busyAll);
    // Titles on request, for readers allowed to see details (itself, its account, a details consent),
    // read from the sources now (never remembered): a provider call per request, so never by default.
    if (params.details === true && !p.access.details) {
      throw new Forbidden('Event details of this principal need a consent with availability:read:details', {
        code: 'details_not_granted',
      });
    }
    const titled = params.details === true ? await this.titlesOf(p.id, window!) : null;
    const blocks: { start: number; end: number; status: BlockStatus; source: BlockSource }[] = [
      ...booking.map((x) => ({ ...x, status: 'busy' as const, source: 'booking' as const })),
      ...away.map((x) => ({ ...x, status: 'busy' as const, source: 'out_of_office' as const })),
      ...calendar.map((x) => ({ ...x, status: 'busy' as const, source: 'calendar' as const })),
      ...free.map((x) => ({ ...x, status: 'free' as const, source: 'schedule' as const })),
      ...outside.map((x) => ({ ...x, status: 'outside_hours' as const, source: 'schedule' as const })),
    ].sort((a, b) => a.start - b.start);
    return {
      principal_id: p.id,
      from: isoUtc(window!.start),
      to: isoUtc(window!.end),
      timezone: p.schedule.timezone,
      stale,
      busy_as_of: busyAsOf === null ? null : isoUtc(busyAsOf),
      blocks: blocks.map((b) => ({
        start: isoUtc(b.start),
        end: isoUtc(b.end),
        status: b.status,
        source: b.source,
        ...(titled && b.source === 'calendar' ? { titles: titlesIn(titled, b) } : {}),
      })),
    };
  }

  // ---- for the bookings module (docs/api.md#bookings, #public-booking-surface) ---------------------

  /**
   * Why `slot` cannot be booked for host `p`: outside its working hours, inside its minimum notice,
   * beyond its horizon, inside an out-of-office range of `livemode` (test mode: live and test ranges)
   * or against calendar busy time (both with its buffers); null when none applies.
   * Other bookings are not looked at: the exclusion constraint decides those when the booking is
   * written. `limits` are a booking link's overrides (null: the host's schedule decides). A host
   * without a connected calendar has no calendar busy time. Notice and horizon count from `clock`'s
   * now: the booking's mode's (an account's test clock in test mode).
   */
  async refusal(
    p: PrincipalProfile,
    slot: Interval,
    limits: BookingLimits,
    clock: Clock,
    livemode = true,
  ): Promise<SlotRefusal | null> {
    const rule = this.scheduleRefusal(p, slot, limits, clock);
    if (rule !== null) return rule;
    const c = constraintsWith(p, limits);
    // A slot keeps [start - after, end + before) clear of calendar busy time and out-of-office ranges
    // (lib/slots.ts). Calendars have no mode; out-of-office ranges do (test mode: live and test).
    const near = { start: slot.start - c.bufferAfterMs, end: slot.end + c.bufferBeforeMs };
    const { busy } = await this.busyFor([p], [near], {
      requireCalendar: false,
      only: ['calendar', 'out_of_office'],
      livemode,
    });
    const overlaps = (b: Interval) => b.start < near.end && b.end > near.start;
    if (busy[0]!.outOfOffice.some(overlaps)) return 'out_of_office';
    if (busy[0]!.calendar.some(overlaps)) return 'calendar_busy';
    return null;
  }

  /**
   * The part of `refusal` that depends on the schedule alone (notice, horizon, working hours): no I/O,
   * so a booking repeats it inside its transaction against the schedule it has locked.
   */
  scheduleRefusal(
    p: PrincipalProfile,
    slot: Interval,
    limits: BookingLimits,
    clock: Clock,
  ): SlotRefusal | null {
    const c = constraintsWith(p, limits);
    const nowMs = clock.nowMs();
    if (slot.start < nowMs + c.minimumNoticeMs) return 'minimum_notice';
    if (slot.start > nowMs + c.maxDaysAhead * DAY) return 'max_days_ahead';
    const working = workingIntervals(p.schedule, slot);
    if (!(working.length === 1 && working[0]!.start <= slot.start && working[0]!.end >= slot.end)) {
      return 'outside_working_hours';
    }
    return null;
  }

  /**
   * The bookable slots of a booking link (GET /v1/public/links/{slug}/availability): `any` host free
   * (single, round robin) or `all` free (collective), under the link's limits. Hosts need no connected
   * calendar here. The answer names no principal. Remembered like slots, by every host's busy arrays.
   * A seated link's sessions (`input.seats`, seats.ts) are its own slots with the seats left, not busy
   * time; a full one is not offered, nor any slot that would meet one.
   */
  async linkSlots(input: LinkSlotsInput): Promise<Buffer | string> {
    const { hosts, window, limits } = input;
    const durationMs = input.durationMinutes * MINUTE;
    const nowMs = input.clock.nowMs();
    const constraints = hosts.map((p) => constraintsWith(p, limits));
    const alignTimezone = hosts[0]!.schedule.timezone;
    const ranges = constraints.map((c, i) =>
      slotRange(c, { window, nowMs, durationMs, alignTimezone: hosts[i]!.schedule.timezone }),
    );
    const { busy, stale, busyAsOf } = await this.busyFor(
      hosts,
      constraints.map((c, i) => queryWindow(c, ranges[i]!, window)),
      { requireCalendar: false, livemode: input.livemode },
    );
    const seats =
      input.seats === undefined
        ? null
        : linkSeats(
            input.seats,
            hosts.map((p, i) => ({ ...constraints[i]!, id: p.id })),
          );
    const memo = this.slotAnswers;
    const key =
      `link|${input.mode}|${input.durationMinutes}|${input.timezone}|${busyAsOf}|` +
      hosts
        .map(
          (p, i) =>
            `${p.id}|${memo.idOf(busy[i]!.calendar)}|${memo.idOf(busy[i]!.booking)}|${memo.idOf(p.schedule)}|` +
            `${ranges[i]!.start}|${ranges[i]!.end}|${constraints[i]!.minimumNoticeMs}|${constraints[i]!.maxDaysAhead}`,
        )
        .join('|') +
      (seats === null ? '' : `|${seats.key}`);
    const known = memo.get(key);
    if (known !== undefined) {
      this.counted.slots.remembered.inc();
      return known;
    }
    this.counted.slots.computed.inc();
    const principals: PrincipalAvailability[] = hosts.map((p, i) => ({
      ...constraints[i]!,
      working: workingFor(p.schedule, window),
      busy: busy[i]!.calendar,
      occupied: seats === null ? busy[i]!.booking : seats.occupied(i, busy[i]!.booking),
    }));
    let slots: Interval[];
    if (input.mode === 'all' && hosts.length > 1) {
      slots = mutualSlots(principals, { window, durationMs, nowMs, alignTimezone });
    } else {
      const seen = new Map<number, Interval>();
      principals.forEach((pa, i) => {
        const own = computeSlots({
          ...pa,
          window,
          durationMs,
          nowMs,
          alignTimezone: hosts[i]!.schedule.timezone,
        });
        for (const x of own) if (!seen.has(x.start)) seen.set(x.start, x);
      });
      slots = [...seen.values()].sort((a, b) => a.start - b.start);
    }
    const head = {
      duration_minutes: input.durationMinutes,
      timezone: input.timezone,
      stale,
      busy_as_of: busyAsOf === null ? null : isoUtc(busyAsOf),
    };
    const json =
      seats === null
        ? linkSlotsJson({ ...head, slots })
        : linkSeatSlotsJson({ ...head, slots: seats.offered(slots) }, seats.showRemaining);
    if (memo.admit(key)) memo.set(key, json);
    return json;
  }

  /**
   * The live principals behind `ids`, in order, if the caller may read all of them; 403 otherwise
   * (also for ids that do not exist). One query for the principals and their schedules.
   */
  private async accessible(
    caller: Caller,
    asked: readonly string[],
    consentId: string | undefined,
  ): Promise<
    (PrincipalProfile & { access: { basis: AccessBasis; consentId: string | null; details: boolean } })[]
  > {
    const ids = asked.map((id) => id.toLowerCase());
    const profiles = await this.needs.principals.profiles(ids);
    const decisions = await this.needs.principals.access.canReadMany(caller, ids, {
      consentId: consentId ?? null,
      known: profiles,
    });
    return ids.map((id) => {
      const d = decisions.get(id);
      const p = profiles.get(id);
      if (!p || !d?.allowed || d.basis === null) {
        throw new Forbidden(
          ids.length > 1
            ? `The principal ${id} does not exist or its availability is not accessible to this caller`
            : 'The principal does not exist or its availability is not accessible to this caller',
        );
      }
      return { ...p, access: { basis: d.basis, consentId: d.consentId, details: d.details } };
    });
  }

  /** The titled busy occurrences of every source that has titles (the calendar source). */
  private async titlesOf(principalId: string, window: Interval): Promise<TitledInterval[]> {
    const sources = this.extensions.all('busySources').filter((s) => s.titles !== undefined);
    const found = await Promise.all(sources.map((s) => s.titles!(principalId, window)));
    return found.flat();
  }

  /** Busy time of each principal from every registered source (busy-for.ts). */
  private busyFor(ps: readonly PrincipalProfile[], windows: readonly Interval[], opts: BusyFor) {
    return busyFor(this.extensions.all('busySources'), ps, windows, opts);
  }
}
