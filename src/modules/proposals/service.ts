/**
 * Multi-party proposals and polls (docs/api.md#proposals-and-polls; docs/architecture.md "Proposals and
 * polls").
 *
 * Every change of a proposal runs in one transaction that first locks the proposal's row, re-reads its
 * status, and looks the change up in the state machine of src/lib/proposals.ts: the row found names
 * the next status and the effects (answers, votes, bookings, calendar writes, mails, events), which
 * run in that same transaction. Answers, votes, the requester's close, a cancel and the reaper are
 * therefore applied one at a time, whatever process they come from: a poll resolves once, an accepted
 * proposal books once, and each change emits its events once. A magic-link token is marked used in the
 * transaction of the answer it carries, so an answer that fails leaves it usable.
 */
import { sql } from 'kysely';
import type { Config } from '../../config.js';
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import type { Interval } from '../../lib/intervals.js';
import {
  type Effect,
  type ProposalAction,
  pollWinner,
  type Transition,
  transition,
} from '../../lib/proposals.js';
import type { Actor } from '../../platform/actor.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { isTokenShape, randomToken, sha256Hex } from '../../platform/crypto.js';
import { AppError, Conflict, Forbidden, NotFound, ValidationFailed } from '../../platform/errors.js';
import { isPrefixedId, isUuid, prefixedId } from '../../platform/ids.js';
import { decodeCursor, newestFirstAfter, page } from '../../platform/pagination.js';
import { isEmailAddress, isIsoInstant } from '../../platform/validation.js';
import { type BookingsApi, isExclusionViolation, meetingWith } from '../bookings/api.js';
import type { CalendarsApi } from '../calendars/api.js';
import { addressOf, type MailApi } from '../mail/api.js';
import type { PrincipalContact, PrincipalProfile, PrincipalRef, PrincipalsApi } from '../principals/api.js';
import { emitEvent } from '../webhooks/api.js';
import { ProposalMails, selectedSlot, titleOf } from './mails.js';
import {
  iso,
  type Loaded,
  type ParticipantRow,
  partiesOf,
  presentProposal,
  presentPublic,
  type ProposalRow,
  type SlotRow,
} from './present.js';
import type { Resolution } from './tables.js';
import type { CreateProposalBody, ProposalsQuery, RespondBody, SlotIn } from './schemas.js';

const HOUR = 3_600_000;
/** Poll slots start at least this far ahead (code `earliest_slot_too_soon`). */
export const POLL_EARLIEST_MS = 25 * HOUR;
const DEFAULT_HOURS = { standard: 72, poll: 168 } as const;
export const MAX_EXPIRES_HOURS = 720;
const MAX_SLOT_MS = 24 * HOUR;

export interface ProposalsDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'baseUrl' | 'mailFrom'>;
  principals: Pick<PrincipalsApi, 'profiles' | 'contacts'> & {
    access: Pick<PrincipalsApi['access'], 'actingFor'>;
  };
  mail: Pick<MailApi, 'enqueue'>;
  calendars: Pick<CalendarsApi, 'writeMeeting' | 'removeMeeting' | 'isConnected'>;
  bookings: Pick<BookingsApi, 'bookMeeting' | 'cancelMeeting' | 'busyChanged'>;
  network: { mayPropose(from: string, to: string): Promise<boolean> };
  log: { error(obj: object, msg: string): void };
}

function invalidToken(detail = 'This link is not valid or was already used'): AppError {
  return new AppError(401, 'unauthorized', detail, { code: 'invalid_token' });
}
function tokenExpired(): AppError {
  return new AppError(410, 'gone', 'This proposal has expired', { code: 'token_expired' });
}
function notOpen(p: ProposalRow, action: string): Conflict {
  return new Conflict(`The proposal is ${p.status}; it cannot be ${action} now`, {
    code: 'proposal_not_open',
    proposal_status: p.status,
  });
}
function proposalNotFound(): AppError {
  return new AppError(404, 'not-found', 'No proposal with this id', { code: 'proposal_not_found' });
}

/** Who answers: a participant row (principal or named invitee), or an open-poll voter. */
type Responder = (
  | { kind: 'participant'; id: string; principalId: string | null; viaToken: boolean }
  | { kind: 'open'; name: string; email: string }
) & {
  /** The proposal's participants with a principal, when telling who answers read them (for prepare). */
  participants?: readonly { id: string; principal_id: string | null }[];
};

/** Everything one change needs, read before its transaction (no pooled read runs under its locks). */
interface Prepared {
  profiles: Map<string, PrincipalProfile>;
  contacts: Map<string, PrincipalContact>;
}

/** One change in progress, inside its transaction. */
interface Change {
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

export class ProposalService {
  private readonly mails: ProposalMails;

  constructor(private readonly deps: ProposalsDeps) {
    this.mails = new ProposalMails(deps.config);
  }

  // ---- create --------------------------------------------------------------------------------------

