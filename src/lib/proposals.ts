/**
 * The proposal state machine as data, and the poll's winner (pure; docs/design.md "Proposals and
 * polls"). The proposals service looks every change up here — which row applies to (status, mode,
 * action, facts), what status follows and which effects it runs — and refuses what no row allows
 * with a 409 naming the current status. The table is printed in docs/design.md.
 */

export type ProposalStatus = 'proposed' | 'accepted' | 'rejected' | 'countered' | 'cancelled' | 'expired';
export type ProposalMode = 'standard' | 'poll';
/** What moves a proposal: a participant's answer, a vote, the requester, or the reaper. */
export type ProposalAction = 'accept' | 'reject' | 'counter' | 'vote' | 'close' | 'cancel' | 'expire';

/**
 * Facts a guard reads, established by the service under the proposal's row lock:
 * - `consentRevoked`: the responding participant no longer lets the requester propose;
 * - `othersPending`: after this answer, some participant (named voter) still has not answered;
 * - `hasVotes`: the poll holds at least one vote (counting this one).
 */
export interface Facts {
  consentRevoked: boolean;
  othersPending: boolean;
  hasVotes: boolean;
}

export type Guard =
  | 'consent_revoked'
  | 'others_pending'
  | 'last_answer'
  | 'has_votes'
  | 'no_votes'
  | 'always';

/** The work a transition does, run by the service in the transaction that stores the new status. */
export type Effect =
  /** The participant's answer (and the slot the first accept fixes). */
  | 'record_answer'
  /** The vote of a named invitee (its single-use token) or of an open-poll voter (one per e-mail). */
  | 'record_vote'
  /** A booking at the selected slot for the requester and every participant, or the requester (poll). */
  | 'book'
  /** The meeting written into the calendars of everyone booked. */
  | 'write_calendars'
  /** The winner: most votes, ties to the earliest start; stored with the accepted status. */
  | 'resolve'
  /** A new `proposed` proposal in the thread, from the counterer to the requester. */
  | 'open_counter_proposal'
  /** Bookings of the accepted proposal cancelled, its calendar events removed. */
  | 'cancel_bookings'
  /** Mails: the requester alone, or everyone, or the voters who left an address (with the invite). */
  | 'mail_requester'
  /** The requester withdrew an open proposal: every participant it reached is told (no meeting existed). */
  | 'mail_withdrawn'
  | 'mail_everyone'
  | 'mail_voters'
  /** Webhook events, in the same transaction (delivered after commit). */
  | 'event:proposal.accepted'
  | 'event:proposal.rejected'
  | 'event:proposal.countered'
  | 'event:proposal.created'
  | 'event:proposal.cancelled'
  | 'event:proposal.expired'
  /** To the requester's subscriptions only (docs/api.md#events): after `accepted` is stored, same transaction. */
  | 'event:proposal.resolved';

export interface Transition {
  from: ProposalStatus;
  mode: ProposalMode;
  action: ProposalAction;
  when: Guard;
  to: ProposalStatus;
  effects: readonly Effect[];
  /** The call still fails after the change is stored: status and `code` of its problem. */
  answer?: { status: 409; code: 'consent_revoked' };
}

