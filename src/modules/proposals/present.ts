/** How proposals are shown: to their parties, and behind a magic link (docs/api.md#proposals-and-polls). */
import type { Selectable } from 'kysely';
import { publicName } from '../../lib/mail-text.js';
import type { ProposalParticipantsTable, ProposalSlotsTable, ProposalsTable } from './tables.js';
import { iso } from '../../lib/time.js';

export type ProposalRow = Selectable<ProposalsTable>;
export type SlotRow = Selectable<ProposalSlotsTable>;
export type ParticipantRow = Selectable<ProposalParticipantsTable>;

/** A proposal with its slots and participants (in their order). */
export interface Loaded {
  p: ProposalRow;
  slots: SlotRow[];
  participants: ParticipantRow[];
}

const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : iso(d));

function votesOf(l: Loaded, slotId: string): number {
  return l.participants.filter((x) => x.voted_slot_id === slotId).length;
}

function presentSlots(l: Loaded) {
  return l.slots.map((s) => ({
    id: s.id,
    start: iso(s.start_time),
    end: iso(s.end_time),
    is_selected: l.p.selected_slot_id === s.id,
    votes: votesOf(l, s.id),
  }));
}

/** A proposal as its parties (the requester and principal participants) see it. */
export function presentProposal(l: Loaded) {
  const { p } = l;
  return {
    id: p.id,
    thread_id: p.thread_id,
    parent_id: p.parent_id,
    mode: p.mode,
    poll_variant: p.poll_variant,
    status: p.status,
    requester_id: p.requester_id,
    participants: l.participants.map((x) => ({
      principal_id: x.principal_id,
      email: x.email,
      name: x.name,
      response: x.response,
    })),
    slots: presentSlots(l),
    title: p.title,
    message: p.message,
    metadata: p.metadata,
    resolution: p.resolution,
    booking_error: p.booking_error,
    expires_at: iso(p.expires_at),
    created_at: iso(p.created_at),
    resolved_at: isoOrNull(p.resolved_at),
    livemode: p.livemode,
  };
}
export type PresentedProposal = ReturnType<typeof presentProposal>;

/** What a magic link shows: no principal ids, no addresses; the viewer's own answer. */
export function presentPublic(l: Loaded, requesterName: string, viewer: ParticipantRow | null) {
  const { p } = l;
  return {
    id: p.id,
    mode: p.mode,
    poll_variant: p.poll_variant,
    status: p.status,
    requester_name: shownName(requesterName),
    title: p.title,
    message: p.message,
    slots: presentSlots(l),
    // A named invitee's name is made from its address: others see a number instead.
    participants: l.participants.map((x, i) => ({
      name:
        p.poll_variant === 'named' && x.principal_id === null && x.id !== viewer?.id
          ? `Invitee ${i + 1}`
          : shownName(x.name),
      response: x.response,
    })),
    resolution: p.resolution,
    expires_at: iso(p.expires_at),
    viewer: viewer
      ? {
          name: shownName(viewer.name),
          response: viewer.response,
          voted_slot_id: viewer.voted_slot_id,
          can_respond: p.status === 'proposed' && viewer.token_used_at === null,
        }
      : { name: null, response: null, voted_slot_id: null, can_respond: p.status === 'proposed' },
  };
}

/**
 * A participant's name as public pages show it: never an address (lib/mail-text.ts's publicName); a
 * name that is one, as an invitee's made from its address, shows the address's local part.
 */
function shownName(name: string): string {
  const local = /^[^@\s<]+(?=@)/.exec(name.trim())?.[0];
  return publicName(name, local ?? 'Someone');
}

/** The principals of a proposal: its requester and its principal participants. */
export function partiesOf(l: Loaded): string[] {
  return [l.p.requester_id, ...l.participants.flatMap((x) => (x.principal_id ? [x.principal_id] : []))];
}
