/**
 * Consents and the network (docs/api.md#consents, #network; docs/design.md#consents-and-the-network).
 *
 * A consent lets a grantee read a grantor's free/busy time (`availability:read:freebusy`), its event
 * details (`availability:read:details`) or propose meetings to it (`booking:propose`). Granting again
 * merges scopes into the one active consent of the pair (one statement, `ON CONFLICT` on a partial
 * unique index: racing grants end in one consent). A connection (an accepted invitation) grants
 * `booking:propose` both ways and makes each readable to the other. Access is decided from the
 * database on every request: a revocation holds for the very next request in every process.
 */
import { publicName } from '../../lib/mail-text.js';
import type { Config } from '../../config.js';
import { type Db, type Tx, withTransaction } from '../../db/store.js';
import type { Actor } from '../../platform/actor.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { isTokenShape, randomToken, sha256Hex } from '../../platform/crypto.js';
import { AppError, Conflict, Forbidden, NotFound, ValidationFailed } from '../../platform/errors.js';
import { isPrefixedId, isUuid, prefixedId } from '../../platform/ids.js';
import { decodeCursor, encodeCursor } from '../../platform/pagination.js';
import { isEmailAddress, isIsoInstant } from '../../platform/validation.js';
import type { MailMessage } from '../mail/api.js';
import { Batcher } from '../../lib/batcher.js';
import { htmlBody } from '../../lib/mail-text.js';
import type { AccessGrant, AccessRule, PrincipalRef } from '../principals/api.js';
import type { Platform } from '../module.js';
import type { TimedWork } from '../test-clock/api.js';
import type { InvitationSummary, NetworkApi, NetworkNeeds } from './api.js';
import * as repo from './repo.js';
import type { ConsentRow, InvitationRow } from './repo.js';
import {
  type ConnectionsQuery,
  type ConsentsQuery,
  type GrantBody,
  type InvitationsQuery,
  type InviteBody,
  type InviteManyBody,
  SCOPES,
} from './schemas.js';
import { DAY, isoOrNull } from '../../lib/time.js';

const INVITATION_DAYS = 7;

/** A consent as the API shows it; an active consent past its end shows `expired`. */
export function presentConsent(c: ConsentRow, nowMs: number) {
  const lapsed = c.status === 'active' && c.expires_at !== null && new Date(c.expires_at).getTime() <= nowMs;
  return {
    id: c.id,
    grantor_id: c.grantor_id,
    grantee_id: c.grantee_id,
    scopes: c.scopes,
    status: lapsed ? ('expired' as const) : c.status,
    expires_at: isoOrNull(c.expires_at),
    created_at: isoOrNull(c.created_at) as string,
    revoked_at: isoOrNull(c.revoked_at),
    livemode: c.livemode,
  };
}

function presentInvitation(i: InvitationRow, nowMs: number) {
  const lapsed = i.status === 'pending' && new Date(i.expires_at).getTime() <= nowMs;
  return {
    id: i.id,
    invitee_email: i.invitee_email,
    invitee_name: i.invitee_name,
    relationship_type: i.relationship_type,
    status: lapsed ? ('expired' as const) : i.status,
    expires_at: isoOrNull(i.expires_at) as string,
    created_at: isoOrNull(i.created_at) as string,
    livemode: i.livemode,
  };
}

export class NetworkService implements NetworkApi {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Pick<Config, 'baseUrl'>;

  private readonly testClocks: Pick<Platform['testClocks'], 'clockFor'>;

  constructor(
    platform: Pick<Platform, 'db' | 'clock' | 'config' | 'testClocks'>,
    private readonly needs: NetworkNeeds,
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.config = platform.config;
    this.testClocks = platform.testClocks;
  }

  /** The principal a request acts as: the caller's own, or (`principal_id`) one it may act for. */
  async actor(caller: Actor, principalId: string | undefined): Promise<PrincipalRef> {
    const id = (principalId ?? caller.principalId).toLowerCase();
    const p = isUuid(id) ? await this.needs.principals.access.actingFor(caller, id) : null;
    if (!p) throw new Forbidden('The principal does not exist or this caller may not act for it');
    return p;
  }

