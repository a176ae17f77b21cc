/**
 * The proposals module's input rules (docs/api.md#proposals-and-polls): what a new proposal and an
 * answer may carry, checked before any transaction; each problem is named by its field.
 */
import type { Interval } from '../../lib/intervals.js';
import { AppError, Conflict, ValidationFailed } from '../../platform/errors.js';
import { isUuid } from '../../platform/ids.js';
import { isEmailAddress, isIsoInstant } from '../../platform/validation.js';
import { HOUR, iso } from '../../lib/time.js';
import type { Loaded } from './present.js';
import { type CreateProposalBody, MAX_EXPIRES_HOURS, type RespondBody, type SlotIn } from './schemas.js';

/** Poll slots start at least this far ahead (code `earliest_slot_too_soon`). */
export const POLL_EARLIEST_MS = 25 * HOUR;
/** How long a proposal stays open when the request does not say, by mode (hours). */
export const DEFAULT_HOURS = { standard: 72, poll: 168 } as const;
const MAX_SLOT_MS = 24 * HOUR;

type Errors = Record<string, string>;

/** The offered slots, valid ones only; each invalid one is reported under `field[i]`. */
export function slotsOf(input: SlotIn[], field: string, nowMs: number, errors: Errors): Interval[] {
  const out: Interval[] = [];
  const seen = new Set<string>();
  input.forEach((s, i) => {
    const start = isIsoInstant(s.start) ? Date.parse(s.start) : Number.NaN;
    const end = isIsoInstant(s.end) ? Date.parse(s.end) : Number.NaN;
    if (!Number.isFinite(start) || !Number.isFinite(end)) {
      errors[`${field}[${i}]`] = 'start and end must be ISO 8601 instants with an offset';
    } else if (end <= start) errors[`${field}[${i}]`] = 'end must be after start';
    else if (end - start > MAX_SLOT_MS) errors[`${field}[${i}]`] = 'must last at most 24 hours';
    else if (start <= nowMs) errors[`${field}[${i}]`] = 'must start in the future';
    else if (seen.has(`${start}/${end}`)) errors[`${field}[${i}]`] = 'is offered twice';
    else {
      seen.add(`${start}/${end}`);
      out.push({ start, end });
    }
  });
  return out;
}

/** A new proposal's checked input: its slots, whom it asks (principals or e-mails) and when it expires. */
export interface CreateInput {
  slots: Interval[];
  participantIds: string[];
  emails: string[];
  expiresAt: Date;
}