  /** POST /v1/proposals */
  async create(caller: Actor, body: CreateProposalBody) {
    const requester = await this.actor(caller, body.principal_id);
    const nowMs = this.deps.clock.nowMs();
    const errors: Record<string, string> = {};
    const slots = this.slotsOf(body.slots, 'slots', nowMs, errors);
    let participantIds: string[] = [];
    const emails: string[] = [];
    if (body.mode === 'standard') {
      if (body.participant_emails !== undefined) errors.participant_emails = 'is for polls (mode poll)';
      if (!body.participant_ids || body.participant_ids.length === 0) {
        errors.participant_ids = 'must name 1 to 10 principals for a standard proposal';
      } else {
        participantIds = [...new Set(body.participant_ids.map((x) => x.toLowerCase()))];
        if (participantIds.some((x) => !isUuid(x))) errors.participant_ids = 'must be principal ids (UUIDs)';
        else if (participantIds.includes(requester.id))
          errors.participant_ids = 'cannot include the requester';
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
    const expiresAt = new Date(expiresMs);

    const profiles = await this.deps.principals.profiles(participantIds);
    if (body.mode === 'standard') {
      const unknown = participantIds.filter((x) => !profiles.has(x));
      if (unknown.length > 0) {
        throw new ValidationFailed({ participant_ids: `no principal ${unknown.join(', ')}` });
      }
      const allowed = await Promise.all(
        participantIds.map((x) => this.deps.network.mayPropose(requester.id, x)),
      );
      const missing = participantIds.filter((_, i) => !allowed[i]);
      if (missing.length > 0) {
        throw new Forbidden(
          `Every participant must have granted you booking:propose (or be connected to you); missing: ${missing.join(', ')}`,
          { code: 'consent_required', participant_ids: missing },
        );
      }
    }
    if (!(await this.deps.calendars.isConnected(requester.id))) {
      throw new Conflict('Connect a calendar before proposing meetings', {
        code: 'calendar_disconnected_originator',
      });
    }
    const contacts = await this.deps.principals.contacts([requester.id, ...participantIds]);
    const now = new Date(nowMs);

    const made = await withTransaction(this.deps.db, async (trx) => {
      const built = await this.insertProposal(trx, {
        now,
        requester,
        threadId: prefixedId('thr', nowMs),
        parentId: null,
        mode: body.mode,
        pollVariant: body.mode === 'poll' ? (emails.length > 0 ? 'named' : 'open') : null,
        title: body.title ?? null,
        message: body.message ?? null,
        metadata: body.metadata ?? {},
        expiresAt,
        slots,
        principals: participantIds.map((id) => ({
          id,
          accountId: profiles.get(id)!.accountId,
          name: contacts.get(id)?.name ?? '',
        })),
        emails,
      });
      const requesterName = contacts.get(requester.id)?.name ?? 'Someone';
      await this.deps.mail.enqueue(
        trx,
        built.tokens.map((t) =>
          t.principalId === null
            ? this.mails.invitationMail(built.l, requesterName, t.email, t.name, t.token)
            : this.mails.invitationMail(
                built.l,
                requesterName,
                contacts.get(t.principalId)?.email ?? null,
                t.name,
                t.token,
                `principal ${t.principalId}`,
              ),
        ),
      );
      await this.emit(trx, 'proposal.created', built.l);
      return built;
    });
    const proposal = presentProposal(made.l);
    if (made.l.p.poll_variant === 'named') {
      return {
        proposal,
        invitations: made.tokens.map((t) => ({
          email: t.email as string,
          magic_link_url: this.mails.link(t.token),
        })),
      };
    }
    if (made.l.p.poll_variant === 'open')
      return { proposal, magic_link_url: this.mails.link(made.openToken!) };
    return { proposal };
  }

  /** Writes a proposal with its slots and participants; answers their tokens (and the open link). */
  private async insertProposal(
    trx: Tx,
    x: {
      now: Date;
      requester: PrincipalRef;
      threadId: string;
      parentId: string | null;
      mode: 'standard' | 'poll';
      pollVariant: 'named' | 'open' | null;
      title: string | null;
      message: string | null;
      metadata: Record<string, string>;
      expiresAt: Date;
      slots: Interval[];
      principals: { id: string; accountId: string; name: string }[];
      emails: string[];
    },
  ) {
    const nowMs = x.now.getTime();
    const openToken = x.pollVariant === 'open' ? randomToken(32) : null;
    const p = (await trx
      .insertInto('proposals')
      .values({
        id: prefixedId('prop', nowMs),
        thread_id: x.threadId,
        parent_id: x.parentId,
        mode: x.mode,
        poll_variant: x.pollVariant,
        status: 'proposed',
        requester_id: x.requester.id,
        requester_account_id: x.requester.accountId,
        title: x.title,
        message: x.message,
        metadata: JSON.stringify(x.metadata),
        selected_slot_id: null,
        open_token_hash: openToken ? sha256Hex(openToken) : null,
        resolution: null,
        booking_error: null,
        expires_at: x.expiresAt,
        created_at: x.now,
        updated_at: x.now,
        resolved_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow()) as ProposalRow;
    const slots = (await trx
      .insertInto('proposal_slots')
      .values(
        x.slots.map((s, i) => ({
          id: prefixedId('slot', nowMs),
          proposal_id: p.id,
          position: i,
          start_time: new Date(s.start),
          end_time: new Date(s.end),
        })),
      )
      .returningAll()
      .execute()) as SlotRow[];
    const tokens: { principalId: string | null; email: string | null; name: string; token: string }[] = [];
    const rows = [
      ...x.principals.map((q) => ({
        principal_id: q.id,
        account_id: q.accountId,
        email: null,
        name: q.name,
      })),
      ...x.emails.map((e) => ({
        principal_id: null,
        account_id: null,
        email: e,
        name: e.split('@')[0] ?? e,
      })),
    ].map((r, i) => {
      const token = randomToken(32);
      tokens.push({ principalId: r.principal_id, email: r.email, name: r.name, token });
      return {
        id: prefixedId('ppt', nowMs),
        proposal_id: p.id,
        position: i,
        ...r,
        response: 'pending' as const,
        voted_slot_id: null,
        message: null,
        token_hash: sha256Hex(token),
        token_used_at: null,
        responded_at: null,
      };
    });
    const participants =
      rows.length === 0
        ? []
        : ((await trx
            .insertInto('proposal_participants')
            .values(rows)
            .returningAll()
            .execute()) as ParticipantRow[]);
    return { l: { p, slots, participants } as Loaded, tokens, openToken };
  }

  // ---- read ----------------------------------------------------------------------------------------

  /** GET /v1/proposals */
  async list(caller: Actor, q: ProposalsQuery) {
    const me = await this.actor(caller, q.principal_id);
    const after = decodeCursor(q.cursor, { prefix: 'prop' });
    let query = this.deps.db.selectFrom('proposals').selectAll();
    const asParticipant = sql<boolean>`id IN (SELECT proposal_id FROM proposal_participants WHERE principal_id = ${me.id})`;
    if (q.role === 'requester') query = query.where('requester_id', '=', me.id);
    else if (q.role === 'participant') query = query.where(asParticipant);
    else query = query.where(sql<boolean>`(requester_id = ${me.id} OR ${asParticipant})`);
    if (q.status) query = query.where('status', '=', q.status);
    const rows = (await newestFirstAfter(query, after, q.limit).execute()) as ProposalRow[];
    const { items, pagination } = page(rows, q.limit);
    const loaded = await this.loadMany(this.deps.db, items);
    return { proposals: loaded.map(presentProposal), pagination };
  }

  /** GET /v1/proposals/{id} */
  async get(caller: Actor, id: string) {
    const l = await this.visible(caller, id);
    return { proposal: presentProposal(l) };
  }

  /** GET /v1/threads/{id}: every proposal of a thread the caller is a party of, oldest first. */
  async thread(caller: Actor, threadId: string) {
    const rows =
      isPrefixedId(threadId) && threadId.startsWith('thr_')
        ? ((await this.deps.db
            .selectFrom('proposals')
            .selectAll()
            .where('thread_id', '=', threadId)
            .orderBy('created_at')
            .orderBy('id')
            .execute()) as ProposalRow[])
        : [];
    // Oldest first; a counter made in the same millisecond as its parent still comes after it.
    const parent = new Map(rows.map((r) => [r.id, r.parent_id]));
    const depth = (id: string): number => {
      let n = 0;
      for (let at = parent.get(id); at; at = parent.get(at)) n++;
      return n;
    };
    rows.sort((x, y) => x.created_at.getTime() - y.created_at.getTime() || depth(x.id) - depth(y.id));
    const loaded = await this.loadMany(this.deps.db, rows);
    const parties = new Set<string>();
    for (const l of loaded) for (const id of partiesOf(l)) parties.add(id);
    if (loaded.length === 0 || !(await this.actsForAny(caller, [...parties]))) {
      throw new NotFound('No thread with this id');
    }
    return { thread: { id: threadId, proposals: loaded.map(presentProposal) } };
  }

  /** GET /v1/proposals/by-token: what a magic link shows; does not use the token. */
  async byToken(token: string) {
    const found = await this.byTokenHash(token);
    const [l] = await this.loadMany(this.deps.db, [found.p]);
    const requester = (await this.deps.principals.contacts([found.p.requester_id])).get(found.p.requester_id);
    if (
      !requester ||
      !(await this.deps.principals.profiles([found.p.requester_id])).has(found.p.requester_id)
    ) {
      throw proposalNotFound();
    }
    if (isLapsed(found.p, this.deps.clock.nowMs())) throw tokenExpired();
    const viewer = found.participantId
      ? (l!.participants.find((x) => x.id === found.participantId) ?? null)
      : null;
    return { proposal: presentPublic(l!, requester.name, viewer) };
  }

  private async byTokenHash(token: string): Promise<{ p: ProposalRow; participantId: string | null }> {
    if (!isTokenShape(token)) throw invalidToken();
    const hash = sha256Hex(token);
    const { rows } = await sql<ProposalRow & { participant_id: string | null }>`
      SELECT p.*, pp.id AS participant_id FROM proposal_participants pp JOIN proposals p ON p.id = pp.proposal_id
      WHERE pp.token_hash = ${hash}
      UNION ALL
      SELECT p.*, NULL FROM proposals p WHERE p.open_token_hash = ${hash}
      LIMIT 1`.execute(this.deps.db);
    const row = rows[0];
    if (!row) throw invalidToken();
    const { participant_id, ...p } = row;
    return { p: p as ProposalRow, participantId: participant_id };
  }

  // ---- answers -------------------------------------------------------------------------------------

  /** POST /v1/proposals/{id}/response */
  async respond(caller: Caller, id: string, body: RespondBody) {
    const p0 = await this.row(id);
    if (!p0) throw proposalNotFound();
    if (p0.mode === 'poll' && body.action !== 'accept') {
      throw new AppError(
        400,
        'validation-error',
        'A poll takes votes only: action accept with selected_slot_id',
        {
          code: 'poll_mode_only_supports_accept',
          errors: { action: 'must be accept in a poll' },
        },
      );
    }
    const who = await this.responder(caller, p0, body);
    const nowMs = this.deps.clock.nowMs();
    const errors: Record<string, string> = {};
    let counterSlots: Interval[] = [];
    if (body.action === 'counter') {
      if (!body.counter_slots || body.counter_slots.length === 0)
        errors.counter_slots = 'must offer 1 to 10 slots';
      else counterSlots = this.slotsOf(body.counter_slots, 'counter_slots', nowMs, errors);
    }
    if (p0.mode === 'poll' && body.selected_slot_id === undefined)
      errors.selected_slot_id = 'is required to vote';
    let openVoter: { name: string; email: string } | null = null;
    if (who.kind === 'open') {
      const name = body.voter_name?.trim() ?? '';
      const email = body.voter_email?.trim() ?? '';
      if (name.length === 0) errors.voter_name = 'is required to vote in an open poll';
      if (!isEmailAddress(email) || email.length > 320) errors.voter_email = 'must be an e-mail address';
      openVoter = { name, email };
    }
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);

    // The consent may have gone since the proposal was made (SPEC 3.1): read now, before the lock.
    // A counter-proposal answers the one it counters: the requester's consent to the counterer is not asked.
    const consentRevoked =
      p0.mode === 'standard' &&
      p0.parent_id === null &&
      body.action === 'accept' &&
      who.kind === 'participant' &&
      who.principalId !== null
        ? !(await this.deps.network.mayPropose(p0.requester_id, who.principalId))
        : false;
    const pre = await this.prepare(p0, who.participants);
    const action: ProposalAction = p0.mode === 'poll' ? 'vote' : body.action;
    const result = await this.change(p0.id, pre, async (_trx, l) => {
      if (l.p.status !== 'proposed') {
        if (who.kind !== 'open' && who.viaToken && l.p.status === 'expired') throw tokenExpired();
        throw notOpen(l.p, 'answered');
      }
      if (l.p.expires_at.getTime() <= nowMs) {
        if (who.kind !== 'open' && !who.viaToken) throw notOpen({ ...l.p, status: 'expired' }, 'answered');
        throw tokenExpired();
      }
      const me = who.kind === 'participant' ? l.participants.find((x) => x.id === who.id) : undefined;
      if (who.kind === 'participant') {
        if (!me || (who.viaToken && me.token_used_at !== null)) throw invalidToken();
        if (me.response !== 'pending') {
          throw new Conflict(`You already answered this proposal (${me.response})`, {
            code: 'already_responded',
            response: me.response,
          });
        }
      }
      const othersPending =
        l.p.poll_variant === 'open' ||
        l.participants.some((x) => x.id !== me?.id && x.response === 'pending');
      const hasVotes = action === 'vote' || l.participants.some((x) => x.voted_slot_id !== null);
      const row = transition(l.p.status, l.p.mode, action, { consentRevoked, othersPending, hasVotes });
      if (!row) throw notOpen(l.p, 'answered');
      let slotId: string | null = null;
      if (row.effects.includes('record_answer') && body.action === 'accept') {
        slotId = this.acceptedSlot(l, body.selected_slot_id, nowMs);
      } else if (row.effects.includes('record_vote')) {
        slotId = body.selected_slot_id ?? null;
        if (!l.slots.some((s) => s.id === slotId)) {
          throw new ValidationFailed({ selected_slot_id: 'is not a slot of this proposal' });
        }
      }
      return {
        row,
        responder: me ?? null,
        openVoter,
        viaToken: who.kind === 'participant' && who.viaToken,
        slotId,
        counterSlots,
        message: body.message?.trim() || null,
        reason: null,
      };
    });
    const o = definite(result);
    if (who.kind === 'participant' && !who.viaToken) return this.partyAnswer(o);
    // Answered by a magic link: the link's view (no ids, no other parties' addresses), as by-token shows it.
    const viewer =
      who.kind === 'participant'
        ? o.l.participants.find((x) => x.id === who.id)
        : o.l.participants.find((x) => x.email?.toLowerCase() === openVoter?.email.toLowerCase());
    const requesterName = pre.contacts.get(p0.requester_id)?.name ?? '';
    return { proposal: presentPublic(o.l, requesterName, viewer ?? null) };
  }

  /** The slot a standard accept names: the one already fixed, or the one it fixes now (not yet begun). */
  private acceptedSlot(l: Loaded, asked: string | undefined, nowMs: number): string {
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

  /** Who answers, from the token or the caller's credential (docs/api.md#proposals-and-polls). */
  private async responder(caller: Caller, p: ProposalRow, body: RespondBody): Promise<Responder> {
    if (body.token !== undefined) {
      if (!isTokenShape(body.token)) throw invalidToken();
      const hash = sha256Hex(body.token);
      const pp = await this.deps.db
        .selectFrom('proposal_participants')
        .select(['id', 'principal_id', 'token_used_at'])
        .where('token_hash', '=', hash)
        .where('proposal_id', '=', p.id)
        .executeTakeFirst();
      if (pp) {
        if (pp.token_used_at !== null) throw invalidToken();
        return { kind: 'participant', id: pp.id, principalId: pp.principal_id, viaToken: true };
      }
      if (p.open_token_hash !== null && p.open_token_hash === hash) {
        return { kind: 'open', name: body.voter_name ?? '', email: body.voter_email ?? '' };
      }
      throw invalidToken();
    }
    const principal = caller.kind === 'secret' || caller.kind === 'session' ? caller.principalId : null;
    if (principal === null || caller.accountId === null) {
      throw invalidToken('Answer with a participant’s credential or the magic-link token');
    }
    const actor: Actor = { accountId: caller.accountId, principalId: principal };
    const ids = await this.participantPrincipals(p.id);
    if (body.principal_id !== undefined) {
      const asked = body.principal_id.toLowerCase();
      if (asked === p.requester_id) throw organizerCannotRespond();
      const hit = ids.find((x) => x.principal_id === asked);
      if (hit && (await this.deps.principals.access.actingFor(actor, asked))) {
        return { kind: 'participant', id: hit.id, principalId: asked, viaToken: false, participants: ids };
      }
      throw proposalNotFound();
    }
    if (principal === p.requester_id) throw organizerCannotRespond();
    const mine: { id: string; principal_id: string | null }[] = [];
    for (const x of ids) {
      if (x.principal_id && (await this.deps.principals.access.actingFor(actor, x.principal_id)))
        mine.push(x);
    }
    if (mine.length === 1) {
      return {
        kind: 'participant',
        id: mine[0]!.id,
        principalId: mine[0]!.principal_id,
        viaToken: false,
        participants: ids,
      };
    }
    if (mine.length > 1) {
      throw new ValidationFailed({
        principal_id: 'is required: you act for several participants of this proposal',
      });
    }
    if (await this.deps.principals.access.actingFor(actor, p.requester_id)) throw organizerCannotRespond();
    if (p.mode === 'poll') throw invalidToken('Votes carry the poll link’s token');
    throw proposalNotFound();
  }

  private async participantPrincipals(proposalId: string) {
    return this.deps.db
      .selectFrom('proposal_participants')
      .select(['id', 'principal_id'])
      .where('proposal_id', '=', proposalId)
      .where('principal_id', 'is not', null)
      .execute();
  }

  /** POST /v1/proposals/{id}/close: the requester resolves a poll now. */
  async close(caller: Actor, id: string) {
    const p0 = await this.row(id);
    if (!p0 || !(await this.deps.principals.access.actingFor(caller, p0.requester_id))) {
      // A participant of a standard proposal sees it, but only the requester closes a poll.
      if (p0 && (await this.isParty(caller, p0))) throw new Forbidden('Only the requester closes a poll');
      throw proposalNotFound();
    }
    if (p0.mode !== 'poll') {
      throw new Conflict('Only polls are closed; a standard proposal is answered or expires', {
        code: 'not_a_poll',
        proposal_status: p0.status,
      });
    }
    const pre = await this.prepare(p0);
    return this.partyAnswer(
      definite(
        await this.change(p0.id, pre, async (_trx, l) => {
          const row = transition(l.p.status, 'poll', 'close', {
            consentRevoked: false,
            othersPending: false,
            hasVotes: l.participants.some((x) => x.voted_slot_id !== null),
          });
          if (!row) throw notOpen(l.p, 'closed');
          return this.plain(row);
        }),
      ),
    );
  }

  /**
   * POST /v1/proposals/{id}/cancel: an accepted standard proposal, by any party; an open (`proposed`)
   * proposal or poll is withdrawn, by its requester only (a participant rejects it instead).
   */
  async cancel(caller: Actor, id: string, reason: string | undefined) {
    const l0 = await this.visible(caller, id);
    if (
      l0.p.status === 'proposed' &&
      !(await this.deps.principals.access.actingFor(caller, l0.p.requester_id))
    ) {
      throw new Forbidden('Only the requester withdraws an open proposal; a participant rejects it instead', {
        code: 'requester_only',
      });
    }
    const pre = await this.prepare(l0.p, l0.participants);
    return this.partyAnswer(
      definite(
        await this.change(l0.p.id, pre, async (_trx, l) => {
          const row = transition(l.p.status, l.p.mode, 'cancel', {
            consentRevoked: false,
            othersPending: false,
            hasVotes: false,
          });
          if (!row) throw notOpen(l.p, 'cancelled');
          return { ...this.plain(row), reason: reason?.trim() || null };
        }),
      ),
    );
  }

  /** The reaper: proposals past `expires_at` expire (standard) or resolve (polls). One pass. */
  async expireDue(limit = 100): Promise<number> {
    const now = this.deps.clock.now();
    const due = (await this.deps.db
      .selectFrom('proposals')
      .selectAll()
      .where('status', '=', 'proposed')
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(limit)
      .execute()) as ProposalRow[];
    let done = 0;
    for (const p0 of due) {
      try {
        const pre = await this.prepare(p0);
        const changed = await this.change(
          p0.id,
          pre,
          async (_trx, l) => {
            if (l.p.status !== 'proposed' || l.p.expires_at.getTime() > this.deps.clock.nowMs()) return null;
            const row = transition('proposed', l.p.mode, 'expire', {
              consentRevoked: false,
              othersPending: false,
              hasVotes: l.participants.some((x) => x.voted_slot_id !== null),
            });
            return row ? this.plain(row) : null;
          },
          { skipLocked: true },
        );
        if (changed) done++;
      } catch (err) {
        this.deps.log.error({ err, proposal_id: p0.id }, 'proposal expiry failed; the next pass retries');
      }
    }
    return done;
  }

  private plain(row: Transition) {
    return {
      row,
      responder: null,
      openVoter: null,
      viaToken: false,
      slotId: null,
      counterSlots: [] as Interval[],
      message: null,
      reason: null,
    };
  }

  // ---- the one change path -------------------------------------------------------------------------

  /** Reads what a change of `p` may need (profiles for bookings, contacts for mails), before its transaction. */
  private async prepare(
    p: ProposalRow,
    /** The proposal's participants when the caller has read them already (else read here). */
    known?: readonly { principal_id: string | null }[],
  ): Promise<Prepared> {
    const participants = known ?? (await this.participantPrincipals(p.id));
    const ids = [
      p.requester_id,
      ...participants.flatMap((x) => (x.principal_id === null ? [] : [x.principal_id])),
    ];
    const [profiles, contacts] = await Promise.all([
      this.deps.principals.profiles(ids),
      this.deps.principals.contacts(ids),
    ]);
    return { profiles, contacts };
  }

  /**
   * Locks the proposal, lets `decide` pick the transition (or throw), applies it, commits. Answers the
   * proposal as stored and the counter-proposal a counter made (null when `decide` passed); throws
   * the row's `answer` after commit (consent revoked).
   */
  private async change(
    id: string,
    pre: Prepared,
    decide: (
      trx: Tx,
      l: Loaded,
    ) => Promise<Omit<
      Change,
      'trx' | 'l' | 'pre' | 'now' | 'booked' | 'freed' | 'inCalendar' | 'counter' | 'counterToken'
    > | null>,
    opts: { skipLocked?: boolean } = {},
  ) {
    let touched: string[] = [];
    let outcome: { l: Loaded; counter: Loaded | null; row: Transition } | null;
    try {
      outcome = await withTransaction(this.deps.db, async (trx) => {
        let q = trx.selectFrom('proposals').selectAll().where('id', '=', id).forUpdate();
        if (opts.skipLocked) q = q.skipLocked();
        const p = (await q.executeTakeFirst()) as ProposalRow | undefined;
        if (!p) {
          if (opts.skipLocked) return null;
          throw proposalNotFound();
        }
        const [l] = await this.loadMany(trx, [p]);
        const decided = await decide(trx, l!);
        if (!decided) return null;
        const c: Change = {
          ...decided,
          trx,
          l: l!,
          pre,
          now: this.deps.clock.now(),
          booked: [],
          freed: [],
          inCalendar: new Set(),
          counter: null,
          counterToken: null,
        };
        await this.apply(c);
        touched = [...c.booked, ...c.freed];
        return { l: c.l, counter: c.counter, row: c.row };
      });
    } catch (err) {
      if (isExclusionViolation(err)) {
        throw new Conflict('The selected slot is no longer free for everyone; counter with another time', {
          code: 'slot_unavailable',
        });
      }
      throw err;
    } finally {
      if (touched.length > 0) this.deps.bookings.busyChanged(touched);
    }
    if (!outcome) return null;
    if (outcome.row.answer) {
      throw new Conflict('The participant no longer lets the requester propose; the proposal has expired', {
        code: outcome.row.answer.code,
        proposal_status: outcome.l.p.status,
      });
    }
    return { l: outcome.l, counter: outcome.counter };
  }

  /** A change's answer to a party of the proposal (and the counter-proposal a counter made). */
  private partyAnswer(o: { l: Loaded; counter: Loaded | null }) {
    return {
      proposal: presentProposal(o.l),
      ...(o.counter ? { counter_proposal: presentProposal(o.counter) } : {}),
    };
  }

  /** Runs the effects of the transition, in the table's order; stores the new status before any event. */
  private async apply(c: Change): Promise<void> {
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
    c.l.p = (await c.trx
      .updateTable('proposals')
      .set({
        status: c.row.to,
        selected_slot_id: p.selected_slot_id,
        resolution: p.resolution === null ? null : JSON.stringify(p.resolution),
        booking_error: p.booking_error,
        updated_at: c.now,
        resolved_at: final && c.row.to !== 'cancelled' ? c.now : p.resolved_at,
      })
      .where('id', '=', p.id)
      .returningAll()
      .executeTakeFirstOrThrow()) as ProposalRow;
  }

  private async effect(c: Change, effect: Effect): Promise<void> {
    const { trx, l } = c;
    switch (effect) {
      case 'record_answer': {
        const me = c.responder!;
        const response =
          c.row.action === 'accept' ? 'accepted' : c.row.action === 'reject' ? 'rejected' : 'countered';
        const updated = (await trx
          .updateTable('proposal_participants')
          .set({
            response,
            message: c.message,
            responded_at: c.now,
            ...(c.viaToken ? { token_used_at: c.now } : {}),
          })
          .where('id', '=', me.id)
          .returningAll()
          .executeTakeFirstOrThrow()) as ParticipantRow;
        l.participants = l.participants.map((x) => (x.id === me.id ? updated : x));
        if (c.slotId !== null && l.p.selected_slot_id === null) l.p = { ...l.p, selected_slot_id: c.slotId };
        return;
      }
      case 'record_vote': {
        if (c.openVoter) {
          const inserted = (await trx
            .insertInto('proposal_participants')
            .values({
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
            })
            .onConflict((oc) =>
              oc.expression(sql`proposal_id, lower(email)`).where('email', 'is not', null).doNothing(),
            )
            .returningAll()
            .executeTakeFirst()) as ParticipantRow | undefined;
          if (!inserted) {
            throw new Conflict('This e-mail address has already voted in this poll', {
              code: 'already_voted',
            });
          }
          l.participants = [...l.participants, inserted];
        } else {
          const me = c.responder!;
          const updated = (await trx
            .updateTable('proposal_participants')
            .set({
              response: 'voted',
              voted_slot_id: c.slotId,
              message: c.message,
              responded_at: c.now,
              token_used_at: c.now,
            })
            .where('id', '=', me.id)
            .returningAll()
            .executeTakeFirstOrThrow()) as ParticipantRow;
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
        const requester = c.pre.contacts.get(l.p.requester_id);
        const input = {
          proposalId: l.p.id,
          principals,
          slot: { start: slot.start_time.getTime(), end: slot.end_time.getTime() },
          customer: {
            name: requester?.name || 'Kairos',
            email: requester?.email ?? addressOf(this.deps.config.mailFrom),
            timezone: c.pre.profiles.get(l.p.requester_id)?.timezone ?? null,
          },
          notes: l.p.title ?? l.p.message,
          metadata: l.p.metadata,
          title: l.p.title ?? meetingWith(ids.map((id) => c.pre.contacts.get(id)?.name ?? '')),
        };
        if (l.p.mode === 'standard') {
          // All or nothing: a taken time fails the accept (409 slot_unavailable), nothing is stored.
          await this.deps.bookings.bookMeeting(trx, input);
        } else {
          // A poll resolves whatever happens to the requester's time; a taken time is recorded.
          await sql`SAVEPOINT poll_booking`.execute(trx);
          try {
            await this.deps.bookings.bookMeeting(trx, input);
            await sql`RELEASE SAVEPOINT poll_booking`.execute(trx);
          } catch (err) {
            if (!isExclusionViolation(err)) throw err;
            await sql`ROLLBACK TO SAVEPOINT poll_booking`.execute(trx);
            l.p = { ...l.p, booking_error: 'slot_unavailable' };
            return;
          }
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
        const built = await this.insertProposal(trx, {
          now: c.now,
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
        await this.deps.mail.enqueue(trx, [
          this.mails.invitationMail(
            built.l,
            c.pre.contacts.get(counterer.id)?.name ?? 'A participant',
            c.pre.contacts.get(original.id)?.email ?? null,
            c.pre.contacts.get(original.id)?.name ?? '',
            c.counterToken!,
            `principal ${original.id}`,
          ),
        ]);
        return;
      }
      case 'mail_requester':
        await this.deps.mail.enqueue(trx, [this.mails.requesterMail(c)]);
        return;
      case 'mail_everyone':
        await this.deps.mail.enqueue(trx, this.mails.everyoneMails(c));
        return;
      case 'mail_withdrawn':
        await this.deps.mail.enqueue(trx, this.mails.withdrawnMails(c));
        return;
      case 'mail_voters':
        await this.deps.mail.enqueue(trx, this.mails.resultMails(c));
        return;
      case 'event:proposal.created':
        if (c.counter) await this.emit(trx, 'proposal.created', c.counter);
        return;
      case 'event:proposal.countered':
        await this.emit(
          trx,
          'proposal.countered',
          l,
          c.counter ? { counter_proposal: presentProposal(c.counter) } : {},
        );
        return;
      case 'event:proposal.resolved': {
        const r = l.p.resolution!;
        await emitEvent(trx, this.deps.clock, {
          accountId: l.p.requester_account_id,
          recipientPrincipalId: l.p.requester_id,
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
        await this.emit(trx, effect.slice('event:'.length) as EventName, l);
        return;
    }
  }

  /** A proposal event to every party's account (once per account); a poll's go to the requester only. */
  private async emit(
    trx: Tx,
    type: EventName,
    l: Loaded,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    const accounts = new Set([l.p.requester_account_id]);
    for (const x of l.participants) if (x.account_id) accounts.add(x.account_id);
    const data = { proposal: presentProposal(l), ...extra };
    for (const accountId of accounts) await emitEvent(trx, this.deps.clock, { accountId, type, data });
  }

  // ---- helpers -------------------------------------------------------------------------------------

  private slotsOf(input: SlotIn[], field: string, nowMs: number, errors: Record<string, string>): Interval[] {
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

  private async actor(caller: Actor, principalId: string | undefined): Promise<PrincipalRef> {
    const id = (principalId ?? caller.principalId).toLowerCase();
    const p = isUuid(id) ? await this.deps.principals.access.actingFor(caller, id) : null;
    if (!p) throw new Forbidden('The principal does not exist or this caller may not act for it');
    return p;
  }

  private async row(id: string): Promise<ProposalRow | undefined> {
    if (!isPrefixedId(id) || !id.startsWith('prop_')) return undefined;
    return (await this.deps.db.selectFrom('proposals').selectAll().where('id', '=', id).executeTakeFirst()) as
      | ProposalRow
      | undefined;
  }

  /** A proposal the caller is a party of (acts for its requester or a principal participant), else 404. */
  private async visible(caller: Actor, id: string): Promise<Loaded> {
    const p = await this.row(id);
    if (p) {
      const [l] = await this.loadMany(this.deps.db, [p]);
      if (await this.actsForAny(caller, partiesOf(l!))) return l!;
    }
    throw proposalNotFound();
  }

  private async isParty(caller: Actor, p: ProposalRow): Promise<boolean> {
    const ids = [p.requester_id, ...(await this.participantPrincipals(p.id)).map((x) => x.principal_id!)];
    return this.actsForAny(caller, ids);
  }

  private async actsForAny(caller: Actor, ids: readonly string[]): Promise<boolean> {
    if (ids.includes(caller.principalId)) return true;
    for (const id of ids) if (await this.deps.principals.access.actingFor(caller, id)) return true;
    return false;
  }

  /** Slots and participants of proposals: two queries, whatever the count. */
  private async loadMany(db: Db | Tx, ps: readonly ProposalRow[]): Promise<Loaded[]> {
    if (ps.length === 0) return [];
    const ids = ps.map((p) => p.id);
    const [slots, participants] = await Promise.all([
      db
        .selectFrom('proposal_slots')
        .selectAll()
        .where('proposal_id', 'in', ids)
        .orderBy('position')
        .execute(),
      db
        .selectFrom('proposal_participants')
        .selectAll()
        .where('proposal_id', 'in', ids)
        .orderBy('position')
        .execute(),
    ]);
    return ps.map((p) => ({
      p,
      slots: (slots as SlotRow[]).filter((s) => s.proposal_id === p.id),
      participants: (participants as ParticipantRow[]).filter((x) => x.proposal_id === p.id),
    }));
  }
}

type EventName =
  | 'proposal.created'
  | 'proposal.countered'
  | 'proposal.accepted'
  | 'proposal.rejected'
  | 'proposal.cancelled'
  | 'proposal.expired';

/** A change that was decided (only the reaper lets `decide` pass on one). */
function definite<T>(x: T | null): T {
  if (x === null) throw new Error('a proposal change was skipped where it cannot be');
  return x;
}

function organizerCannotRespond(): Forbidden {
  return new Forbidden('The requester of a proposal cannot answer it', { code: 'organizer_cannot_respond' });
}

function isLapsed(p: ProposalRow, nowMs: number): boolean {
  return p.status === 'expired' || (p.status === 'proposed' && p.expires_at.getTime() <= nowMs);
}