  // ---- consents ---------------------------------------------------------------------------------

  /** POST /v1/consents: grant, or merge scopes into the active consent of the pair. */
  async grant(
    caller: Actor,
    body: GrantBody,
  ): Promise<{ created: boolean; consent: ReturnType<typeof presentConsent> }> {
    const errors: Record<string, string> = {};
    const bad = body.scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (bad.length > 0) errors.scopes = `unknown scope ${bad.join(', ')}; allowed: ${SCOPES.join(', ')}`;
    if (body.scopes.length === 0) errors.scopes = `must name at least one of ${SCOPES.join(', ')}`;
    const nowMs = caller.clock.nowMs();
    let expiresAt: Date | null = null;
    if (body.expires_at !== undefined) {
      const t = Date.parse(body.expires_at);
      if (!isIsoInstant(body.expires_at) || !Number.isFinite(t)) {
        errors.expires_at = 'must be an ISO 8601 instant with an offset';
      } else if (t <= nowMs) errors.expires_at = 'must be in the future';
      else expiresAt = new Date(t);
    }
    if (!isUuid(body.grantee_id)) errors.grantee_id = 'must be a principal id (UUID)';
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
    const grantor = await this.actor(caller, body.principal_id);
    const granteeId = body.grantee_id.toLowerCase();
    if (granteeId === grantor.id) throw new ValidationFailed({ grantee_id: 'cannot be the grantor itself' });
    const grantee = (await this.needs.principals.profiles([granteeId])).get(granteeId);
    if (!grantee) throw new NotFound('No principal with this grantee_id');
    const scopes = [...new Set(body.scopes)].sort();
    const now = new Date(nowMs);
    return withTransaction(this.db, async (trx) => {
      // The active consent of the pair, locked; or a new one. A grant racing this one either waits on
      // the lock or loses the insert on the partial unique index and merges into the winner's row.
      for (let attempt = 0; attempt < 3; attempt++) {
        const active = await repo.lockActiveConsent(trx, grantor.id, grantee.id, caller.livemode);
        if (active) {
          const merged = [...new Set([...active.scopes, ...scopes])].sort();
          const later = expiresAt ?? active.expires_at;
          const same =
            merged.length === active.scopes.length &&
            (later === null
              ? active.expires_at === null
              : new Date(later).getTime() === active.expires_at?.getTime());
          if (same) return { created: false, consent: presentConsent(active, nowMs) };
          const updated = await repo.updateConsentGrant(trx, active.id, {
            scopes: merged,
            expires_at: later,
            updated_at: now,
          });
          await this.announce(trx, 'consent.granted', updated, now);
          return { created: false, consent: presentConsent(updated, nowMs) };
        }
        const inserted = await repo.insertConsent(trx, {
          id: prefixedId('cons', nowMs),
          grantor_id: grantor.id,
          grantee_id: grantee.id,
          grantor_account_id: grantor.accountId,
          grantee_account_id: grantee.accountId,
          scopes,
          status: 'active',
          expires_at: expiresAt,
          created_at: now,
          updated_at: now,
          revoked_at: null,
          livemode: caller.livemode,
        });
        if (inserted) {
          await this.announce(trx, 'consent.granted', inserted, now);
          return { created: true, consent: presentConsent(inserted, nowMs) };
        }
      }
      throw new Conflict('The consent changed concurrently; retry', { code: 'consent_conflict' });
    });
  }

  /** GET /v1/consents */
  async listConsents(caller: Actor, q: ConsentsQuery) {
    const me = await this.actor(caller, q.principal_id);
    const after = decodeCursor(q.cursor, { prefix: 'cons' });
    const now = caller.clock.now();
    const rows = await repo.listConsents(
      this.db,
      me.id,
      {
        ...(q.role ? { role: q.role } : {}),
        activeOnly: q.active_only === true,
        livemode: caller.livemode,
      },
      now,
      after,
      q.limit,
    );
    const hasMore = rows.length > q.limit;
    const items = hasMore ? rows.slice(0, q.limit) : rows;
    const last = items[items.length - 1];
    return {
      consents: items.map((c) => presentConsent(c, now.getTime())),
      pagination: {
        next_cursor: hasMore && last ? encodeCursor({ at: last.created_at, id: last.id }) : null,
        has_more: hasMore,
      },
    };
  }

