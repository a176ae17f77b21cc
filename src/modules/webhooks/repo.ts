/** SQL of the webhooks module: subscriptions, events, deliveries, attempts. */
import {
  type Insertable,
  type QueryCreator,
  type RawBuilder,
  type Selectable,
  sql,
  type Updateable,
} from 'kysely';
import { part, rowsInsert, type SqlPart, statement } from '../../db/parts.js';
import { purgeInBatches } from '../../db/purge.js';
import {
  type BatchedWrite,
  type ClaimedAs,
  type ClaimRead,
  type Job,
  jobsForRows,
} from '../../jobs/runner.js';
import type { Db, Tx } from '../../db/store.js';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../platform/clock.js';
import { prefixedId } from '../../platform/ids.js';
import { type CursorPosition, newestFirstAfter } from '../../platform/pagination.js';
import type { StoredEvent } from './api.js';
import type {
  DeliveryStatus,
  EventsTable,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhooksTable,
} from './tables.js';

type Queryable = Db | Tx;

/** The event envelope of docs/api.md#events, in the key order it is serialised with. */
export type WebhookRow = Selectable<WebhooksTable>;

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export type AttemptRow = Selectable<WebhookAttemptsTable>;

// ---------------------------------------------------------------------------------------------------
// Events

/**
 * An event as stored, and the INSERT that stores it (to run alone or alongside its dispatch job,
 * events.ts): the envelope exactly as it will be delivered.
 */
export function eventInsert(
  clock: Clock,
  input: { accountId: string; type: string; data: Record<string, unknown>; principalId: string | null },
): { event: StoredEvent; insert: SqlPart } {
  const now = clock.now();
  const event: StoredEvent = {
    id: prefixedId('evt', now.getTime()),
    type: input.type,
    created_at: now.toISOString(),
    data: input.data,
  };
  const row: Insertable<EventsTable> = {
    id: event.id,
    account_id: input.accountId,
    principal_id: input.principalId,
    type: input.type,
    data: JSON.stringify(input.data),
    envelope: JSON.stringify(event),
    created_at: now,
  };
  return { event, insert: rowsInsert('events', [row]) };
}

/** Stores an event (emitEvent stores it with its dispatch job instead). */
export async function insertEvent(
  trx: Queryable,
  clock: Clock,
  input: { accountId: string; type: string; data: Record<string, unknown>; principalId: string | null },
): Promise<StoredEvent> {
  const { event, insert } = eventInsert(clock, input);
  await trx.executeQuery(statement([insert]));
  return event;
}

/** An event of the account: the envelope exactly as delivered. */
export async function findEvent(db: Queryable, accountId: string, id: string): Promise<StoredEvent | null> {
  const row = await db
    .selectFrom('events')
    .select('envelope')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? (JSON.parse(row.envelope) as StoredEvent) : null;
}

// ---------------------------------------------------------------------------------------------------
// Subscriptions

export async function insertWebhook(db: Queryable, row: Insertable<WebhooksTable>): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

