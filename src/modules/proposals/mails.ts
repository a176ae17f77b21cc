/**
 * The mails of proposals and polls (docs/api.md#proposals-and-polls): invitations with their magic
 * link, the requester's notices (declined, expired, consent revoked), the booked or cancelled meeting
 * with its invite (`UID: prop_…@kairos`), and a poll's result. Built inside the change's transaction
 * and written to the outbox there.
 */
import type { Config } from '../../config.js';
import type { Transition } from '../../lib/proposals.js';
import type { InviteSpec, MailMessage } from '../mail/api.js';

/** A proposal's mail before its mode is set: effects.ts gives each the proposal's (docs/api.md#test-mode). */
export type MailDraft = Omit<MailMessage, 'livemode'>;
import { addressOf, describeTime, htmlBody } from '../../lib/mail-text.js';
import type { PrincipalContact, PrincipalProfile } from '../principals/api.js';
import { type Loaded, type ParticipantRow, partiesOf, type SlotRow } from './present.js';

/** What a change's mails are made from. */
export interface MailContext {
  l: Loaded;
  row: Pick<Transition, 'to' | 'answer'>;
  pre: { profiles: Map<string, PrincipalProfile>; contacts: Map<string, PrincipalContact> };
  responder: ParticipantRow | null;
  message: string | null;
  reason: string | null;
  /**
   * Principals whose own calendar holds the meeting (written, or about to be removed): their mail
   * carries no invite, which a mail client would add as a second event.
   */
  inCalendar: ReadonlySet<string>;
}

export class ProposalMails {
  constructor(private readonly config: Pick<Config, 'baseUrl' | 'mailFrom'>) {}

  link(token: string): string {
    return `${this.config.baseUrl}/p/${token}`;
  }

  invitationMail(
    l: Loaded,
    requesterName: string,
    to: string | null,
    name: string,
    token: string,
    recipient?: string,
    /** The recipient's zone (a principal's); an address alone has none known: UTC, named. */
    zone = 'UTC',
  ): MailDraft {
    const url = this.link(token);
    const poll = l.p.mode === 'poll';
    const lines = [
      `Hello${name ? ` ${name}` : ''},`,
      '',
      poll
        ? `${requesterName} asks when you can meet: "${titleOf(l)}". Vote for the time that suits you.`
        : `${requesterName} proposes a meeting: "${titleOf(l)}".`,
      ...(l.p.message ? ['', l.p.message] : []),
      '',
      `Times offered (${zone}):`,
      ...l.slots.map((s) => `- ${describeTime(s.start_time, s.end_time, zone)}`),
      '',
      poll ? `Vote: ${url}` : `Accept, propose another time or decline: ${url}`,
      `The link works until ${describeTime(l.p.expires_at, null, zone)}.`,
    ];
    return {
      kind: poll ? 'proposal.poll_invitation' : 'proposal.invitation',
      subjectId: l.p.id,
      to,
      ...(recipient ? { recipient } : {}),
      subject: poll ? `${requesterName} asks when you can meet` : `${requesterName} proposes a meeting`,
      text: lines.join('\n'),
      html: htmlBody(lines, url),
      invite: null,
    };
  }

  /**
   * To the requester: rejected, expired, or expired because a consent was revoked
   * (docs/api.md#proposals-and-polls).
   */
  requesterMail(c: MailContext): MailDraft {
    const { l } = c;
    const who = c.responder?.name || 'A participant';
    const title = titleOf(l);
    const [subject, lead] =
      c.row.answer?.code === 'consent_revoked'
        ? [
            `Expired: ${title}`,
            `${who} accepted, but no longer lets you propose meetings (the consent was revoked), so the proposal has expired. No meeting was booked.`,
          ]
        : c.row.to === 'rejected'
          ? [
              `Declined: ${title}`,
              `${who} declined your proposal.${c.message ? ` Message: ${c.message}` : ''}`,
            ]
          : [
              `Expired: ${title}`,
              'Nobody answered in time; the proposal has expired. No meeting was booked.',
            ];
    const requester = c.pre.contacts.get(l.p.requester_id);
    const lines = [`Hello${requester?.name ? ` ${requester.name}` : ''},`, '', lead];
    return {
      kind: `proposal.${c.row.answer?.code ?? c.row.to}`,
      subjectId: l.p.id,
      to: requester?.email ?? null,
      recipient: `principal ${l.p.requester_id}`,
      subject,
      text: lines.join('\n'),
      html: htmlBody(lines, null),
      invite: null,
    };
  }

  /** Accepted or cancelled: everyone booked gets the meeting (an invite, or its cancellation). */
  everyoneMails(c: MailContext): MailDraft[] {
    const { l } = c;
    const cancelled = c.row.to === 'cancelled';
    const slot = selectedSlot(l);
    const ids = partiesOf(l);
    const people = ids.map((id) => ({ id, ...(c.pre.contacts.get(id) ?? { name: '', email: null }) }));
    const invite = this.invite(
      c,
      cancelled ? 'CANCEL' : 'REQUEST',
      people.flatMap((x) => (x.email ? [{ name: x.name, email: x.email }] : [])),
    );
    const title = titleOf(l);
    return people.map((x) => {
      const zone = c.pre.contacts.get(x.id)?.timezone ?? c.pre.profiles.get(x.id)?.timezone ?? 'UTC';
      const lines = [
        `Hello${x.name ? ` ${x.name}` : ''},`,
        '',
        cancelled
          ? `The meeting "${title}" has been cancelled.${c.reason ? ` Reason: ${c.reason}` : ''}`
          : `Everyone accepted: "${title}" is booked.`,
        `When: ${describeTime(slot.start_time, slot.end_time, zone)}`,
        `With: ${people
          .filter((y) => y.id !== x.id)
          .map((y) => y.name || 'a participant')
          .join(', ')}`,
      ];
      return {
        kind: cancelled ? 'proposal.cancelled' : 'proposal.accepted',
        subjectId: l.p.id,
        to: x.email,
        recipient: `principal ${x.id}`,
        subject: `${cancelled ? 'Cancelled' : 'Booked'}: ${title}`,
        text: lines.join('\n'),
        html: htmlBody(lines, null),
        invite: c.inCalendar.has(x.id) ? null : invite,
      };
    });
  }