  /** GET /v1/consents/{id}: a party's consent; anything else is 404. */
  async getConsent(caller: Actor, id: string) {
    return { consent: presentConsent(await this.party(caller, id), caller.clock.nowMs()) };
  }

  /** DELETE /v1/consents/{id}: the grantor revokes, or the grantee gives it up; once. */
  async revoke(caller: Actor, id: string) {
    const c = await this.party(caller, id);
    const nowMs = caller.clock.nowMs();
    if (c.status !== 'active') return { consent: presentConsent(c, nowMs) };
    const row = await withTransaction(this.db, async (trx) => {
      const revoked = await repo.revokeConsent(trx, id, new Date(nowMs));
      if (revoked) await this.announce(trx, 'consent.revoked', revoked, new Date(nowMs));
      return revoked;
    });
    return { consent: presentConsent(row ?? c, nowMs) };
  }

  /**
   * Marks live consents past their end `expired`, with consent.revoked (the reaper, every 30 s, on the
   * server's clock). Test-mode consents are left to their account's test clock (`consentExpiry`).
   */
  async expireConsents(): Promise<number> {
    const now = this.clock.now();
    return withTransaction(this.db, async (trx) => {
      const rows = await repo.expireConsents(trx, now, { livemode: true });
      for (const r of rows) await this.announce(trx, 'consent.revoked', r, now);
      return rows.length;
    });
  }

  /**
   * Test mode's consent expiry (docs/api.md#test-clock), on each account's test clock: the test-mode
   * consents the account granted expire at their end, with consent.revoked stamped then.
   */
  readonly consentExpiry: TimedWork = {
    name: 'consent-expiry',
    nextDue: (accountId, until) => repo.nextTestConsentEnd(this.db, accountId, until),
    runDue: async (accountId, clock) => {
      const now = clock.now();
      await withTransaction(this.db, async (trx) => {
        const rows = await repo.expireConsents(trx, now, { livemode: false, grantorAccountId: accountId });
        for (const r of rows) await this.announce(trx, 'consent.revoked', r, now);
      });
    },
  };

  /** A consent the caller is a party of (acting for grantor or grantee), else 404. */
  private async party(caller: Actor, id: string): Promise<ConsentRow> {
    const c =
      isPrefixedId(id) && id.startsWith('cons_')
        ? await repo.findConsent(this.db, id, caller.livemode)
        : undefined;
    if (c) {
      const [grantor, grantee] = await Promise.all([
        this.needs.principals.access.actingFor(caller, c.grantor_id),
        this.needs.principals.access.actingFor(caller, c.grantee_id),
      ]);
      if (grantor || grantee) return c;
    }
    throw new NotFound('No consent with this id');
  }

  /**
   * consent.granted / consent.revoked to both parties' accounts (once when they share one), of the
   * consent's mode, at `at` (the time of the clock the change ran on).
   */
  private async announce(
    trx: Tx,
    type: 'consent.granted' | 'consent.revoked',
    c: ConsentRow,
    at: Date,
  ): Promise<void> {
    const consent = presentConsent(c, at.getTime());
    for (const accountId of new Set([c.grantor_account_id, c.grantee_account_id])) {
      await this.needs.webhooks.emit(trx, { accountId, type, data: { consent }, livemode: c.livemode, at });
    }
  }

  // ---- the access rule ---------------------------------------------------------------------------