export async function findWebhook(
  db: Queryable,
  accountId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<WebhookRow | null> {
  let q = db.selectFrom('webhooks').selectAll().where('id', '=', id).where('account_id', '=', accountId);
  if (opts.forUpdate) q = q.forUpdate();
  return (await q.executeTakeFirst()) ?? null;
}

export async function listWebhooks(
  db: Queryable,
  accountId: string,
  pos: CursorPosition | null,
  limit: number,
): Promise<WebhookRow[]> {
  const q = db.selectFrom('webhooks').selectAll().where('account_id', '=', accountId);
  return newestFirstAfter(q, pos, limit).execute();
}

export async function updateWebhook(
  trx: Queryable,
  id: string,
  patch: Omit<Updateable<WebhooksTable>, 'id' | 'account_id' | 'principal_id' | 'created_at'>,
): Promise<WebhookRow> {
  return trx.updateTable('webhooks').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteWebhook(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('webhooks')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/**
 * Whether any subscription of the account could want an event of `type` (active, listing the type):
 * without one an event's dispatch job is not even enqueued (emitEvent). dispatchTargets, which runs
 * later, decides the rest (creation time, the principal a subscription belongs to).
 */
export function anySubscriptionFor(accountId: string, type: string): SqlPart {
  return part`EXISTS (
    SELECT 1 FROM webhooks w
    WHERE w.account_id = ${accountId}::uuid AND w.active AND ${type}::text = ANY(w.events))`;
}

/** An event and a subscription that receives it, with what a first attempt sends (dispatchTargets). */
export interface DispatchTarget {
  event_id: string;
  event_type: string;
  envelope: string;
  webhook_id: string;
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * The events `which` names, each with the subscriptions that receive it: active, of the event's
 * account, subscribed to its type, created no later than the event; for an event with a recipient
 * principal, only the account's own subscriptions and those the recipient made.
 */
function targetsOf(which: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`FROM events e
    JOIN webhooks w ON w.account_id = e.account_id AND w.active AND e.type = ANY(w.events)
      AND w.created_at <= e.created_at
      AND (e.principal_id IS NULL OR w.principal_id = e.principal_id OR w.principal_id = e.account_id)
    WHERE ${which}`;
}

/**
 * The events and the subscriptions that receive them (targetsOf), with what a first attempt sends (the
 * subscription's URL and secrets, the event's envelope). Nothing is locked: the deliveries' insert
 * checks again that each subscription is active, under a lock (insertDeliveriesWithAttempts).
 */
export async function dispatchTargets(db: Queryable, eventIds: readonly string[]): Promise<DispatchTarget[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await sql<DispatchTarget>`
    SELECT e.id AS event_id, e.type AS event_type, e.envelope, w.id AS webhook_id, w.url, w.secret_enc,
      w.previous_secret_enc, w.previous_secret_expires_at
    ${targetsOf(sql`e.id = ANY(${eventIds}::text[])`)}
    ORDER BY e.id, w.id`.execute(db);
  return rows;
}

/**
 * dispatchTargets of a dispatch job's event, read in the statement that claims the job
 * (RegisterOptions.claimWith): a JSON array, which targetsRead turns back into DispatchTargets.
 */
export const claimTargets: ClaimRead = (payload) => sql`(
  SELECT coalesce(json_agg(json_build_object('event_id', e.id, 'event_type', e.type,
    'envelope', e.envelope, 'webhook_id', w.id, 'url', w.url, 'secret_enc', w.secret_enc,
    'previous_secret_enc', w.previous_secret_enc,
    'previous_secret_expires_at', extract(epoch FROM w.previous_secret_expires_at) * 1000) ORDER BY w.id),
    '[]')
  ${targetsOf(sql`e.id = ${payload} ->> 'event_id'`)})`;

/** The DispatchTargets claimTargets read for a job (`job.read`); null when it was not read. */
export function targetsRead(read: unknown): DispatchTarget[] | null {
  if (!Array.isArray(read)) return null;
  return read.map(
    (
      t: Omit<DispatchTarget, 'previous_secret_expires_at'> & { previous_secret_expires_at: number | null },
    ) => ({
      ...t,
      previous_secret_expires_at:
        t.previous_secret_expires_at === null ? null : new Date(Number(t.previous_secret_expires_at)),
    }),
  );
}

// ---------------------------------------------------------------------------------------------------
// Deliveries and attempts

/** Inserts deliveries; an (webhook, event) pair that already has one is skipped. Returns the new ones. */
export async function insertDeliveries(trx: Tx, rows: DeliveryRow[]): Promise<DeliveryRow[]> {
  if (rows.length === 0) return [];
  return trx
    .insertInto('webhook_deliveries')
    .values(rows)
    .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
    .returningAll()
    .execute();
}

/** A new pending delivery, as dispatch makes them. */
export type NewDelivery = Pick<DeliveryRow, 'id' | 'webhook_id' | 'event_id' | 'event_type' | 'pending_job'>;

/**
 * Pending deliveries made at `now`, and in the same statement the first attempt job of each delivery
 * it made (`attempts`: payload by delivery id) with its queue's wake-up, and `also` (the dispatch
 * jobs' end): one round trip, and no transaction around it. Only deliveries of subscriptions still
 * active are made, and those subscriptions are locked FOR SHARE until the statement ends, so a
 * concurrent pause (which locks the subscription) waits for this fan-out and then fails its
 * deliveries; a (webhook, event) pair that has a delivery already is skipped. The first attempts of
 * `claimed.keys` are enqueued claimed by that worker (jobsForRows); answers those jobs, for it to run.
 */
export async function insertDeliveriesWithAttempts(
  db: Queryable,
  rows: readonly NewDelivery[],
  queue: string,
  attempts: ReadonlyMap<string, unknown>,
  now: Date,
  also: BatchedWrite,
  claimed: ClaimedAs | null,
): Promise<Job[]> {
  if (rows.length === 0) {
    await db.executeQuery(also(db).compile());
    return [];
  }
  const col = <K extends keyof NewDelivery>(k: K) => rows.map((r) => r[k]);
  const jobs = jobsForRows('first_attempts', 'created', queue, attempts, now, claimed);
  // The wake-up's row has no id; the claimed jobs' rows are the others.
  const { rows: out } = await sql<{ id: string | number | null; payload: unknown }>`
    WITH live AS (
      SELECT w.id FROM webhooks w
      WHERE w.id = ANY(${[...new Set(col('webhook_id'))]}::text[]) AND w.active
      FOR SHARE
    ), created AS (
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, status, attempt_count,
        next_attempt_at, pending_job, created_at, updated_at)
      SELECT r.id, r.webhook_id, r.event_id, r.event_type, 'pending', 0, ${now}::timestamptz,
        r.pending_job, ${now}::timestamptz, ${now}::timestamptz
      FROM unnest(${col('id')}::text[], ${col('webhook_id')}::text[], ${col('event_id')}::text[],
        ${col('event_type')}::text[], ${col('pending_job')}::text[])
        AS r(id, webhook_id, event_id, event_type, pending_job)
      WHERE r.webhook_id IN (SELECT id FROM live)
      ORDER BY r.id
      ON CONFLICT (webhook_id, event_id) DO NOTHING
      RETURNING id
    ), ${jobs.part}, done AS (${also(db)}), woken AS (${jobs.wakeUp})
    ${jobs.claimedRows} UNION ALL SELECT NULL, NULL FROM woken`.execute(db);
  return out.flatMap((r) =>
    r.id === null ? [] : [{ id: String(r.id), queue, payload: r.payload, attempts: 1 }],
  );
}

export async function findDelivery(
  db: Queryable,
  webhookId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<DeliveryRow | null> {
  let q = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', id)
    .where('webhook_id', '=', webhookId);
  if (opts.forUpdate) q = q.forUpdate();
  return (await q.executeTakeFirst()) ?? null;
}

export async function lockDelivery(trx: Tx, id: string): Promise<DeliveryRow | null> {
  return (
    (await trx
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst()) ?? null
  );
}

export async function updateDelivery(
  trx: Queryable,
  id: string,
  patch: Partial<
    Pick<DeliveryRow, 'status' | 'attempt_count' | 'next_attempt_at' | 'pending_job' | 'updated_at'>
  >,
): Promise<DeliveryRow> {
  return trx
    .updateTable('webhook_deliveries')
    .set(patch)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Ends the pending deliveries of a subscription (it was paused): failed, no more automatic attempts.
 * `pending_job` stays, so an attempt in flight right now still records what it did.
 */
export async function failPendingDeliveries(trx: Tx, webhookId: string, now: Date): Promise<number> {
  const res = await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, updated_at: now })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export async function listDeliveries(
  db: Queryable,
  webhookId: string,
  filter: { status?: DeliveryStatus; eventType?: string },
  pos: CursorPosition | null,
  limit: number,
): Promise<DeliveryRow[]> {
  let q = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.eventType) q = q.where('event_type', '=', filter.eventType);
  return newestFirstAfter(q, pos, limit).execute();
}

/** The attempts of some deliveries, grouped by delivery, in attempt order. */
export async function attemptsOf(db: Queryable, deliveryIds: string[]): Promise<Map<string, AttemptRow[]>> {
  const out = new Map<string, AttemptRow[]>();
  if (deliveryIds.length === 0) return out;
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('number')
    .execute();
  for (const row of rows) {
    const list = out.get(row.delivery_id) ?? [];
    list.push(row);
    out.set(row.delivery_id, list);
  }
  return out;
}

export interface DeliveryState {
  status: DeliveryStatus;
  attempt_count: number;
}

/**
 * Records an attempt's outcome, in one statement: the delivery's new state and (unless null) the
 * attempt row. Optimistic: it applies only if the delivery still expects this job (`token`) and is
 * still in `expected` state; false when it is not (the caller then looks under a lock).
 */
export async function recordOutcome(
  trx: Tx,
  input: {
    deliveryId: string;
    token: string;
    expected: DeliveryState;
    attempt: Insertable<WebhookAttemptsTable> | null;
    next: Pick<DeliveryRow, 'status' | 'attempt_count' | 'next_attempt_at' | 'pending_job' | 'updated_at'>;
  },
): Promise<boolean> {
  const updated = (db: QueryCreator<DB>) =>
    db
      .updateTable('webhook_deliveries')
      .set(input.next)
      .where('id', '=', input.deliveryId)
      .where('pending_job', '=', input.token)
      .where('status', '=', input.expected.status)
      .where('attempt_count', '=', input.expected.attempt_count)
      .returning('id');
  if (input.attempt === null) return (await updated(trx).execute()).length === 1;
  const attempt = input.attempt;
  const rows = await trx
    .with('updated', updated)
    .insertInto('webhook_attempts')
    .columns([
      'delivery_id',
      'number',
      'manual',
      'at',
      'response_status',
      'duration_ms',
      'error',
      'response_body',
    ])
    .expression((eb) =>
      eb
        .selectFrom('updated')
        .select([
          'updated.id',
          sql.lit(attempt.number).as('number'),
          sql<boolean>`${attempt.manual}::boolean`.as('manual'),
          sql<Date>`${attempt.at}::timestamptz`.as('at'),
          sql<number | null>`${attempt.response_status ?? null}::integer`.as('response_status'),
          sql<number>`${attempt.duration_ms}::integer`.as('duration_ms'),
          sql<string | null>`${attempt.error ?? null}::text`.as('error'),
          sql<string | null>`${attempt.response_body ?? null}::text`.as('response_body'),
        ]),
    )
    .returning('delivery_id')
    .execute();
  return rows.length === 1;
}

export interface OutcomeInput {
  deliveryId: string;
  token: string;
  expected: DeliveryState;
  attempt: Insertable<WebhookAttemptsTable> | null;
  next: Pick<DeliveryRow, 'status' | 'attempt_count' | 'next_attempt_at' | 'pending_job' | 'updated_at'>;
}

/**
 * recordOutcome for many deliveries in one statement (one UPDATE, one INSERT of the attempts made):
 * each applies under the same condition as recordOutcome's. Answers the ids of those that applied.
 */
export async function recordOutcomes(trx: Tx, inputs: readonly OutcomeInput[]): Promise<Set<string>> {
  if (inputs.length === 0) return new Set();
  const rows = inputs.map((o) => ({
    id: o.deliveryId,
    token: o.token,
    expected_status: o.expected.status,
    expected_count: o.expected.attempt_count,
    status: o.next.status,
    attempt_count: o.next.attempt_count,
    next_attempt_at: o.next.next_attempt_at,
    pending_job: o.next.pending_job,
    updated_at: o.next.updated_at,
    attempted: o.attempt !== null,
    number: o.attempt?.number ?? null,
    manual: o.attempt?.manual ?? null,
    at: o.attempt?.at ?? null,
    response_status: o.attempt?.response_status ?? null,
    duration_ms: o.attempt?.duration_ms ?? null,
    error: o.attempt?.error ?? null,
    response_body: o.attempt?.response_body ?? null,
  }));
  const result = await sql<{ id: string }>`
    WITH v AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(
        id text, token text, expected_status text, expected_count integer, status text,
        attempt_count integer, next_attempt_at timestamptz, pending_job text, updated_at timestamptz,
        attempted boolean, number integer, manual boolean, at timestamptz, response_status integer,
        duration_ms integer, error text, response_body text)
    ),
    updated AS (
      UPDATE webhook_deliveries d
      SET status = v.status, attempt_count = v.attempt_count, next_attempt_at = v.next_attempt_at,
          pending_job = v.pending_job, updated_at = v.updated_at
      FROM v
      WHERE d.id = v.id AND d.pending_job = v.token AND d.status = v.expected_status
        AND d.attempt_count = v.expected_count
      RETURNING d.id
    ),
    attempts AS (
      INSERT INTO webhook_attempts
        (delivery_id, number, manual, at, response_status, duration_ms, error, response_body)
      SELECT v.id, v.number, v.manual, v.at, v.response_status, v.duration_ms, v.error, v.response_body
      FROM v JOIN updated u ON u.id = v.id
      WHERE v.attempted
    )
    SELECT id FROM updated`.execute(trx);
  return new Set(result.rows.map((r) => r.id));
}

/** What attempts need: each delivery, where it goes, the secrets and the exact bytes to send. */
export async function attemptContexts(db: Queryable, deliveryIds: readonly string[]) {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.status',
      'd.pending_job',
      'd.attempt_count',
      'd.event_type',
      'd.webhook_id',
      'w.url',
      'w.active',
      'w.secret_enc',
      'w.previous_secret_enc',
      'w.previous_secret_expires_at',
      'e.id as event_id',
      'e.envelope',
    ])
    .where('d.id', 'in', deliveryIds)
    .execute();
}

export type AttemptContext = Awaited<ReturnType<typeof attemptContexts>>[number];

/** Deletes finished deliveries (and, by cascade, their attempts) created before `before`. */
export function purgeFinishedDeliveries(db: Db, before: Date): Promise<number> {
  return purgeInBatches(
    db,
    'webhook_deliveries',
    sql<boolean>`created_at < ${before} AND status <> 'pending'`,
  );
}

/** Deletes events created before `before` that no delivery refers to any more. */
export function purgeUndeliveredEvents(db: Db, before: Date): Promise<number> {
  return purgeInBatches(
    db,
    'events',
    sql<boolean>`created_at < ${before}
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id)`,
  );
}
