/**
 * Multi-party proposals and polls (docs/api.md#proposals-and-polls; docs/design.md#proposals-and-polls).
 *
 * Every change of a proposal runs in one transaction that first locks the proposal's row, re-reads its
 * status, and looks the change up in the state machine of src/lib/proposals.ts: the row found names
 * the next status and the effects (answers, votes, bookings, calendar writes, mails, events), which
 * run in that same transaction. Answers, votes, the requester's close, a cancel and the reaper are
 * therefore applied one at a time, whatever process they come from: a poll resolves once, an accepted
 * proposal books once, and each change emits its events once. A magic-link token is marked used in the
 * transaction of the answer it carries, so an answer that fails leaves it usable.
 */
import { publicName } from '../../lib/mail-text.js';
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import type { Interval } from '../../lib/intervals.js';
import { type ProposalAction, type Transition, transition } from '../../lib/proposals.js';
import type { Actor } from '../../platform/actor.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { isTokenShape, sha256Hex } from '../../platform/crypto.js';
import { AppError, Conflict, Forbidden, NotFound, ValidationFailed } from '../../platform/errors.js';
import { isPrefixedId, isUuid, prefixedId } from '../../platform/ids.js';
import { decodeCursor, page } from '../../platform/pagination.js';
import type { ProposalLinkState } from '../pages/api.js';
import type { PrincipalRef } from '../principals/api.js';
import type { Platform } from '../module.js';
import type { TimedWork } from '../test-clock/api.js';
import type { ProposalsApi, ProposalsNeeds } from './api.js';
import { type Change, type Decision, ProposalEffects, type Prepared } from './effects.js';
import { invalidToken, notOpen, proposalNotFound, tokenExpired } from './errors.js';
import { acceptedSlot, createInput, respondInput } from './input.js';
import { responderOf } from './responder.js';
import { ProposalMails } from './mails.js';
import { type Loaded, partiesOf, presentProposal, presentPublic, type ProposalRow } from './present.js';
import * as repo from './repo.js';
import type { CreateProposalBody, ProposalsQuery, RespondBody } from './schemas.js';

export class ProposalService implements ProposalsApi {
  private readonly mails: ProposalMails;
  private readonly effects: ProposalEffects;
  private readonly db: Db;
  private readonly clock: Clock;

  constructor(
    private readonly platform: Pick<Platform, 'db' | 'clock' | 'config' | 'log' | 'testClocks'>,
    private readonly needs: ProposalsNeeds,
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.mails = new ProposalMails(platform.config);
    this.effects = new ProposalEffects({
      clock: platform.clock,
      config: platform.config,
      mail: needs.mail,
      calendars: needs.calendars,
      bookings: needs.bookings,
      webhooks: needs.webhooks,
      mails: this.mails,
    });
  }

  // ---- create --------------------------------------------------------------------------------------