  /**
   * Principals connected to the caller, and principals who granted it `availability:read:freebusy`
   * (active, not past its end). With a `consent_id`, only that consent counts: the caller's own,
   * active, of those principals.
   */
  readonly accessRule: AccessRule = async (caller: Caller, input) => {
    const out = new Map<string, AccessGrant>();
    const me = caller.principalId;
    if (me === null || (caller.kind !== 'secret' && caller.kind !== 'session')) return out;
    // Only the connections and consents of the caller's mode grant (docs/api.md#test-mode).
    const livemode = caller.livemode;
    const now = caller.clock.now();
    const consentId = input.consentId;
    if (consentId !== null) {
      if (!isPrefixedId(consentId)) return out;
      const found = await Promise.all(
        input.principals.map((p) => this.consentReads.ask({ me, id: p.id, livemode, now, consentId })),
      );
      for (const c of found) {
        if (c === null) continue;
        out.set(c.grantor_id, {
          basis: 'consent',
          consentId: c.id,
          details: c.scopes.includes('availability:read:details'),
        });
      }
      return out;
    }
    const grants = await Promise.all(
      input.principals.map((p) => this.grantReads.ask({ me, id: p.id, livemode, now })),
    );
    input.principals.forEach((p, i) => {
      const ways = grants[i]!;
      if (ways.length === 0) return;
      // Either way is enough to read; details come only with a consent that grants them.
      const network = ways.some((w) => w.basis === 'network');
      const consent = ways.find((w) => w.basis === 'consent');
      out.set(p.id, {
        basis: network ? 'network' : 'consent',
        consentId: network ? null : (consent?.consent_id ?? null),
        details: ways.some((w) => w.details),
      });
    });
    return out;
  };

  /**
   * The access rule's reads, asked together by the requests of one turn (lib/batcher.ts): each is
   * answered by a statement that starts after it was asked, so a revocation still holds for the next
   * request, and concurrent readers share one round trip.
   */
  private readonly grantReads = new Batcher<repo.ReadQuestion, repo.ReadGrantRow[]>(async (qs) => {
    const answers: repo.ReadGrantRow[][] = qs.map(() => []);
    for (const r of await repo.readGrants(this.db, qs)) answers[r.i]!.push(r);
    return answers;
  });

  private readonly consentReads = new Batcher<
    repo.ReadQuestion & { consentId: string },
    repo.ReadConsentRow | null
  >(async (qs) => {
    const answers: (repo.ReadConsentRow | null)[] = qs.map(() => null);
    for (const r of await repo.readConsents(this.db, qs)) answers[r.i] = r;
    return answers;
  });

  /**
   * May `from` propose meetings to `to` in mode `livemode` at `now` (the time of that mode): connected,
   * or `to` granted `from` booking:propose, in that mode.
   */
  async mayPropose(from: string, to: string, livemode: boolean, now: Date): Promise<boolean> {
    return repo.mayPropose(this.db, from, to, livemode, now);
  }

  // ---- the network ---------------------------------------------------------------------------------

  /** GET /v1/network */
  async connections(caller: Actor, q: ConnectionsQuery) {
    const me = await this.actor(caller, q.principal_id);
    const after = decodeCursor(q.cursor, 'uuid');
    const rows = await repo.listConnections(this.db, me.id, caller.livemode, after, q.limit);
    const hasMore = rows.length > q.limit;
    const items = hasMore ? rows.slice(0, q.limit) : rows;
    const contacts = await this.needs.principals.contacts(items.map((r) => r.principal_id));
    const last = items[items.length - 1];
    return {
      connections: items.map((r) => ({
        principal_id: r.principal_id,
        display_name: contacts.get(r.principal_id)?.name ?? '',
        relationship_type: r.relationship_type,
        connected_at: isoOrNull(r.connected_at) as string,
        livemode: r.livemode,
      })),
      pagination: {
        next_cursor: hasMore && last ? encodeCursor({ at: last.connected_at, id: last.principal_id }) : null,
        has_more: hasMore,
      },
    };
  }