/** Checks POST /v1/proposals against the rules that need no read; throws the problems found. */
export function createInput(body: CreateProposalBody, requesterId: string, nowMs: number): CreateInput {
  const errors: Errors = {};
  const slots = slotsOf(body.slots, 'slots', nowMs, errors);
  let participantIds: string[] = [];
  const emails: string[] = [];
  if (body.mode === 'standard') {
    if (body.participant_emails !== undefined) errors.participant_emails = 'is for polls (mode poll)';
    if (!body.participant_ids || body.participant_ids.length === 0) {
      errors.participant_ids = 'must name 1 to 10 principals for a standard proposal';
    } else {
      participantIds = [...new Set(body.participant_ids.map((x) => x.toLowerCase()))];
      if (participantIds.some((x) => !isUuid(x))) errors.participant_ids = 'must be principal ids (UUIDs)';
      else if (participantIds.includes(requesterId)) errors.participant_ids = 'cannot include the requester';
    }
  } else {
    if (body.participant_ids !== undefined) errors.participant_ids = 'is for standard proposals';
    const seen = new Set<string>();
    for (const e of body.participant_emails ?? []) {
      const v = e.trim();
      if (!isEmailAddress(v) || v.length > 320) errors.participant_emails = `${e} is not an e-mail address`;
      else if (seen.has(v.toLowerCase())) errors.participant_emails = `${v} appears twice`;
      else {
        seen.add(v.toLowerCase());
        emails.push(v);
      }
    }
  }
  const hours = body.expires_in_hours ?? DEFAULT_HOURS[body.mode];
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_EXPIRES_HOURS) {
    errors.expires_in_hours = `must be a whole number of hours from 1 to ${MAX_EXPIRES_HOURS}`;
  }
  if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
  if (body.mode === 'poll') {
    const early = slots.find((s) => s.start < nowMs + POLL_EARLIEST_MS);
    if (early) {
      throw new AppError(
        400,
        'validation-error',
        `Poll slots must start at least 25 hours ahead; ${iso(new Date(early.start))} is too soon`,
        { code: 'earliest_slot_too_soon', errors: { slots: 'must start at least 25 hours ahead' } },
      );
    }
  }
  // A poll resolves at the latest when it expires, before its first slot starts: the default closes
  // it an hour before that (at most a week); an explicit `expires_in_hours` must fit.
  const firstStart = Math.min(...slots.map((s) => s.start));
  let expiresMs = nowMs + hours * HOUR;
  if (body.mode === 'poll' && expiresMs > firstStart - HOUR) {
    if (body.expires_in_hours !== undefined) {
      throw new ValidationFailed({
        expires_in_hours: 'must end at least an hour before the first slot starts (the poll resolves then)',
      });
    }
    expiresMs = firstStart - HOUR;
  }
  return { slots, participantIds, emails, expiresAt: new Date(expiresMs) };
}

/** An answer's checked input: a counter's slots and an open poll's voter. */
export interface RespondInput {
  counterSlots: Interval[];
  openVoter: { name: string; email: string } | null;
}

/** Checks POST /v1/proposals/{id}/response against the rules that need no read; throws the problems found. */
export function respondInput(
  body: RespondBody,
  mode: 'standard' | 'poll',
  openVote: boolean,
  nowMs: number,
): RespondInput {
  const errors: Errors = {};
  let counterSlots: Interval[] = [];
  if (body.action === 'counter') {
    if (!body.counter_slots || body.counter_slots.length === 0)
      errors.counter_slots = 'must offer 1 to 10 slots';
    else counterSlots = slotsOf(body.counter_slots, 'counter_slots', nowMs, errors);
  }
  if (mode === 'poll' && body.selected_slot_id === undefined) errors.selected_slot_id = 'is required to vote';
  let openVoter: { name: string; email: string } | null = null;
  if (openVote) {
    const name = body.voter_name?.trim() ?? '';
    const email = body.voter_email?.trim() ?? '';
    if (name.length === 0) errors.voter_name = 'is required to vote in an open poll';
    if (!isEmailAddress(email) || email.length > 320) errors.voter_email = 'must be an e-mail address';
    openVoter = { name, email };
  }
  if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
  return { counterSlots, openVoter };
}

/** The slot a standard accept names: the one already fixed, or the one it fixes now (not yet begun). */
export function acceptedSlot(l: Loaded, asked: string | undefined, nowMs: number): string {
  if (asked !== undefined && !l.slots.some((s) => s.id === asked)) {
    throw new ValidationFailed({ selected_slot_id: 'is not a slot of this proposal' });
  }
  const fixed = l.p.selected_slot_id;
  if (fixed !== null && asked !== undefined && asked !== fixed) {
    throw new Conflict('Another participant accepted a different slot; accept that one or counter', {
      code: 'slot_mismatch',
      selected_slot_id: fixed,
    });
  }
  const id = fixed ?? asked ?? (l.slots.length === 1 ? l.slots[0]!.id : null);
  if (id === null)
    throw new ValidationFailed({ selected_slot_id: 'is required: the proposal offers several slots' });
  if (l.slots.find((s) => s.id === id)!.start_time.getTime() <= nowMs) {
    throw new Conflict('The slot has already begun; counter with a later time', { code: 'slot_passed' });
  }
  return id;
}
