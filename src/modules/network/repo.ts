/** SQL of the network module: consents, connections and invitations (tables.ts). */
import { type Insertable, type Selectable, sql } from 'kysely';
import type { Db, Tx } from '../../db/store.js';
import type { CursorPosition } from '../../platform/pagination.js';
import type { ConsentsTable, NetworkInvitationsTable } from './tables.js';

type Queryable = Db | Tx;

export type ConsentRow = Selectable<ConsentsTable>;
export type InvitationRow = Selectable<NetworkInvitationsTable>;

// ---------------------------------------------------------------------------------------------------
// Consents

/** The active consent of the pair in one mode, locked FOR UPDATE, or undefined. */
export async function lockActiveConsent(
  trx: Tx,
  grantorId: string,
  granteeId: string,
  livemode: boolean,
): Promise<ConsentRow | undefined> {
  return (await lockActiveConsentQuery(trx, grantorId, granteeId, livemode).executeTakeFirst()) as
    | ConsentRow
    | undefined;
}

/**
 * Found through `consents_one_active_idx`, not among every consent the grantor ever gave: the status
 * is a literal, as the index's condition must be for a prepared statement's generic plan to use it.
 */
export function lockActiveConsentQuery(trx: Tx, grantorId: string, granteeId: string, livemode: boolean) {
  return trx
    .selectFrom('consents')
    .selectAll()
    .where('grantor_id', '=', grantorId)
    .where('grantee_id', '=', granteeId)
    .where('livemode', '=', livemode)
    .where('status', '=', sql.lit('active'))
    .forUpdate();
}

export async function updateConsentGrant(
  trx: Tx,
  id: string,
  set: { scopes: string[]; expires_at: Date | null; updated_at: Date },
): Promise<ConsentRow> {
  return (await trx
    .updateTable('consents')
    .set(set)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()) as ConsentRow;
}

/** Inserts an active consent; undefined when the pair already has one in its mode (a racing grant won). */
export async function insertConsent(
  trx: Tx,
  row: Insertable<ConsentsTable>,
): Promise<ConsentRow | undefined> {
  return (await trx
    .insertInto('consents')
    .values(row)
    .onConflict((oc) =>
      // A literal, not a parameter: the arbiter is the partial index `WHERE status = 'active'`,
      // which a generic plan of the prepared statement must find (db/prepared.ts).
      oc
        .columns(['grantor_id', 'grantee_id', 'livemode'])
        .where('status', '=', sql.lit('active'))
        .doNothing(),
    )
    .returningAll()
    .executeTakeFirst()) as ConsentRow | undefined;
}

/**
 * The principal's consents of one mode (as grantor, grantee or either), oldest first: `limit + 1` rows
 * after `after`.
 */
export async function listConsents(
  db: Queryable,
  principalId: string,
  q: { role?: 'grantor' | 'grantee'; activeOnly: boolean; livemode: boolean },
  now: Date,
  after: CursorPosition | null,
  limit: number,
): Promise<ConsentRow[]> {
  let query = db.selectFrom('consents').selectAll().where('livemode', '=', q.livemode);
  if (q.role === 'grantor') query = query.where('grantor_id', '=', principalId);
  else if (q.role === 'grantee') query = query.where('grantee_id', '=', principalId);
  else
    query = query.where((eb) =>
      eb.or([eb('grantor_id', '=', principalId), eb('grantee_id', '=', principalId)]),
    );
  if (q.activeOnly) {
    query = query
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  }
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', after.at),
        eb.and([eb('created_at', '=', after.at), eb('id', '>', after.id)]),
      ]),
    );
  }
  return (await query
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit + 1)
    .execute()) as ConsentRow[];
}

/** A consent of one mode (another mode's is not found). */
export async function findConsent(
  db: Queryable,
  id: string,
  livemode: boolean,
): Promise<ConsentRow | undefined> {
  return (await db
    .selectFrom('consents')
    .selectAll()
    .where('id', '=', id)
    .where('livemode', '=', livemode)
    .executeTakeFirst()) as ConsentRow | undefined;
}

