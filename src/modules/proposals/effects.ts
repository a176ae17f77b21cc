/**
 * The effects of a proposal's change (docs/design.md#proposals-and-polls): the row of the
 * state machine (src/lib/proposals.ts) that a change found names them — answers, votes, bookings,
 * calendar writes, mails, events — and they run here, in the change's transaction, in the row's
 * order; the new status is stored before the first event.
 */
import type { Config } from '../../config.js';
import type { Tx } from '../../db/store.js';
import type { Interval } from '../../lib/intervals.js';
import { type Effect, pollWinner, type Transition } from '../../lib/proposals.js';
import type { Clock } from '../../platform/clock.js';
import { Conflict } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { addressOf, publicName } from '../../lib/mail-text.js';
import type { PrincipalContact, PrincipalProfile } from '../principals/api.js';
import type { ProposalsNeeds } from './api.js';
import { HOUR, iso } from '../../lib/time.js';
import { DEFAULT_HOURS } from './input.js';
import { type MailDraft, type ProposalMails, selectedSlot, titleOf } from './mails.js';
import { type Loaded, type ParticipantRow, partiesOf, presentProposal } from './present.js';
import * as repo from './repo.js';
import type { Resolution } from './tables.js';

/** Everything one change needs, read before its transaction (no pooled read runs under its locks). */
export interface Prepared {
  profiles: Map<string, PrincipalProfile>;
  contacts: Map<string, PrincipalContact>;
}

/** One change in progress, inside its transaction. */
export interface Change {
  trx: Tx;
  l: Loaded;
  row: Transition;
  pre: Prepared;
  now: Date;
  responder: ParticipantRow | null;
  openVoter: { name: string; email: string } | null;
  viaToken: boolean;
  slotId: string | null;
  counterSlots: Interval[];
  message: string | null;
  reason: string | null;
  /** Set by effects. */
  booked: string[];
  freed: string[];
  inCalendar: ReadonlySet<string>;
  counter: Loaded | null;
  counterToken: string | null;
}

/** What a change decides before its effects run (the rest of `Change` is filled in by the change path). */
export type Decision = Omit<
  Change,
  'trx' | 'l' | 'pre' | 'now' | 'booked' | 'freed' | 'inCalendar' | 'counter' | 'counterToken'
>;

type EventName =
  | 'proposal.created'
  | 'proposal.countered'
  | 'proposal.accepted'
  | 'proposal.rejected'
  | 'proposal.cancelled'
  | 'proposal.expired';

export interface EffectsDeps extends Pick<ProposalsNeeds, 'mail' | 'calendars' | 'bookings' | 'webhooks'> {
  clock: Clock;
  config: Pick<Config, 'mailFrom'>;
  mails: ProposalMails;
}

export class ProposalEffects {
  constructor(private readonly deps: EffectsDeps) {}

  /** Runs the effects of the transition, in the table's order; stores the new status before any event. */
  async apply(c: Change): Promise<void> {
    let stored = false;
    for (const effect of c.row.effects) {
      if (effect.startsWith('event:') && !stored) {
        await this.store(c);
        stored = true;
      }
      await this.effect(c, effect);
    }
    if (!stored) await this.store(c);
  }

  private async store(c: Change): Promise<void> {
    const { p } = c.l;
    const final = c.row.to !== 'proposed';
    c.l.p = await repo.updateProposal(c.trx, p.id, {
      status: c.row.to,
      selected_slot_id: p.selected_slot_id,
      resolution: p.resolution === null ? null : JSON.stringify(p.resolution),
      booking_error: p.booking_error,
      updated_at: c.now,
      resolved_at: final && c.row.to !== 'cancelled' ? c.now : p.resolved_at,
    });
  }

