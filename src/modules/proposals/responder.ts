/**
 * Who answers a proposal (docs/api.md#proposals-and-polls): a participant by its magic link, an open
 * poll's voter by the poll's link, or a party's own credential (itself, or a principal it acts for).
 */
import type { Db } from '../../db/store.js';
import type { Actor } from '../../platform/actor.js';
import type { Caller } from '../../platform/auth.js';
import { isTokenShape, sha256Hex } from '../../platform/crypto.js';
import { ValidationFailed } from '../../platform/errors.js';
import type { PrincipalAccessApi } from '../principals/api.js';
import { invalidToken, organizerCannotRespond, proposalNotFound } from './errors.js';
import type { ProposalRow } from './present.js';
import * as repo from './repo.js';
import type { RespondBody } from './schemas.js';

/** Who answers: a participant row (principal or named invitee), or an open-poll voter. */
export type Responder = (
  | { kind: 'participant'; id: string; principalId: string | null; viaToken: boolean }
  | { kind: 'open'; name: string; email: string }
) & {
  /** The proposal's participants with a principal, when telling who answers read them (for prepare). */
  participants?: readonly { id: string; principal_id: string | null }[];
};

/** Who answers, from the token or the caller's credential (docs/api.md#proposals-and-polls). */
export async function responderOf(
  db: Db,
  access: Pick<PrincipalAccessApi, 'actingFor'>,
  caller: Caller,
  p: ProposalRow,
  body: RespondBody,
): Promise<Responder> {
  if (body.token !== undefined) {
    if (!isTokenShape(body.token)) throw invalidToken();
    const hash = sha256Hex(body.token);
    const pp = await repo.findParticipantByToken(db, p.id, hash);
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
  const actor: Actor = {
    accountId: caller.accountId,
    principalId: principal,
    livemode: caller.livemode,
    clock: caller.clock,
  };
  const ids = await repo.participantPrincipals(db, p.id);
  if (body.principal_id !== undefined) {
    const asked = body.principal_id.toLowerCase();
    if (asked === p.requester_id) throw organizerCannotRespond();
    const hit = ids.find((x) => x.principal_id === asked);
    if (hit && (await access.actingFor(actor, asked))) {
      return { kind: 'participant', id: hit.id, principalId: asked, viaToken: false, participants: ids };
    }
    throw proposalNotFound();
  }
  if (principal === p.requester_id) throw organizerCannotRespond();
  const mine: { id: string; principal_id: string | null }[] = [];
  for (const x of ids) {
    if (x.principal_id && (await access.actingFor(actor, x.principal_id))) mine.push(x);
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
  if (await access.actingFor(actor, p.requester_id)) throw organizerCannotRespond();
  if (p.mode === 'poll') throw invalidToken('Votes carry the poll link’s token');
  throw proposalNotFound();
}