  /** GET /v1/network/invitations: the invitations the caller sent, newest first. */
  async invitations(caller: Actor, q: InvitationsQuery) {
    const me = await this.actor(caller, q.principal_id);
    const nowMs = caller.clock.nowMs();
    const rows = await repo.listInvitations(this.db, {
      inviter: me.id,
      livemode: caller.livemode,
      status: q.status,
      now: new Date(nowMs),
      after: decodeCursor(q.cursor, { prefix: 'inv' }),
      limit: q.limit,
    });
    const hasMore = rows.length > q.limit;
    const items = hasMore ? rows.slice(0, q.limit) : rows;
    const last = items[items.length - 1];
    return {
      invitations: items.map((i) => presentInvitation(i, nowMs)),
      pagination: {
        next_cursor: hasMore && last ? encodeCursor({ at: last.created_at, id: last.id }) : null,
        has_more: hasMore,
      },
    };
  }

  /** DELETE /v1/network/{connected_id}: the connection goes, both ways. */
  async disconnect(caller: Actor, other: string, principalId?: string): Promise<void> {
    const me = await this.actor(caller, principalId);
    const id = other.toLowerCase();
    const gone = isUuid(id) ? await repo.deleteConnection(this.db, me.id, id, caller.livemode) : false;
    if (!gone) throw new NotFound('Not connected to this principal');
  }

  /**
   * POST /v1/network/invitations: a new invitation, or the pending one to the same address sent again
   * (a fresh token; the old link stops working). 409 when that address is already connected.
   */
  async invite(
    caller: Actor,
    body: InviteBody,
    opts: { sendEmail: boolean } = { sendEmail: true },
  ): Promise<{ created: boolean; invitation: ReturnType<typeof presentInvitation> }> {
    const inviter = await this.actor(caller, body.principal_id);
    const email = body.invitee_email.trim();
    if (!isEmailAddress(email) || email.length > 320) {
      throw new ValidationFailed({ invitee_email: 'must be an e-mail address' });
    }
    // Already connected to the user signing in with this address (the accounts module knows users).
    const userId = await this.needs.accounts.userIdByEmail(email);
    if (userId !== null && (await repo.connected(this.db, inviter.id, userId, caller.livemode))) {
      throw new Conflict('This address is already in your network', { code: 'already_connected' });
    }
    const token = randomToken(32);
    const nowMs = caller.clock.nowMs();
    const now = new Date(nowMs);
    const expiresAt = new Date(nowMs + INVITATION_DAYS * DAY);
    return withTransaction(this.db, async (trx) => {
      const { invitation, inserted } = await repo.upsertInvitation(trx, {
        id: prefixedId('inv', nowMs),
        inviter_id: inviter.id,
        inviter_account_id: inviter.accountId,
        invitee_email: email,
        invitee_name: body.invitee_name ?? null,
        relationship_type: body.relationship_type,
        message: body.message ?? null,
        token_hash: sha256Hex(token),
        expires_at: expiresAt,
        created_at: now,
        livemode: caller.livemode,
      });
      if (opts.sendEmail) {
        const inviterName =
          // Read by someone outside the account: a name, never an address.
          publicName((await this.needs.principals.contacts([inviter.id])).get(inviter.id)?.name, 'Someone');
        await this.needs.mail.enqueue(trx, [this.invitationMail(invitation, inviterName, token)]);
      }
      return { created: inserted, invitation: presentInvitation(invitation, nowMs) };
    });
  }