  private async effect(c: Change, effect: Effect): Promise<void> {
    const { trx, l } = c;
    const { mails } = this.deps;
    switch (effect) {
      case 'record_answer': {
        const me = c.responder!;
        const response =
          c.row.action === 'accept' ? 'accepted' : c.row.action === 'reject' ? 'rejected' : 'countered';
        const updated = await repo.updateParticipant(trx, me.id, {
          response,
          message: c.message,
          responded_at: c.now,
          ...(c.viaToken ? { token_used_at: c.now } : {}),
        });
        l.participants = l.participants.map((x) => (x.id === me.id ? updated : x));
        if (c.slotId !== null && l.p.selected_slot_id === null) l.p = { ...l.p, selected_slot_id: c.slotId };
        return;
      }
      case 'record_vote': {
        if (c.openVoter) {
          const inserted = await repo.insertOpenVoter(trx, {
            id: prefixedId('ppt', c.now.getTime()),
            proposal_id: l.p.id,
            position: l.participants.length,
            principal_id: null,
            account_id: null,
            email: c.openVoter.email,
            name: c.openVoter.name,
            response: 'voted',
            voted_slot_id: c.slotId,
            message: c.message,
            token_hash: null,
            token_used_at: null,
            responded_at: c.now,
          });
          if (!inserted) {
            throw new Conflict('This e-mail address has already voted in this poll', {
              code: 'already_voted',
            });
          }
          l.participants = [...l.participants, inserted];
        } else {
          const me = c.responder!;
          const updated = await repo.updateParticipant(trx, me.id, {
            response: 'voted',
            voted_slot_id: c.slotId,
            message: c.message,
            responded_at: c.now,
            token_used_at: c.now,
          });
          l.participants = l.participants.map((x) => (x.id === me.id ? updated : x));
        }
        return;
      }
      case 'resolve': {
        const winner = pollWinner(
          l.slots.map((s) => ({ id: s.id, start: s.start_time.getTime(), end: s.end_time.getTime() })),
          l.participants.flatMap((x) => (x.voted_slot_id ? [x.voted_slot_id] : [])),
        );
        if (!winner) throw new Error('resolve without votes: the table guards against it');
        const resolution: Resolution = {
          winning_slot: {
            id: winner.slot.id,
            start: iso(new Date(winner.slot.start)),
            end: iso(new Date(winner.slot.end)),
          },
          vote_count: winner.voteCount,
          total_votes: winner.totalVotes,
          tie_count: winner.tieCount,
        };
        l.p = { ...l.p, selected_slot_id: winner.slot.id, resolution };
        return;
      }
      case 'book': {
        const slot = selectedSlot(l);
        const ids = l.p.mode === 'standard' ? partiesOf(l) : [l.p.requester_id];
        const principals = ids.flatMap((id) => {
          const prof = c.pre.profiles.get(id);
          return prof ? [prof] : [];
        });
        const input = {
          proposalId: l.p.id,
          principals,
          slot: { start: slot.start_time.getTime(), end: slot.end_time.getTime() },
          customers: meetingCustomers(l, c.pre.contacts, addressOf(this.deps.config.mailFrom)),
          notes: l.p.title ?? l.p.message,
          metadata: l.p.metadata,
          title:
            l.p.title ?? this.deps.bookings.meetingTitle(ids.map((id) => c.pre.contacts.get(id)?.name ?? '')),
          // A test-mode proposal books test-mode bookings (docs/api.md#test-mode).
          livemode: l.p.livemode,
        };
        if (l.p.mode === 'standard') {
          // All or nothing: a taken time fails the accept (409 slot_unavailable), nothing is stored.
          if ((await this.deps.bookings.takeMeeting(trx, input, 'abort')) === 'taken') {
            throw new Conflict(
              'The selected slot is no longer free for everyone; counter with another time',
              {
                code: 'slot_unavailable',
              },
            );
          }
        } else if ((await this.deps.bookings.takeMeeting(trx, input, 'undo')) === 'taken') {
          // A poll resolves whatever happens to the requester's time; a taken time is recorded.
          l.p = { ...l.p, booking_error: 'slot_unavailable' };
          return;
        }
        c.booked = principals.map((x) => x.id);
        return;
      }
      case 'write_calendars': {
        if (c.booked.length === 0) return;
        const slot = selectedSlot(l);
        c.inCalendar = await this.deps.calendars.writeMeeting(trx, {
          key: l.p.id,
          accountId: l.p.requester_account_id,
          principalIds: c.booked,
          title: titleOf(l),
          description: l.p.message,
          attendees: l.participants.flatMap((x) =>
            x.email !== null && x.response === 'voted' ? [{ name: x.name, email: x.email }] : [],
          ),
          start: slot.start_time,
          end: slot.end_time,
          livemode: l.p.livemode,
        });
        return;
      }
      case 'cancel_bookings': {
        c.freed = await this.deps.bookings.cancelMeeting(trx, l.p.id, c.reason);
        c.inCalendar = await this.deps.calendars.removeMeeting(trx, l.p.id);
        return;
      }
      case 'open_counter_proposal': {
        const me = c.responder!;
        const counterer = me.principal_id ? c.pre.profiles.get(me.principal_id) : undefined;
        const original = c.pre.profiles.get(l.p.requester_id);
        if (!counterer || !original) throw new Conflict('A party of this proposal no longer exists');
        const built = await repo.insertProposal(trx, {
          now: c.now,
          livemode: l.p.livemode,
          requester: counterer,
          threadId: l.p.thread_id,
          parentId: l.p.id,
          mode: 'standard',
          pollVariant: null,
          title: l.p.title,
          message: c.message,
          metadata: l.p.metadata,
          expiresAt: new Date(c.now.getTime() + DEFAULT_HOURS.standard * HOUR),
          slots: c.counterSlots,
          principals: [
            {
              id: original.id,
              accountId: original.accountId,
              name: c.pre.contacts.get(original.id)?.name ?? '',
            },
          ],
          emails: [],
        });
        c.counter = built.l;
        c.counterToken = built.tokens[0]?.token ?? null;
        await this.mail(c, [
          mails.invitationMail(
            built.l,
            c.pre.contacts.get(counterer.id)?.name ?? 'A participant',
            c.pre.contacts.get(original.id)?.email ?? null,
            c.pre.contacts.get(original.id)?.name ?? '',
            c.counterToken!,
            `principal ${original.id}`,
            c.pre.contacts.get(original.id)?.timezone,
          ),
        ]);
        return;
      }
      case 'mail_requester':
        await this.mail(c, [mails.requesterMail(c)]);
        return;
      case 'mail_everyone':
        await this.mail(c, mails.everyoneMails(c));
        return;
      case 'mail_withdrawn':
        await this.mail(c, mails.withdrawnMails(c));
        return;
      case 'mail_voters':
        await this.mail(c, mails.resultMails(c));
        return;
      case 'event:proposal.created':
        if (c.counter) await this.emit(trx, 'proposal.created', c.counter, c.now);
        return;
      case 'event:proposal.countered':
        await this.emit(
          trx,
          'proposal.countered',
          l,
          c.now,
          c.counter ? { counter_proposal: presentProposal(c.counter) } : {},
        );
        return;
      case 'event:proposal.resolved': {
        const r = l.p.resolution!;
        await this.deps.webhooks.emit(trx, {
          accountId: l.p.requester_account_id,
          recipientPrincipalId: l.p.requester_id,
          livemode: l.p.livemode,
          at: c.now,
          type: 'proposal.resolved',
          data: {
            proposal_id: l.p.id,
            thread_id: l.p.thread_id,
            poll_variant: l.p.poll_variant,
            winning_slot: r.winning_slot,
            vote_count: r.vote_count,
            total_votes: r.total_votes,
            tie_count: r.tie_count,
          },
        });
        return;
      }
      case 'event:proposal.accepted':
      case 'event:proposal.rejected':
      case 'event:proposal.cancelled':
      case 'event:proposal.expired':
        await this.emit(trx, effect.slice('event:'.length) as EventName, l, c.now);
        return;
    }
  }

