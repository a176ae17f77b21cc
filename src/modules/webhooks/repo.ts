/** SQL of the webhooks module: subscriptions, events, deliveries, attempts. */
import { type Insertable, type RawBuilder, type Selectable, sql, type Updateable } from 'kysely';
import { part, rowsInsert, type SqlPart, statement } from '../../db/parts.js';
import { purgeInBatches } from '../../db/purge.js';
import { type BatchedWrite, type ClaimRead, jobsForRows } from '../../jobs/runner.js';
import type { Db, Tx } from '../../db/store.js';
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
  input: {
    accountId: string;
    type: string;
    data: Record<string, unknown>;
    principalId: string | null;
    livemode: boolean;
  },
): { event: StoredEvent; insert: SqlPart } {
  const now = clock.now();
  const event: StoredEvent = {
    id: prefixedId('evt', now.getTime()),
    type: input.type,
    created_at: now.toISOString(),
    livemode: input.livemode,
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
    livemode: input.livemode,
  };
  return { event, insert: rowsInsert('events', [row]) };
}

/** Stores an event (emitEvent stores it with its dispatch job instead). */
export async function insertEvent(
  trx: Queryable,
  clock: Clock,
  input: {
    accountId: string;
    type: string;
    data: Record<string, unknown>;
    principalId: string | null;
    livemode: boolean;
  },
): Promise<StoredEvent> {
  const { event, insert } = eventInsert(clock, input);
  await trx.executeQuery(statement([insert]));
  return event;
}

/**
 * An event of the account and mode: the envelope exactly as delivered (one stored before test mode
 * existed has no `livemode`: it is live, and shown so).
 */
export async function findEvent(
  db: Queryable,
  accountId: string,
  livemode: boolean,
  id: string,
): Promise<StoredEvent | null> {
  const row = await db
    .selectFrom('events')
    .select('envelope')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
  if (!row) return null;
  const env = JSON.parse(row.envelope) as Omit<StoredEvent, 'livemode'> & { livemode?: boolean };
  if (env.livemode !== undefined) return env as StoredEvent;
  return { id: env.id, type: env.type, created_at: env.created_at, livemode: livemode, data: env.data };
}

// ---------------------------------------------------------------------------------------------------
// Subscriptions

export async function insertWebhook(db: Queryable, row: Insertable<WebhooksTable>): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

/** A subscription of the account in one mode (docs/api.md#test-mode: the other mode's are not found). */
export interface Owner {
  accountId: string;
  livemode: boolean;
}