  /** POST /v1/network/invitations/bulk */
  async inviteMany(caller: Actor, body: InviteManyBody) {
    const invitations: ReturnType<typeof presentInvitation>[] = [];
    const skipped: { email: string; reason: string }[] = [];
    for (const c of body.contacts) {
      try {
        const r = await this.invite(
          caller,
          {
            invitee_email: c.email,
            ...(c.name !== undefined ? { invitee_name: c.name } : {}),
            relationship_type: body.relationship_type,
            ...(body.message !== undefined ? { message: body.message } : {}),
            ...(body.principal_id !== undefined ? { principal_id: body.principal_id } : {}),
          },
          { sendEmail: body.send_emails },
        );
        invitations.push(r.invitation);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500 || err.status === 403) throw err;
        skipped.push({
          email: c.email,
          reason: err.status === 409 ? 'already_connected' : 'invalid_email',
        });
      }
    }
    return { invitations, skipped };
  }

  /**
   * POST /v1/network/invitations/{token}/accept|decline: only a user session whose e-mail is the
   * invitation's (case-insensitively). A used or unknown token is 401, an expired one 410. The
   * invitation row is locked, so two accepts of one token make one connection.
   */
  async respond(caller: Caller, token: string, action: 'accept' | 'decline') {
    if (caller.kind !== 'session' || caller.userId === null) {
      throw new Forbidden('Invitations are answered by the invited user, signed in (a user session)', {
        code: 'auth_method_invalid',
      });
    }
    const userId = caller.userId;
    const email = await this.needs.accounts.userEmail(userId);
    const user = email === null ? undefined : { id: userId, email };
    const hash = isTokenShape(token) ? sha256Hex(token) : null;
    // The invitee answers in the invitation's mode, on that mode's clock (its inviter's account's).
    const seen = hash ? await repo.findInvitationByHash(this.db, hash) : undefined;
    const clock = seen ? await this.testClocks.clockFor(seen.inviter_account_id, seen.livemode) : this.clock;
    const nowMs = clock.nowMs();
    const now = new Date(nowMs);
    return withTransaction(this.db, async (trx) => {
      const inv = hash ? await repo.lockInvitationByHash(trx, hash) : undefined;
      if (inv?.status !== 'pending') {
        throw new AppError(401, 'unauthorized', 'This invitation link is not valid or was already used', {
          code: 'invitation_invalid',
        });
      }
      if (new Date(inv.expires_at).getTime() <= nowMs) {
        await repo.markInvitationExpired(trx, inv.id);
        throw new AppError(410, 'gone', 'This invitation has expired; ask for a new one', {
          code: 'invitation_expired',
        });
      }
      if (!user || user.email.toLowerCase() !== inv.invitee_email.toLowerCase()) {
        throw new Forbidden('This invitation was sent to another e-mail address', {
          code: 'auth_email_mismatch',
        });
      }
      if (user.id === inv.inviter_id) {
        throw new ValidationFailed({ token: 'is your own invitation' });
      }
      const status = action === 'accept' ? 'accepted' : 'declined';
      const updated = await repo.answerInvitation(trx, inv.id, {
        status,
        responded_at: now,
        accepted_by: action === 'accept' ? user.id : null,
      });
      if (action === 'accept') {
        await repo.insertConnection(trx, user.id, inv.inviter_id, {
          relationship_type: inv.relationship_type,
          invitation_id: inv.id,
          connected_at: now,
          livemode: inv.livemode,
        });
      }
      return { invitation: presentInvitation(updated, nowMs) };
    });
  }

  async invitationByToken(token: string): Promise<InvitationSummary | null> {
    if (!isTokenShape(token)) return null;
    const inv = await repo.findInvitationByHash(this.db, sha256Hex(token));
    if (!inv) return null;
    return {
      inviterId: inv.inviter_id,
      inviteeEmail: inv.invitee_email,
      inviteeName: inv.invitee_name,
      relationshipType: inv.relationship_type,
      message: inv.message,
      status: inv.status,
      expiresAt: inv.expires_at,
    };
  }

  private invitationMail(inv: InvitationRow, inviterName: string, token: string): MailMessage {
    const url = `${this.config.baseUrl}/invitations/${token}`;
    const lines = [
      `Hello${inv.invitee_name ? ` ${inv.invitee_name}` : ''},`,
      '',
      `${inviterName} invites you to connect on Kairos (${inv.relationship_type}).`,
      ...(inv.message ? ['', inv.message] : []),
      '',
      'Connected, you can see each other’s free time and propose meetings to each other.',
      `Accept or decline (sign in with this address): ${url}`,
      `The link works for ${INVITATION_DAYS} days.`,
    ];
    return {
      kind: 'network.invitation',
      subjectId: inv.id,
      to: inv.invitee_email,
      subject: `${inviterName} invites you to connect on Kairos`,
      text: lines.join('\n'),
      html: htmlBody(lines, url),
      invite: null,
      livemode: inv.livemode,
    };
  }
}