  /** POST /v1/proposals */
  async create(caller: Actor, body: CreateProposalBody) {
    const requester = await this.actor(caller, body.principal_id);
    const nowMs = caller.clock.nowMs();
    const { slots, participantIds, emails, expiresAt } = createInput(body, requester.id, nowMs);

    const profiles = await this.needs.principals.profiles(participantIds);
    if (body.mode === 'standard') {
      const unknown = participantIds.filter((x) => !profiles.has(x));
      if (unknown.length > 0) {
        throw new ValidationFailed({ participant_ids: `no principal ${unknown.join(', ')}` });
      }
      const allowed = await Promise.all(
        participantIds.map((x) =>
          this.needs.network.mayPropose(requester.id, x, caller.livemode, new Date(nowMs)),
        ),
      );
      const missing = participantIds.filter((_, i) => !allowed[i]);
      if (missing.length > 0) {
        throw new Forbidden(
          `Every participant must have granted you booking:propose (or be connected to you); missing: ${missing.join(', ')}`,
          { code: 'consent_required', participant_ids: missing },
        );
      }
    }
    if (!(await this.needs.calendars.isConnected(requester.id))) {
      throw new Conflict('Connect a calendar before proposing meetings', {
        code: 'calendar_disconnected_originator',
      });
    }
    const contacts = await this.needs.principals.contacts([requester.id, ...participantIds]);
    const now = new Date(nowMs);

    const made = await withTransaction(this.db, async (trx) => {
      const built = await repo.insertProposal(trx, {
        now,
        livemode: caller.livemode,
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
      // Read by invitees outside the account: a name, never an address.
      const requesterName = publicName(contacts.get(requester.id)?.name, 'Someone');
      await this.needs.mail.enqueue(
        trx,
        built.tokens.map((t) => ({
          ...(t.principalId === null
            ? this.mails.invitationMail(built.l, requesterName, t.email, t.name, t.token)
            : this.mails.invitationMail(
                built.l,
                requesterName,
                contacts.get(t.principalId)?.email ?? null,
                t.name,
                t.token,
                `principal ${t.principalId}`,
                contacts.get(t.principalId)?.timezone,
              )),
          livemode: caller.livemode,
        })),
      );
      await this.effects.emit(trx, 'proposal.created', built.l, now);
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

  // ---- read ----------------------------------------------------------------------------------------

  /** GET /v1/proposals */
  async list(caller: Actor, q: ProposalsQuery) {
    const me = await this.actor(caller, q.principal_id);
    const after = decodeCursor(q.cursor, { prefix: 'prop' });
    const rows = await repo.listProposals(this.db, me.id, caller.livemode, q, after, q.limit);
    const { items, pagination } = page(rows, q.limit);
    const loaded = await this.loadMany(this.db, items);
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
        ? (await repo.threadProposals(this.db, threadId)).filter((r) => r.livemode === caller.livemode)
        : [];
    // Oldest first; a counter made in the same millisecond as its parent still comes after it.
    const parent = new Map(rows.map((r) => [r.id, r.parent_id]));
    const depth = (id: string): number => {
      let n = 0;
      for (let at = parent.get(id); at; at = parent.get(at)) n++;
      return n;
    };
    rows.sort((x, y) => x.created_at.getTime() - y.created_at.getTime() || depth(x.id) - depth(y.id));
    const loaded = await this.loadMany(this.db, rows);
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
    const [l] = await this.loadMany(this.db, [found.p]);
    const requester = (await this.needs.principals.contacts([found.p.requester_id])).get(
      found.p.requester_id,
    );
    if (
      !requester ||
      !(await this.needs.principals.profiles([found.p.requester_id])).has(found.p.requester_id)
    ) {
      throw proposalNotFound();
    }
    if (isLapsed(found.p, (await this.clockOf(found.p)).nowMs())) throw tokenExpired();
    const viewer = found.participantId
      ? (l!.participants.find((x) => x.id === found.participantId) ?? null)
      : null;
    return { proposal: presentPublic(l!, requester.name, viewer) };
  }

  /**
   * What a magic link is now, for its page (extension point `proposalLinks`): unknown, lapsed (expired,
   * or still proposed past `expires_at`) or live. A used link stays live: the page shows the answer.
   */
  async linkState(token: string): Promise<ProposalLinkState> {
    if (!isTokenShape(token)) return 'unknown';
    const row = await repo.findLinkState(this.db, sha256Hex(token));
    if (!row) return 'unknown';
    return isLapsed(row, (await this.clockOf(row)).nowMs()) ? 'lapsed' : 'live';
  }

  private async byTokenHash(token: string): Promise<{ p: ProposalRow; participantId: string | null }> {
    if (!isTokenShape(token)) throw invalidToken();
    const found = await repo.findByTokenHash(this.db, sha256Hex(token));
    if (!found) throw invalidToken();
    return found;
  }

  // ---- answers -------------------------------------------------------------------------------------

  /** POST /v1/proposals/{id}/response */
  async respond(caller: Caller, id: string, body: RespondBody) {
    const p0 = await this.row(id);
    // A magic link acts in its proposal's mode; a credential finds only proposals of its own mode.
    if (!p0 || (body.token === undefined && p0.livemode !== caller.livemode)) throw proposalNotFound();
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
    const who = await responderOf(this.db, this.needs.principals.access, caller, p0, body);
    // Whoever answers, the proposal's mode's clock decides what has passed.
    const clock = await this.clockOf(p0);
    const nowMs = clock.nowMs();
    const { counterSlots, openVoter } = respondInput(body, p0.mode, who.kind === 'open', nowMs);

    // The consent may have gone since the proposal was made (docs/api.md#proposals-and-polls): read
    // now, before the lock.
    // A counter-proposal answers the one it counters: the requester's consent to the counterer is not asked.
    const consentRevoked =
      p0.mode === 'standard' &&
      p0.parent_id === null &&
      body.action === 'accept' &&
      who.kind === 'participant' &&
      who.principalId !== null
        ? !(await this.needs.network.mayPropose(
            p0.requester_id,
            who.principalId,
            p0.livemode,
            new Date(nowMs),
          ))
        : false;
    const pre = await this.prepare(p0, who.participants);
    const action: ProposalAction = p0.mode === 'poll' ? 'vote' : body.action;
    const result = await this.change(p0.id, pre, clock, async (_trx, l) => {
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
        slotId = acceptedSlot(l, body.selected_slot_id, nowMs);
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

  private async participantPrincipals(proposalId: string) {
    return repo.participantPrincipals(this.db, proposalId);
  }

  /** POST /v1/proposals/{id}/close: the requester resolves a poll now. */
  async close(caller: Actor, id: string) {
    const found = await this.row(id);
    const p0 = found?.livemode === caller.livemode ? found : undefined;
    if (!p0 || !(await this.needs.principals.access.actingFor(caller, p0.requester_id))) {
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
        await this.change(p0.id, pre, caller.clock, async (_trx, l) => {
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
      !(await this.needs.principals.access.actingFor(caller, l0.p.requester_id))
    ) {
      throw new Forbidden('Only the requester withdraws an open proposal; a participant rejects it instead', {
        code: 'requester_only',
      });
    }
    const pre = await this.prepare(l0.p, l0.participants);
    return this.partyAnswer(
      definite(
        await this.change(l0.p.id, pre, caller.clock, async (_trx, l) => {
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

  /**
   * The reaper: live proposals past `expires_at` expire (standard) or resolve (polls). One pass, on the
   * server's clock; test-mode proposals are left to their account's test clock (`expiry`).
   */
  async expireDue(limit = 100): Promise<number> {
    return this.expireScope(this.clock, { livemode: true }, limit);
  }

  /**
   * Test mode's proposal and poll expiry (docs/api.md#test-clock), on each account's test clock: what
   * the reaper does to live ones, at the time each fell due (its events then, its mails suppressed).
   */
  readonly expiry: TimedWork = {
    name: 'proposal-expiry',
    nextDue: (accountId, until) => repo.nextTestDue(this.db, accountId, until),
    runDue: async (accountId, clock) => {
      while ((await this.expireScope(clock, { livemode: false, accountId }, 100)) === 100) {
        // A full page: there may be more due at this time.
      }
    },
  };

  /** One pass of expiry over the scope's proposals due at `clock`'s time; answers how many changed. */
  private async expireScope(clock: Clock, scope: repo.DueScope, limit: number): Promise<number> {
    const now = clock.now();
    const due = await repo.findDue(this.db, now, limit, scope);
    let done = 0;
    for (const p0 of due) {
      try {
        const pre = await this.prepare(p0);
        const changed = await this.change(
          p0.id,
          pre,
          clock,
          async (_trx, l) => {
            if (l.p.status !== 'proposed' || l.p.expires_at.getTime() > clock.nowMs()) return null;
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
        this.platform.log.error({ err, proposal_id: p0.id }, 'proposal expiry failed; the next pass retries');
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
      this.needs.principals.profiles(ids),
      this.needs.principals.contacts(ids),
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
    /** The clock of the proposal's mode (its changes are stamped with its time). */
    clock: Clock,
    decide: (trx: Tx, l: Loaded) => Promise<Decision | null>,
    opts: { skipLocked?: boolean } = {},
  ) {
    let touched: string[] = [];
    let outcome: { l: Loaded; counter: Loaded | null; row: Transition } | null;
    try {
      outcome = await withTransaction(this.db, async (trx) => {
        const p = await repo.lockProposal(trx, id, opts);
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
          now: clock.now(),
          booked: [],
          freed: [],
          inCalendar: new Set(),
          counter: null,
          counterToken: null,
        };
        await this.effects.apply(c);
        touched = [...c.booked, ...c.freed];
        return { l: c.l, counter: c.counter, row: c.row };
      });
    } finally {
      if (touched.length > 0) this.needs.bookings.busyChanged(touched);
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

  // ---- helpers -------------------------------------------------------------------------------------

  private async actor(caller: Actor, principalId: string | undefined): Promise<PrincipalRef> {
    const id = (principalId ?? caller.principalId).toLowerCase();
    const p = isUuid(id) ? await this.needs.principals.access.actingFor(caller, id) : null;
    if (!p) throw new Forbidden('The principal does not exist or this caller may not act for it');
    return p;
  }

  /** The clock of a proposal's mode: the server's, or its requester's account's test clock. */
  private clockOf(p: Pick<ProposalRow, 'livemode' | 'requester_account_id'>): Promise<Clock> {
    return this.platform.testClocks.clockFor(p.requester_account_id, p.livemode);
  }

  private async row(id: string): Promise<ProposalRow | undefined> {
    if (!isPrefixedId(id) || !id.startsWith('prop_')) return undefined;
    return repo.findProposal(this.db, id);
  }

  /** A proposal the caller is a party of (acts for its requester or a principal participant), else 404. */
  private async visible(caller: Actor, id: string): Promise<Loaded> {
    const p = await this.row(id);
    if (p && p.livemode === caller.livemode) {
      const [l] = await this.loadMany(this.db, [p]);
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
    for (const id of ids) if (await this.needs.principals.access.actingFor(caller, id)) return true;
    return false;
  }

  private loadMany(db: Db | Tx, ps: readonly ProposalRow[]): Promise<Loaded[]> {
    return repo.loadMany(db, ps);
  }
}

/** A change that was decided (only the reaper lets `decide` pass on one). */
function definite<T>(x: T | null): T {
  if (x === null) throw new Error('a proposal change was skipped where it cannot be');
  return x;
}

function isLapsed(p: Pick<ProposalRow, 'status' | 'expires_at'>, nowMs: number): boolean {
  return p.status === 'expired' || (p.status === 'proposed' && p.expires_at.getTime() <= nowMs);
}