  /**
   * The requester withdrew an open proposal or poll: each participant it reached (a principal at its
   * contact address, a named invitee or an open-poll voter at the address it gave) is told. No meeting
   * was booked, so no invite is cancelled.
   */
  withdrawnMails(c: MailContext): MailDraft[] {
    const { l } = c;
    const title = titleOf(l);
    const requesterName = c.pre.contacts.get(l.p.requester_id)?.name || 'The organiser';
    return l.participants.flatMap((x) => {
      const contact = x.principal_id ? c.pre.contacts.get(x.principal_id) : undefined;
      const to = x.principal_id ? (contact?.email ?? null) : x.email;
      if (!x.principal_id && !to) return [];
      const name = contact?.name || x.name;
      const lines = [
        `Hello${name ? ` ${name}` : ''},`,
        '',
        `${requesterName} withdrew ${l.p.mode === 'poll' ? 'the poll' : 'the proposal'} "${title}". No meeting was booked; there is nothing to answer any more.${c.reason ? ` Reason: ${c.reason}` : ''}`,
      ];
      return [
        {
          kind: 'proposal.withdrawn',
          subjectId: l.p.id,
          to,
          ...(x.principal_id ? { recipient: `principal ${x.principal_id}` } : {}),
          subject: `Withdrawn: ${title}`,
          text: lines.join('\n'),
          html: htmlBody(lines, null),
          invite: null,
        },
      ];
    });
  }

  /** A resolved poll: the result with an invite to every voter who left an address, and the requester. */
  resultMails(c: MailContext): MailDraft[] {
    const { l } = c;
    const slot = selectedSlot(l);
    const r = l.p.resolution!;
    const requester = c.pre.contacts.get(l.p.requester_id);
    const voters = l.participants.filter((x) => x.email !== null && x.response === 'voted');
    // The requester's invite lists every voter; a voter's lists that voter only: voters do not learn
    // each other's addresses (and the invites grow with the votes, not with their square).
    const invite = this.invite(
      c,
      'REQUEST',
      voters.map((x) => ({ name: x.name, email: x.email as string })),
    );
    const own = (x: ParticipantRow) =>
      this.invite(c, 'REQUEST', [{ name: x.name, email: x.email as string }]);
    const title = titleOf(l);
    const lines = (name: string, zone: string) => [
      `Hello${name ? ` ${name}` : ''},`,
      '',
      `The poll "${title}" is decided: ${describeTime(slot.start_time, slot.end_time, zone)}.`,
      `${r.vote_count} of ${r.total_votes} votes${r.tie_count > 1 ? ` (a tie of ${r.tie_count} slots, broken by the earliest start)` : ''}.`,
      ...(l.p.booking_error
        ? ['', 'The time could not be booked for the organiser: it was taken meanwhile.']
        : []),
    ];
    const reqZone = c.pre.profiles.get(l.p.requester_id)?.timezone ?? 'UTC';
    return [
      {
        kind: 'proposal.resolved',
        subjectId: l.p.id,
        to: requester?.email ?? null,
        recipient: `principal ${l.p.requester_id}`,
        subject: `Decided: ${title}`,
        text: lines(requester?.name ?? '', reqZone).join('\n'),
        html: htmlBody(lines(requester?.name ?? '', reqZone), null),
        invite: c.inCalendar.has(l.p.requester_id) ? null : invite,
      },
      ...voters.map((x) => ({
        kind: 'proposal.resolved',
        subjectId: l.p.id,
        to: x.email,
        subject: `Decided: ${title}`,
        text: lines(x.name, 'UTC').join('\n'),
        html: htmlBody(lines(x.name, 'UTC'), null),
        invite: own(x),
      })),
    ];
  }

  invite(c: MailContext, method: 'REQUEST' | 'CANCEL', attendees: InviteSpec['attendees']): InviteSpec {
    const { l } = c;
    const slot = selectedSlot(l);
    const requester = c.pre.contacts.get(l.p.requester_id);
    return {
      method,
      uid: `${l.p.id}@kairos`,
      sequence: method === 'CANCEL' ? 1 : 0,
      start: slot.start_time,
      end: slot.end_time,
      summary: titleOf(l),
      description: l.p.message,
      url: null,
      timezone: c.pre.profiles.get(l.p.requester_id)?.timezone ?? null,
      organizer: {
        name: requester?.name || 'Kairos',
        email: requester?.email ?? addressOf(this.config.mailFrom),
      },
      attendees,
    };
  }
}

/** The slot an accepted proposal or resolved poll settled on. */
export function selectedSlot(l: Loaded): SlotRow {
  const s = l.slots.find((x) => x.id === l.p.selected_slot_id);
  if (!s) throw new Error(`proposal ${l.p.id} has no selected slot`);
  return s;
}

/** What a meeting is called in mails, invites and calendars. */
export function titleOf(l: Loaded): string {
  return l.p.title ?? (l.p.mode === 'poll' ? 'Meeting (poll)' : 'Meeting');
}