export async function findWebhook(
  db: Queryable,
  owner: Owner,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<WebhookRow | null> {
  let q = db
    .selectFrom('webhooks')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', owner.accountId)
    .where('livemode', '=', owner.livemode);
  if (opts.forUpdate) q = q.forUpdate();
  return (await q.executeTakeFirst()) ?? null;
}

export async function listWebhooks(
  db: Queryable,
  owner: Owner,
  pos: CursorPosition | null,
  limit: number,
): Promise<WebhookRow[]> {
  const q = db
    .selectFrom('webhooks')
    .selectAll()
    .where('account_id', '=', owner.accountId)
    .where('livemode', '=', owner.livemode);
  return newestFirstAfter(q, pos, limit).execute();
}

export async function updateWebhook(
  trx: Queryable,
  id: string,
  patch: Omit<Updateable<WebhooksTable>, 'id' | 'account_id' | 'principal_id' | 'created_at'>,
): Promise<WebhookRow> {
  return trx.updateTable('webhooks').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteWebhook(db: Queryable, owner: Owner, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('webhooks')
    .where('id', '=', id)
    .where('account_id', '=', owner.accountId)
    .where('livemode', '=', owner.livemode)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/**
 * Whether any subscription of the account and mode could want an event of `type` (active, listing the
 * type): without one an event's dispatch job is not even enqueued (emitEvent). claimTargets, which
 * runs later, decides the rest (creation time, the principal a subscription belongs to).
 */
export function anySubscriptionFor(accountId: string, livemode: boolean, type: string): SqlPart {
  return part`EXISTS (
    SELECT 1 FROM webhooks w
    WHERE w.account_id = ${accountId}::uuid AND w.livemode = ${livemode}::boolean AND w.active
      AND ${type}::text = ANY(w.events))`;
}

/** An event and a subscription that receives it (claimTargets). */
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
 * account and mode (docs/api.md#test-mode: a test-mode event reaches test-mode subscriptions only),
 * subscribed to its type, created no later than the event; for an event with a recipient principal,
 * only the account's own subscriptions and those the recipient made.
 */
function targetsOf(which: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`FROM events e
    JOIN webhooks w ON w.account_id = e.account_id AND w.livemode = e.livemode AND w.active
      AND e.type = ANY(w.events)
      AND w.created_at <= e.created_at
      AND (e.principal_id IS NULL OR w.principal_id = e.principal_id OR w.principal_id = e.account_id)
    WHERE ${which}`;
}

/**
 * The subscriptions that receive a dispatch job's event (targetsOf), read in the statement that claims
 * the job (RegisterOptions.claimWith): a JSON array, which targetsRead turns back into DispatchTargets.
 * Nothing is locked: the deliveries' insert checks again that each subscription is active, under a
 * lock (insertDeliveries).
 */
export const claimTargets: ClaimRead = (payload) => sql`(
  SELECT coalesce(json_agg(json_build_object('event_id', e.id, 'event_type', e.type,
    'envelope', e.envelope, 'webhook_id', w.id, 'url', w.url, 'secret_enc', w.secret_enc,
    'previous_secret_enc', w.previous_secret_enc,
    'previous_secret_expires_at', extract(epoch FROM w.previous_secret_expires_at) * 1000) ORDER BY w.id),
    '[]')
  ${targetsOf(sql`e.id = ${payload} ->> 'event_id'`)})`;

/** The DispatchTargets claimTargets read for a job (`job.read`). */
export function targetsRead(read: unknown): DispatchTarget[] {
  if (!Array.isArray(read)) throw new Error('a dispatch job without the targets its claim reads');
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

/** A new pending delivery (delivery.ts makeDeliveries). */
export type NewDelivery = Pick<DeliveryRow, 'id' | 'webhook_id' | 'event_id' | 'event_type' | 'pending_job'>;

/**
 * Pending deliveries made at `now`, and in the same statement the first attempt job of each delivery
 * it made (`attempts`: payload by delivery id) with its queue's wake-up, and `end` (the jobs of the
 * handler making them, ended): one round trip, and no transaction around it. Only deliveries of
 * subscriptions still active are made, and those subscriptions are locked FOR SHARE until the
 * statement ends, so a concurrent pause (which locks the subscription) waits for this fan-out and then
 * fails its deliveries; a (webhook, event) pair that has a delivery already is skipped, and so is a
 * pair of two modes (docs/api.md#test-mode: an event reaches subscriptions of its own mode only, here
 * as in claimTargets, so no path makes a delivery across modes). Answers the ids of the deliveries made.
 */
export async function insertDeliveries(
  db: Queryable,
  rows: readonly NewDelivery[],
  queue: string,
  attempts: ReadonlyMap<string, unknown>,
  now: Date,
  end: BatchedWrite | null,
): Promise<string[]> {
  if (rows.length === 0) {
    if (end) await db.executeQuery(end(db).compile());
    return [];
  }
  const col = <K extends keyof NewDelivery>(k: K) => rows.map((r) => r[k]);
  const jobs = jobsForRows('first_attempts', 'created', queue, attempts);
  // The wake-up's row has no id; the deliveries' rows are the others.
  const { rows: out } = await sql<{ id: string | null }>`
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
        AND EXISTS (SELECT 1 FROM webhooks w JOIN events e ON e.livemode = w.livemode
          WHERE w.id = r.webhook_id AND e.id = r.event_id)
      ORDER BY r.id
      ON CONFLICT (webhook_id, event_id) DO NOTHING
      RETURNING id, next_attempt_at AS run_at
    ), ${jobs.part}, ${end ? sql`done AS (${end(db)}),` : sql``} woken AS (${jobs.wakeUp})
    SELECT id FROM created UNION ALL SELECT NULL FROM woken`.execute(db);
  return out.flatMap((r) => (r.id === null ? [] : [r.id]));
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

/** A finished attempt's outcome, to record (recordOutcomes). */
export interface Outcome {
  deliveryId: string;
  /** The attempt job's token: the outcome applies only while the delivery expects that job. */
  token: string;
  manual: boolean;
  /** The attempt made; null when none was (the subscription was paused while the job waited). */
  attempt:
    | (Pick<AttemptRow, 'at' | 'response_status' | 'duration_ms' | 'error' | 'response_body'> & {
        ok: boolean;
      })
    | null;
  /** The job of the next automatic attempt, enqueued (its token the delivery's) if there is one. */
  retry: { token: string; payload: unknown };
}

/**
 * Records attempts' outcomes in one statement: each delivery's next state, the attempt rows, the
 * next automatic attempts' jobs (with their queue's wake-up) and `end` (the attempt jobs, ended).
 * The next state is decided from the delivery as it is when the statement changes it, so an outcome
 * needs no lock and no second look: a 2xx ends it `succeeded`; a failed automatic attempt of a pending
 * delivery is followed by the next one of `scheduleMs` (delays before the 2nd, 3rd… attempt, counted
 * from `now`, the end of the failed one); anything else ends it `failed`. An outcome applies only
 * while the delivery expects its job (`pending_job`); answers those that did not apply although their
 * delivery exists (another run of the job, whose lease had lapsed, recorded first, or a manual retry
 * was asked for meanwhile).
 */
export async function recordOutcomes(
  db: Queryable,
  outcomes: readonly Outcome[],
  queue: string,
  scheduleMs: readonly number[],
  now: Date,
  end: BatchedWrite,
): Promise<string[]> {
  const rows = outcomes.map((o) => ({
    id: o.deliveryId,
    token: o.token,
    manual: o.manual,
    attempted: o.attempt !== null,
    ok: o.attempt?.ok ?? false,
    retry_token: o.retry.token,
    at: o.attempt?.at ?? null,
    response_status: o.attempt?.response_status ?? null,
    duration_ms: o.attempt?.duration_ms ?? null,
    error: o.attempt?.error ?? null,
    response_body: o.attempt?.response_body ?? null,
  }));
  const schedule = sql`${[...scheduleMs]}::integer[]`;
  const retries = sql`(NOT v.ok AND v.attempted AND NOT v.manual AND d.status = 'pending'
    AND d.attempt_count + 1 <= cardinality(${schedule}))`;
  const jobs = jobsForRows(
    'retries',
    'retried',
    queue,
    new Map(outcomes.map((o) => [o.deliveryId, o.retry.payload])),
  );
  const { rows: out } = await sql<{ id: string | null }>`
    WITH v AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(
        id text, token text, manual boolean, attempted boolean, ok boolean, retry_token text,
        at timestamptz, response_status integer, duration_ms integer, error text, response_body text)
    ), updated AS (
      UPDATE webhook_deliveries d
      SET status = CASE WHEN v.ok THEN 'succeeded' WHEN ${retries} THEN 'pending' ELSE 'failed' END,
        attempt_count = d.attempt_count + CASE WHEN v.attempted THEN 1 ELSE 0 END,
        next_attempt_at = CASE WHEN ${retries}
          THEN ${now}::timestamptz + (${schedule})[d.attempt_count + 1] * interval '1 millisecond' END,
        pending_job = CASE WHEN ${retries} THEN v.retry_token END,
        updated_at = ${now}::timestamptz
      FROM v
      WHERE d.id = v.id AND d.pending_job = v.token
      RETURNING d.id, d.status, d.attempt_count, d.next_attempt_at AS run_at
    ), attempts AS (
      INSERT INTO webhook_attempts
        (delivery_id, number, manual, at, response_status, duration_ms, error, response_body)
      SELECT v.id, u.attempt_count, v.manual, v.at, v.response_status, v.duration_ms, v.error,
        v.response_body
      FROM v JOIN updated u ON u.id = v.id
      WHERE v.attempted
    ), retried AS (
      SELECT id, run_at FROM updated WHERE status = 'pending'
    ), ${jobs.part}, done AS (${end(db)}), woken AS (${jobs.wakeUp})
    SELECT v.id FROM v
    WHERE NOT EXISTS (SELECT 1 FROM updated u WHERE u.id = v.id)
      AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = v.id)
    UNION ALL SELECT NULL FROM woken`.execute(db);
  return out.flatMap((r) => (r.id === null ? [] : [r.id]));
}

/** What an attempt sends and the state of its delivery, as its claim reads them (claimContext). */
export interface AttemptContext {
  id: string;
  status: DeliveryStatus;
  pending_job: string | null;
  attempt_count: number;
  webhook_id: string;
  url: string;
  active: boolean;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  event_id: string;
  envelope: string;
}

/**
 * An attempt job's context, read in the statement that claims the job (RegisterOptions.claimWith):
 * the delivery, its subscription (where it goes, the secrets) and its event (the exact bytes to send),
 * in one join; a JSON object (null: the delivery is gone), which contextRead turns back.
 */
export const claimContext: ClaimRead = (payload) => sql`(
  SELECT json_build_object('id', d.id, 'status', d.status, 'pending_job', d.pending_job,
    'attempt_count', d.attempt_count, 'webhook_id', d.webhook_id, 'url', w.url, 'active', w.active,
    'secret_enc', w.secret_enc, 'previous_secret_enc', w.previous_secret_enc,
    'previous_secret_expires_at', extract(epoch FROM w.previous_secret_expires_at) * 1000,
    'event_id', e.id, 'envelope', e.envelope)
  FROM webhook_deliveries d
  JOIN webhooks w ON w.id = d.webhook_id
  JOIN events e ON e.id = d.event_id
  WHERE d.id = ${payload} ->> 'delivery_id')`;

/** The AttemptContext claimContext read for a job (`job.read`); null when its delivery is gone. */
export function contextRead(read: unknown): AttemptContext | null {
  if (read === undefined) throw new Error('an attempt job without the context its claim reads');
  if (read === null) return null;
  const ctx = read as Omit<AttemptContext, 'previous_secret_expires_at'> & {
    previous_secret_expires_at: number | null;
  };
  return {
    ...ctx,
    previous_secret_expires_at:
      ctx.previous_secret_expires_at === null ? null : new Date(Number(ctx.previous_secret_expires_at)),
  };
}

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