/** Revokes the consent if it is still active; undefined otherwise. */
export async function revokeConsent(trx: Tx, id: string, now: Date): Promise<ConsentRow | undefined> {
  return (await trx
    .updateTable('consents')
    .set({ status: 'revoked', revoked_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .returningAll()
    .executeTakeFirst()) as ConsentRow | undefined;
}

/**
 * Which consents a pass of expiry looks at (docs/api.md#test-mode): the live ones (the server's clock),
 * or the test-mode ones one account granted (its test clock).
 */
export type ExpiryScope = { livemode: true } | { livemode: false; grantorAccountId: string };

/** Marks active consents of the scope past their end `expired`; answers them. */
export async function expireConsents(trx: Tx, now: Date, scope: ExpiryScope): Promise<ConsentRow[]> {
  return (await expireConsentsQuery(trx, now, scope).execute()) as ConsentRow[];
}

/**
 * Found through `consents_expiry_idx`: the status is a literal, as the index's condition must be for
 * a prepared statement's generic plan to use it.
 */
export function expireConsentsQuery(trx: Tx, now: Date, scope: ExpiryScope) {
  let q = trx
    .updateTable('consents')
    .set({ status: 'expired', updated_at: now })
    .where('status', '=', sql.lit('active'))
    .where('expires_at', '<=', now)
    .where('livemode', '=', scope.livemode);
  if (!scope.livemode) q = q.where('grantor_account_id', '=', scope.grantorAccountId);
  return q.returningAll();
}

/** The earliest end at or before `until` of the account's active test-mode consents (timedWork), or null. */
export async function nextTestConsentEnd(
  db: Queryable,
  grantorAccountId: string,
  until: Date,
): Promise<Date | null> {
  const row = await db
    .selectFrom('consents')
    .select((eb) => eb.fn.min('expires_at').as('due'))
    .where('status', '=', sql.lit('active'))
    .where('expires_at', '<=', until)
    .where('livemode', '=', false)
    .where('grantor_account_id', '=', grantorAccountId)
    .executeTakeFirst();
  return row?.due ? new Date(row.due) : null;
}

/**
 * One access question: may principal `me` read principal `id` (with `consentId`: by that consent only),
 * by the connections and consents of mode `livemode` (the caller's).
 */
export interface ReadQuestion {
  me: string;
  id: string;
  livemode: boolean;
  /** The time of the caller's mode: consents past their end at it do not count. */
  now: Date;
}

/** What allows a reader to read a principal: a connection, or a consent (with whether it grants details). */
export interface ReadGrantRow {
  /** The question's index in the batch. */
  i: number;
  basis: 'network' | 'consent';
  consent_id: string | null;
  details: boolean;
}

/**
 * For each question (a batch of them, one statement), why `me` may read `id`: a connection
 * ('network'), or an active, unexpired consent with `availability:read:freebusy` ('consent', with
 * whether it grants details). One row per way, tagged with the question's index.
 */
export async function readGrants(db: Queryable, questions: readonly ReadQuestion[]): Promise<ReadGrantRow[]> {
  const { rows } = await sql<ReadGrantRow>`
    WITH q AS (SELECT * FROM unnest(${questions.map((_, i) => i)}::int[], ${questions.map((q) => q.me)}::uuid[],
      ${questions.map((q) => q.id)}::uuid[], ${questions.map((q) => q.livemode)}::boolean[],
      ${questions.map((q) => q.now.toISOString())}::timestamptz[]) AS q(i, me, id, livemode, now))
    SELECT q.i, 'network' AS basis, NULL AS consent_id, false AS details
    FROM q JOIN network_connections n ON n.principal_a = LEAST(q.me, q.id) AND n.principal_b = GREATEST(q.me, q.id)
      AND n.livemode = q.livemode
    UNION ALL
    SELECT q.i, 'consent', c.id, 'availability:read:details' = ANY(c.scopes)
    FROM q JOIN consents c ON c.grantee_id = q.me AND c.grantor_id = q.id AND c.livemode = q.livemode
    WHERE c.status = 'active' AND 'availability:read:freebusy' = ANY(c.scopes)
      AND (c.expires_at IS NULL OR c.expires_at > q.now)
  `.execute(db);
  return rows;
}

/** A consent that allows a read, tagged with its question's index in the batch. */
export interface ReadConsentRow {
  i: number;
  id: string;
  grantor_id: string;
  scopes: string[];
}

/**
 * For each question (a batch of them, one statement): the reader's own active consent `consentId`
 * from principal `id` that grants `availability:read:freebusy` and is not past its end, tagged with
 * the question's index; no row when there is none.
 */
export async function readConsents(
  db: Queryable,
  questions: readonly (ReadQuestion & { consentId: string })[],
): Promise<ReadConsentRow[]> {
  const { rows } = await sql<ReadConsentRow>`
    SELECT q.i, c.id, c.grantor_id::text AS grantor_id, c.scopes
    FROM unnest(${questions.map((_, i) => i)}::int[], ${questions.map((q) => q.consentId)}::text[],
      ${questions.map((q) => q.me)}::uuid[], ${questions.map((q) => q.id)}::uuid[],
      ${questions.map((q) => q.livemode)}::boolean[], ${questions.map((q) => q.now.toISOString())}::timestamptz[])
      AS q(i, consent_id, me, id, livemode, now)
    JOIN consents c ON c.id = q.consent_id AND c.grantee_id = q.me AND c.grantor_id = q.id
      AND c.livemode = q.livemode
    WHERE c.status = 'active' AND 'availability:read:freebusy' = ANY(c.scopes)
      AND (c.expires_at IS NULL OR c.expires_at > q.now)
  `.execute(db);
  return rows;
}

/** Connected, or `to` granted `from` an active, unexpired booking:propose, in mode `livemode`. */
export async function mayPropose(
  db: Queryable,
  from: string,
  to: string,
  livemode: boolean,
  now: Date,
): Promise<boolean> {
  const [a, b] = from < to ? [from, to] : [to, from];
  const { rows } = await sql<{ ok: boolean }>`
    SELECT EXISTS (SELECT 1 FROM network_connections WHERE principal_a = ${a}::uuid AND principal_b = ${b}::uuid
        AND livemode = ${livemode}::boolean)
      OR EXISTS (SELECT 1 FROM consents WHERE grantor_id = ${to}::uuid AND grantee_id = ${from}::uuid
        AND livemode = ${livemode}::boolean AND status = 'active' AND 'booking:propose' = ANY(scopes)
        AND (expires_at IS NULL OR expires_at > ${now})) AS ok`.execute(db);
  return rows[0]?.ok === true;
}

// ---------------------------------------------------------------------------------------------------
// Connections

/** The principal's connections of one mode, by connection time: `limit + 1` rows after `after`. */
export async function listConnections(
  db: Queryable,
  me: string,
  livemode: boolean,
  after: CursorPosition | null,
  limit: number,
): Promise<{ principal_id: string; relationship_type: string; connected_at: Date; livemode: boolean }[]> {
  const { rows } = await sql<{
    principal_id: string;
    relationship_type: string;
    connected_at: Date;
    livemode: boolean;
  }>`
    SELECT * FROM (
      SELECT CASE WHEN principal_a = ${me}::uuid THEN principal_b ELSE principal_a END::text AS principal_id,
        relationship_type, connected_at, livemode
      FROM network_connections
      WHERE (principal_a = ${me}::uuid OR principal_b = ${me}::uuid) AND livemode = ${livemode}::boolean
    ) n
    ${after ? sql`WHERE (connected_at, principal_id) > (${after.at}, ${after.id})` : sql``}
    ORDER BY connected_at, principal_id LIMIT ${limit + 1}`.execute(db);
  return rows;
}

/** Removes the connection of the pair (either order) in one mode; whether there was one. */
export async function deleteConnection(
  db: Queryable,
  x: string,
  y: string,
  livemode: boolean,
): Promise<boolean> {
  const [a, b] = x < y ? [x, y] : [y, x];
  const gone = await db
    .deleteFrom('network_connections')
    .where('principal_a', '=', a)
    .where('principal_b', '=', b)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
  return Number(gone.numDeletedRows) > 0;
}

/** Whether the two principals are connected in one mode. */
export async function connected(db: Queryable, x: string, y: string, livemode: boolean): Promise<boolean> {
  const [a, b] = x < y ? [x, y] : [y, x];
  const row = await db
    .selectFrom('network_connections')
    .select('principal_a')
    .where('principal_a', '=', a)
    .where('principal_b', '=', b)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
  return row !== undefined;
}

/** Connects the pair (either order) in the invitation's mode unless they are connected in it already. */
export async function insertConnection(
  trx: Tx,
  x: string,
  y: string,
  v: { relationship_type: string; invitation_id: string; connected_at: Date; livemode: boolean },
): Promise<void> {
  const [a, b] = x < y ? [x, y] : [y, x];
  await trx
    .insertInto('network_connections')
    .values({ principal_a: a, principal_b: b, ...v })
    .onConflict((oc) => oc.columns(['principal_a', 'principal_b', 'livemode']).doNothing())
    .execute();
}

// ---------------------------------------------------------------------------------------------------
// Invitations

/**
 * A new pending invitation, or the pending one of the inviter to the same address (case-insensitively)
 * with a fresh token, expiry, relationship and message; `inserted` tells which.
 */
export async function upsertInvitation(
  trx: Tx,
  v: Omit<Insertable<NetworkInvitationsTable>, 'status' | 'responded_at' | 'accepted_by'>,
): Promise<{ invitation: InvitationRow; inserted: boolean }> {
  const { rows } = await sql<InvitationRow & { inserted: boolean }>`
    INSERT INTO network_invitations AS i (id, inviter_id, inviter_account_id, invitee_email, invitee_name,
      relationship_type, message, status, token_hash, expires_at, created_at, livemode)
    VALUES (${v.id}, ${v.inviter_id}, ${v.inviter_account_id}, ${v.invitee_email},
      ${v.invitee_name ?? null}, ${v.relationship_type}, ${v.message ?? null}, 'pending',
      ${v.token_hash}, ${v.expires_at}, ${v.created_at}, ${v.livemode ?? true}::boolean)
    ON CONFLICT (inviter_id, lower(invitee_email), livemode) WHERE status = 'pending' DO UPDATE SET
      token_hash = excluded.token_hash, expires_at = excluded.expires_at,
      relationship_type = excluded.relationship_type, message = excluded.message,
      invitee_name = coalesce(excluded.invitee_name, i.invitee_name)
    RETURNING i.*, (xmax = 0) AS inserted`.execute(trx);
  const { inserted, ...invitation } = rows[0]!;
  return { invitation: invitation as InvitationRow, inserted };
}

/** The invitation with this token hash, locked FOR UPDATE, or undefined. */
export async function lockInvitationByHash(trx: Tx, hash: string): Promise<InvitationRow | undefined> {
  return (await trx
    .selectFrom('network_invitations')
    .selectAll()
    .where('token_hash', '=', hash)
    .forUpdate()
    .executeTakeFirst()) as InvitationRow | undefined;
}

/** The invitation with this token hash, or undefined (read-only: the invitation page). */
export async function findInvitationByHash(db: Queryable, hash: string): Promise<InvitationRow | undefined> {
  return (await db
    .selectFrom('network_invitations')
    .selectAll()
    .where('token_hash', '=', hash)
    .executeTakeFirst()) as InvitationRow | undefined;
}

/** The invitations `inviter` sent in one mode, newest first, after the cursor, limit + 1 rows. */
export async function listInvitations(
  db: Queryable,
  f: {
    inviter: string;
    livemode: boolean;
    status?: InvitationRow['status'];
    now: Date;
    after: CursorPosition | null;
    limit: number;
  },
): Promise<InvitationRow[]> {
  let q = db
    .selectFrom('network_invitations')
    .selectAll()
    .where('inviter_id', '=', f.inviter)
    .where('livemode', '=', f.livemode);
  // A pending invitation past its end shows as expired (the service's presentInvitation).
  if (f.status === 'pending') q = q.where('status', '=', 'pending').where('expires_at', '>', f.now);
  else if (f.status === 'expired') {
    const now = f.now;
    q = q.where((eb) =>
      eb.or([
        eb('status', '=', 'expired'),
        eb.and([eb('status', '=', 'pending'), eb('expires_at', '<=', now)]),
      ]),
    );
  } else if (f.status) q = q.where('status', '=', f.status);
  const after = f.after;
  if (after) q = q.where(sql<boolean>`(created_at, id) < (${after.at}, ${after.id})`);
  return (await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(f.limit + 1)
    .execute()) as InvitationRow[];
}

export async function markInvitationExpired(trx: Tx, id: string): Promise<void> {
  await trx.updateTable('network_invitations').set({ status: 'expired' }).where('id', '=', id).execute();
}

export async function answerInvitation(
  trx: Tx,
  id: string,
  set: { status: 'accepted' | 'declined'; responded_at: Date; accepted_by: string | null },
): Promise<InvitationRow> {
  return (await trx
    .updateTable('network_invitations')
    .set(set)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()) as InvitationRow;
}