  /**
   * A proposal event to every party's account (once per account); a poll's go to the requester only.
   * Of the proposal's mode, at `at` (the time of the clock its change ran on).
   */
  async emit(
    trx: Tx,
    type: EventName,
    l: Loaded,
    at: Date,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    const accounts = new Set([l.p.requester_account_id]);
    for (const x of l.participants) if (x.account_id) accounts.add(x.account_id);
    const data = { proposal: presentProposal(l), ...extra };
    const livemode = l.p.livemode;
    for (const accountId of accounts) {
      await this.deps.webhooks.emit(trx, { accountId, type, data, livemode, at });
    }
  }

  /** The change's mails, of the proposal's mode (a test-mode one is kept, never sent). */
  private async mail(c: Change, messages: readonly MailDraft[]): Promise<void> {
    await this.deps.mail.enqueue(
      c.trx,
      messages.map((m) => ({ ...m, livemode: c.l.p.livemode })),
    );
  }
}

/** A party of a meeting as a booking's customer fields show it. */
interface Party {
  name: string;
  email: string | null;
  timezone: string | null;
}

/**
 * Each booked principal's customer (docs/api.md#proposals-and-polls): the other side of the meeting.
 * The requester's booking is with its participants (a poll's: the voters of the winning slot, else
 * every voter), a participant's with the requester. The customer's address is the first of that side
 * that has one; when none has, the MAIL_FROM address stands in (`fallback`), as nobody can be mailed.
 */
export function meetingCustomers(
  l: Loaded,
  contacts: ReadonlyMap<string, PrincipalContact>,
  fallback: string,
): Map<string, { name: string; email: string; timezone: string | null }> {
  const ofPrincipal = (id: string): Party => {
    const c = contacts.get(id);
    return { name: c?.name ?? '', email: c?.email ?? null, timezone: c?.timezone ?? null };
  };
  const ofRow = (x: ParticipantRow): Party =>
    x.principal_id ? ofPrincipal(x.principal_id) : { name: x.name, email: x.email, timezone: null };
  const won = l.participants.filter(
    (x) => x.response === 'voted' && x.voted_slot_id === l.p.selected_slot_id,
  );
  const voted = l.participants.filter((x) => x.response === 'voted');
  const others = (l.p.mode === 'poll' ? (won.length ? won : voted) : l.participants).map(ofRow);
  const requester = ofPrincipal(l.p.requester_id);
  const out = new Map<string, { name: string; email: string; timezone: string | null }>();
  out.set(l.p.requester_id, customerOf(others, fallback));
  for (const x of l.participants) {
    if (x.principal_id && x.principal_id !== l.p.requester_id) {
      out.set(x.principal_id, customerOf([requester], fallback));
    }
  }
  return out;
}

/** One customer from a side of the meeting: its names (at most three, then "and n others"), its first address. */
function customerOf(side: readonly Party[], fallback: string) {
  const names = side.map((p) =>
    publicName(p.name, p.email ? p.email.slice(0, p.email.indexOf('@')) : 'Guest'),
  );
  const shown =
    names.length === 0
      ? 'Guest'
      : names.length <= 3
        ? names.join(', ')
        : `${names.slice(0, 2).join(', ')} and ${names.length - 2} others`;
  const first = side.find((p) => p.email !== null);
  return {
    name: shown.slice(0, 200),
    email: first?.email ?? fallback,
    timezone: first?.timezone ?? side[0]?.timezone ?? null,
  };
}
