/**
 * SQL of the proposals module: proposals, their slots and their participants (tables.ts). Every
 * statement of the module is here; the use cases (service.ts) and the effects of a change (effects.ts)
 * call these.
 */
import { sql } from 'kysely';
import type { Db, Tx } from '../../db/store.js';
import type { Interval } from '../../lib/intervals.js';
import { randomToken, sha256Hex } from '../../platform/crypto.js';
import { prefixedId } from '../../platform/ids.js';
import { type CursorPosition, newestFirstAfter } from '../../platform/pagination.js';
import type { Loaded, ParticipantRow, ProposalRow, SlotRow } from './present.js';
import type { ProposalParticipantsTable, ProposalsTable } from './tables.js';
import type { Insertable, Updateable } from 'kysely';

type Queryable = Db | Tx;

/** What a new proposal is made of (a created one, or a counter-proposal). */
export interface NewProposal {
  now: Date;
  /** Its mode (docs/api.md#test-mode): the actor's, or a counter-proposal's parent's. */
  livemode: boolean;
  requester: { id: string; accountId: string };
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
}

/** A participant's magic link, as made when the proposal was written (only its hash is stored). */
export interface ParticipantToken {
  principalId: string | null;
  email: string | null;
  name: string;
  token: string;
}

/** Writes a proposal with its slots and participants; answers their tokens (and the open link). */
export async function insertProposal(
  trx: Tx,
  x: NewProposal,
): Promise<{ l: Loaded; tokens: ParticipantToken[]; openToken: string | null }> {
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
      livemode: x.livemode,
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
  const tokens: ParticipantToken[] = [];
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

/**
 * The proposals `principalId` is a party of (as requester, as participant, or either), optionally of
 * one status, newest first: `limit + 1` rows from after `after`.
 */
export async function listProposals(
  db: Queryable,
  principalId: string,
  livemode: boolean,
  q: { role?: 'requester' | 'participant'; status?: ProposalRow['status'] },
  after: CursorPosition | null,
  limit: number,
): Promise<ProposalRow[]> {
  let query = db.selectFrom('proposals').selectAll().where('livemode', '=', livemode);
  const asParticipant = sql<boolean>`id IN (SELECT proposal_id FROM proposal_participants WHERE principal_id = ${principalId})`;
  if (q.role === 'requester') query = query.where('requester_id', '=', principalId);
  else if (q.role === 'participant') query = query.where(asParticipant);
  else query = query.where(sql<boolean>`(requester_id = ${principalId} OR ${asParticipant})`);
  if (q.status) query = query.where('status', '=', q.status);
  return (await newestFirstAfter(query, after, limit).execute()) as ProposalRow[];
}

/** Every proposal of a thread, by creation time. */
export async function threadProposals(db: Queryable, threadId: string): Promise<ProposalRow[]> {
  return (await db
    .selectFrom('proposals')
    .selectAll()
    .where('thread_id', '=', threadId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()) as ProposalRow[];
}

/** The proposal a magic link's hash belongs to (a participant's link or an open poll's), or undefined. */
export async function findByTokenHash(
  db: Queryable,
  hash: string,
): Promise<{ p: ProposalRow; participantId: string | null } | undefined> {
  const { rows } = await sql<ProposalRow & { participant_id: string | null }>`
    SELECT p.*, pp.id AS participant_id FROM proposal_participants pp JOIN proposals p ON p.id = pp.proposal_id
    WHERE pp.token_hash = ${hash}
    UNION ALL
    SELECT p.*, NULL FROM proposals p WHERE p.open_token_hash = ${hash}
    LIMIT 1`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  const { participant_id, ...p } = row;
  return { p: p as ProposalRow, participantId: participant_id };
}

/** The status and expiry of the proposal a magic link's hash belongs to, or undefined (the `/p/` page). */
export async function findLinkState(
  db: Queryable,
  hash: string,
): Promise<Pick<ProposalRow, 'status' | 'expires_at' | 'livemode' | 'requester_account_id'> | undefined> {
  const viaParticipant = await db
    .selectFrom('proposal_participants as pp')
    .innerJoin('proposals as p', 'p.id', 'pp.proposal_id')
    .select(['p.status', 'p.expires_at', 'p.livemode', 'p.requester_account_id'])
    .where('pp.token_hash', '=', hash)
    .executeTakeFirst();
  return (
    viaParticipant ??
    (await db
      .selectFrom('proposals')
      .select(['status', 'expires_at', 'livemode', 'requester_account_id'])
      .where('open_token_hash', '=', hash)
      .executeTakeFirst())
  );
}

/** The participant of this proposal whose link has this hash, or undefined. */
export async function findParticipantByToken(db: Queryable, proposalId: string, hash: string) {
  return db
    .selectFrom('proposal_participants')
    .select(['id', 'principal_id', 'token_used_at'])
    .where('token_hash', '=', hash)
    .where('proposal_id', '=', proposalId)
    .executeTakeFirst();
}

/** The participants of a proposal that are principals (not named invitees or open voters). */
export async function participantPrincipals(
  db: Queryable,
  proposalId: string,
): Promise<{ id: string; principal_id: string | null }[]> {
  return db
    .selectFrom('proposal_participants')
    .select(['id', 'principal_id'])
    .where('proposal_id', '=', proposalId)
    .where('principal_id', 'is not', null)
    .execute();
}

export async function findProposal(db: Queryable, id: string): Promise<ProposalRow | undefined> {
  return (await db.selectFrom('proposals').selectAll().where('id', '=', id).executeTakeFirst()) as
    | ProposalRow
    | undefined;
}

/** Locks the proposal's row FOR UPDATE (skipping it if another transaction holds it, with `skipLocked`). */
export async function lockProposal(
  trx: Tx,
  id: string,
  opts: { skipLocked?: boolean } = {},
): Promise<ProposalRow | undefined> {
  let q = trx.selectFrom('proposals').selectAll().where('id', '=', id).forUpdate();
  if (opts.skipLocked) q = q.skipLocked();
  return (await q.executeTakeFirst()) as ProposalRow | undefined;
}

/**
 * Which proposals a pass of expiry looks at (docs/api.md#test-mode): the live ones (the server's
 * clock), or the test-mode ones of one requester's account (its test clock).
 */
export type DueScope = { livemode: true } | { livemode: false; accountId: string };

/** Open proposals of the scope past their `expires_at`, soonest first, at most `limit`. */
export async function findDue(
  db: Queryable,
  now: Date,
  limit: number,
  scope: DueScope,
): Promise<ProposalRow[]> {
  return (await findDueQuery(db, now, limit, scope).execute()) as ProposalRow[];
}

/**
 * Read through `proposals_due_idx`: the status is a literal, as the index's condition must be for a
 * prepared statement's generic plan to use it.
 */
export function findDueQuery(db: Queryable, now: Date, limit: number, scope: DueScope) {
  let q = db
    .selectFrom('proposals')
    .selectAll()
    .where('status', '=', sql.lit('proposed'))
    .where('expires_at', '<=', now)
    .where('livemode', '=', scope.livemode);
  if (!scope.livemode) q = q.where('requester_account_id', '=', scope.accountId);
  return q.orderBy('expires_at').limit(limit);
}

/** The earliest `expires_at` at or before `until` of the account's open test-mode proposals, or null. */
export async function nextTestDue(db: Queryable, accountId: string, until: Date): Promise<Date | null> {
  const row = await db
    .selectFrom('proposals')
    .select((eb) => eb.fn.min('expires_at').as('due'))
    .where('status', '=', sql.lit('proposed'))
    .where('expires_at', '<=', until)
    .where('livemode', '=', false)
    .where('requester_account_id', '=', accountId)
    .executeTakeFirst();
  return row?.due ? new Date(row.due) : null;
}

/** Stores a proposal's changed columns; answers the row as stored. */
export async function updateProposal(
  trx: Tx,
  id: string,
  set: Updateable<ProposalsTable>,
): Promise<ProposalRow> {
  return (await trx
    .updateTable('proposals')
    .set(set)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()) as ProposalRow;
}

/** Stores a participant's answer or vote; answers the row as stored. */
export async function updateParticipant(
  trx: Tx,
  id: string,
  set: Updateable<ProposalParticipantsTable>,
): Promise<ParticipantRow> {
  return (await trx
    .updateTable('proposal_participants')
    .set(set)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()) as ParticipantRow;
}

/** Adds an open poll's voter; undefined when this e-mail address (case-insensitively) already voted. */
export async function insertOpenVoter(
  trx: Tx,
  row: Insertable<ProposalParticipantsTable>,
): Promise<ParticipantRow | undefined> {
  return (await trx
    .insertInto('proposal_participants')
    .values(row)
    .onConflict((oc) =>
      oc.expression(sql`proposal_id, lower(email)`).where('email', 'is not', null).doNothing(),
    )
    .returningAll()
    .executeTakeFirst()) as ParticipantRow | undefined;
}

/** Slots and participants of proposals: two queries, whatever the count. */
export async function loadMany(db: Queryable, ps: readonly ProposalRow[]): Promise<Loaded[]> {
  if (ps.length === 0) return [];
  const ids = ps.map((p) => p.id);
  const [slots, participants] = await Promise.all([
    db.selectFrom('proposal_slots').selectAll().where('proposal_id', 'in', ids).orderBy('position').execute(),
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