/** Every allowed change. Rows of one (from, mode, action) are tried in order; the first guard that holds wins. */
export const TRANSITIONS: readonly Transition[] = [
  // Standard proposals: every participant answers.
  {
    from: 'proposed',
    mode: 'standard',
    action: 'accept',
    when: 'consent_revoked',
    to: 'expired',
    effects: ['mail_requester'],
    answer: { status: 409, code: 'consent_revoked' },
  },
  {
    from: 'proposed',
    mode: 'standard',
    action: 'accept',
    when: 'others_pending',
    to: 'proposed',
    effects: ['record_answer'],
  },
  {
    from: 'proposed',
    mode: 'standard',
    action: 'accept',
    when: 'last_answer',
    to: 'accepted',
    effects: ['record_answer', 'book', 'write_calendars', 'mail_everyone', 'event:proposal.accepted'],
  },
  {
    from: 'proposed',
    mode: 'standard',
    action: 'reject',
    when: 'always',
    to: 'rejected',
    effects: ['record_answer', 'mail_requester', 'event:proposal.rejected'],
  },
  {
    from: 'proposed',
    mode: 'standard',
    action: 'counter',
    when: 'always',
    to: 'countered',
    effects: ['record_answer', 'open_counter_proposal', 'event:proposal.countered', 'event:proposal.created'],
  },
  {
    from: 'proposed',
    mode: 'standard',
    action: 'expire',
    when: 'always',
    to: 'expired',
    effects: ['mail_requester', 'event:proposal.expired'],
  },
  {
    from: 'proposed',
    mode: 'standard',
    action: 'cancel',
    when: 'always',
    to: 'cancelled',
    effects: ['mail_withdrawn', 'event:proposal.cancelled'],
  },
  {
    from: 'accepted',
    mode: 'standard',
    action: 'cancel',
    when: 'always',
    to: 'cancelled',
    effects: ['cancel_bookings', 'mail_everyone', 'event:proposal.cancelled'],
  },
  // Polls: votes, then one resolution (all named invitees voted, the requester closes, the reaper).
  {
    from: 'proposed',
    mode: 'poll',
    action: 'vote',
    when: 'others_pending',
    to: 'proposed',
    effects: ['record_vote'],
  },
  {
    from: 'proposed',
    mode: 'poll',
    action: 'vote',
    when: 'last_answer',
    to: 'accepted',
    effects: ['record_vote', 'resolve', 'book', 'write_calendars', 'mail_voters', 'event:proposal.resolved'],
  },
  {
    from: 'proposed',
    mode: 'poll',
    action: 'close',
    when: 'has_votes',
    to: 'accepted',
    effects: ['resolve', 'book', 'write_calendars', 'mail_voters', 'event:proposal.resolved'],
  },
  {
    from: 'proposed',
    mode: 'poll',
    action: 'close',
    when: 'no_votes',
    to: 'expired',
    effects: ['event:proposal.expired'],
  },
  {
    from: 'proposed',
    mode: 'poll',
    action: 'expire',
    when: 'has_votes',
    to: 'accepted',
    effects: ['resolve', 'book', 'write_calendars', 'mail_voters', 'event:proposal.resolved'],
  },
  {
    from: 'proposed',
    mode: 'poll',
    action: 'expire',
    when: 'no_votes',
    to: 'expired',
    effects: ['mail_requester', 'event:proposal.expired'],
  },
  {
    from: 'proposed',
    mode: 'poll',
    action: 'cancel',
    when: 'always',
    to: 'cancelled',
    effects: ['mail_withdrawn', 'event:proposal.cancelled'],
  },
];

function holds(guard: Guard, f: Facts): boolean {
  switch (guard) {
    case 'always':
      return true;
    case 'consent_revoked':
      return f.consentRevoked;
    case 'others_pending':
      return f.othersPending;
    case 'last_answer':
      return !f.othersPending;
    case 'has_votes':
      return f.hasVotes;
    case 'no_votes':
      return !f.hasVotes;
  }
}

/** May `action` be taken at all in this status and mode (before any facts are known)? */
export function allows(from: ProposalStatus, mode: ProposalMode, action: ProposalAction): boolean {
  return TRANSITIONS.some((t) => t.from === from && t.mode === mode && t.action === action);
}

/** The row that applies, or null when the action is not allowed in this status and mode. */
export function transition(
  from: ProposalStatus,
  mode: ProposalMode,
  action: ProposalAction,
  facts: Facts,
): Transition | null {
  for (const t of TRANSITIONS) {
    if (t.from === from && t.mode === mode && t.action === action && holds(t.when, facts)) return t;
  }
  return null;
}

/** The table as markdown (docs/design.md prints it; a test keeps the two equal). */
export function transitionTable(): string {
  const lines = [
    '| from | mode | action | guard | to | effects |',
    '|---|---|---|---|---|---|',
    ...TRANSITIONS.map(
      (t) =>
        `| ${t.from} | ${t.mode} | ${t.action} | ${t.when} | ${t.to}${t.answer ? ` (answers ${t.answer.status} \`${t.answer.code}\`)` : ''} | ${t.effects.join(', ')} |`,
    ),
  ];
  return lines.join('\n');
}

// ---- the poll's winner ---------------------------------------------------------------------------

export interface PollSlot {
  id: string;
  /** Epoch ms. */
  start: number;
  end: number;
}

export interface PollResult {
  slot: PollSlot;
  /** Votes of the winning slot. */
  voteCount: number;
  totalVotes: number;
  /** Slots that finished on the winning count: 1 is a clean win; 2+ means the earliest start broke the tie. */
  tieCount: number;
}

/**
 * The winner of a poll: most votes; among slots tied on that count, the earliest start (then the
 * earliest end, then the order given, so the answer never depends on anything else). Votes for slots
 * not in `slots` are ignored. Null when there is no vote.
 */
export function pollWinner(slots: readonly PollSlot[], votes: readonly string[]): PollResult | null {
  const counts = new Map<string, number>(slots.map((s) => [s.id, 0]));
  let total = 0;
  for (const v of votes) {
    const c = counts.get(v);
    if (c === undefined) continue;
    counts.set(v, c + 1);
    total++;
  }
  if (total === 0) return null;
  const top = Math.max(...counts.values());
  const tied = slots.filter((s) => counts.get(s.id) === top);
  let best = tied[0]!;
  for (const s of tied) {
    if (s.start < best.start || (s.start === best.start && s.end < best.end)) best = s;
  }
  return { slot: best, voteCount: top, totalVotes: total, tieCount: tied.length };
}
