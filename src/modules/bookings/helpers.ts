/**
 * The pure helpers of the bookings' use cases (write.ts, public.ts, service.ts, notices.ts): refusals,
 * titles, the calendar meeting of a booking, occupancy padded with buffers, live hosts, return-URL
 * checks; and what the use cases take from the platform. No I/O.
 */
import type { Static } from '@sinclair/typebox';
import type { Interval } from '../../lib/intervals.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict } from '../../platform/errors.js';
import type { Problems } from '../../platform/validation.js';
import type { BookingLimits, SlotRefusal } from '../availability/api.js';
import type { BookingLink } from '../booking-links/api.js';
import type { MeetingSpec } from '../calendars/api.js';
import type { PrincipalContact, PrincipalProfile } from '../principals/api.js';
import type { Config } from '../../config.js';
import type { Platform } from '../module.js';
import type { Contact } from './mails.js';
import type * as repo from './repo.js';
import type { PublicCreateBody } from './schemas.js';
import { MINUTE } from '../../lib/time.js';

/** What the bookings' use cases take from the platform. */
export type BookingsPlatform = Pick<Platform, 'db' | 'clock' | 'keys' | 'log' | 'testClocks'> & {
  config: Pick<Config, 'baseUrl' | 'mailFrom' | 'stripe'>;
};

/** Where Stripe sends the customer back (default: the link's page). */
export type ReturnUrls = Pick<Static<typeof PublicCreateBody>, 'success_url' | 'cancel_url'>;

const REFUSALS: Record<SlotRefusal | 'taken' | 'no_host', string> = {
  minimum_notice: 'The start is inside the minimum notice',
  max_days_ahead: 'The start is further ahead than bookings are taken',
  outside_working_hours: 'The time is outside working hours',
  calendar_busy: 'The time is busy in a connected calendar',
  out_of_office: 'The time is inside an out-of-office range',
  taken: 'The time overlaps another booking',
  no_host: 'No host of this booking link is available',
};

export function slotUnavailable(reason: SlotRefusal | 'taken' | 'no_host', who?: string): Conflict {
  return new Conflict(`${REFUSALS[reason]}${who ? ` (${who})` : ''}; the requested time is not available`, {
    code: 'slot_unavailable',
    reason,
  });
}

/** What a booking is called: as stored when it was made, else (made before titles were stored) its link's. */
export function titleOf(b: Pick<repo.BookingRow, 'title'>, link: BookingLink | null): string {
  return b.title ?? link?.title ?? 'Booking';
}

/**
 * The booking as its hosts' calendars show it (calendar write-through): the link's title with the
 * customer's name, the customer and their guests as attendees, and what they wrote. No self-service link: that is the
 * customer's, not the host's.
 */
export function meetingOf(b: repo.BookingRow, link: BookingLink | null): MeetingSpec {
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
    attendees: [
      { name: b.customer_name, email: b.customer_email },
      ...(b.guests ?? []).map((email) => ({ name: null, email })),
    ],
    start: new Date(b.start_time),
    end: new Date(b.end_time),
    livemode: b.livemode,
  };
}

export function limitsOf(link: BookingLink | null): BookingLimits {
  return link ? { minimumNoticeMinutes: link.minimumNoticeMinutes, maxDaysAhead: link.maxDaysAhead } : {};
}

export function contactOf(
  contacts: Map<string, PrincipalContact>,
  id: string,
  calendarWritten: ReadonlySet<string> = new Set(),
): Contact {
  const c = contacts.get(id);
  return {
    id,
    name: c?.name ?? '',
    email: c?.email ?? null,
    timezone: c?.timezone ?? null,
    calendarWritten: calendarWritten.has(id),
  };
}

/**
 * The occupancy of host `h` for a booking at `slot`: the slot padded with the host's buffers, in the
 * mode of its owner (absent: live).
 */
export function occupancyOf(
  ownerId: string,
  h: PrincipalProfile,
  slot: Interval,
  livemode = true,
): repo.OccupancyRow {
  return {
    ownerId,
    principalId: h.id,
    start: new Date(slot.start - h.schedule.buffer_before_minutes * MINUTE),
    end: new Date(slot.end + h.schedule.buffer_after_minutes * MINUTE),
    livemode,
  };
}

/**
 * The mode a use case acts in and its clock (docs/api.md#test-mode): an `Actor`, or for the public
 * surface the link's (or the booking's) mode with `platform.testClocks.clockFor`.
 */
export interface Mode {
  livemode: boolean;
  clock: Clock;
}

/** The live principals among `ids`, in that order (a deleted one is missing from `profiles`). */
export function liveHosts(
  ids: readonly string[],
  profiles: ReadonlyMap<string, PrincipalProfile>,
): PrincipalProfile[] {
  return ids
    .map((id) => profiles.get(id.toLowerCase()))
    .filter((p): p is PrincipalProfile => p !== undefined);
}

/** `success_url` / `cancel_url`: absolute http(s) URLs when given. */
export function returnUrls(body: ReturnUrls, p: Problems): void {
  for (const field of ['success_url', 'cancel_url'] as const) {
    const v = body[field];
    if (v !== undefined && !isHttpUrl(v)) p.add(field, 'must be an absolute http(s) URL');
  }
}

export function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'https:' || u.protocol === 'http:') && v.length <= 2048;
  } catch {
    return false;
  }
}
