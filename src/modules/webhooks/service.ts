/** Webhook use cases: subscriptions, secret rotation, test sends, delivery history, manual retries. */
import type { Static } from '@sinclair/typebox';
import type { Db, Tx } from '../../db/store.js';
import type { Actor } from '../../platform/actor.js';
import { withTransaction } from '../../db/store.js';
import { enqueueMany, type WriteBatch } from '../../jobs/runner.js';
import type { Clock } from '../../platform/clock.js';
import { encryptSecret } from '../../platform/crypto.js';
import { Conflict, NotFound } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { type OutboundPolicy, checkUrl } from '../../platform/outbound.js';
import { decodeCursor, page } from '../../platform/pagination.js';
import { Problems } from '../../platform/validation.js';
import type { TestClocks } from '../../platform/test-clocks.js';
import type { Platform } from '../module.js';
import type { EmitEventInput, EventType, StoredEvent, WebhooksApi } from './api.js';
import { attemptJob, makeDeliveries } from './delivery.js';
import { ATTEMPT_QUEUE, emitEvent, TEST_EVENT_TYPE } from './events.js';
import type { CreateBody, DeliveriesQuery, UpdateBody } from './schemas.js';
import {
  type AttemptRow,
  attemptsOf,
  type DeliveryRow,
  deleteWebhook,
  failPendingDeliveries,
  findDelivery,
  findEvent,
  findWebhook,
  insertEvent,
  insertWebhook,
  listDeliveries,
  listWebhooks,
  updateDelivery,
  updateWebhook,
  type WebhookRow,
} from './repo.js';
import { generateWebhookSecret } from './signing.js';
import type { ListQuery } from '../../platform/schemas.js';

/** After a rotation the previous secret keeps signing (a second webhook-signature entry) this long. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** The API's view of a subscription: never a secret. */
export function presentWebhook(row: WebhookRow, nowMs: number) {
  const previousUntil = row.previous_secret_expires_at;
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    active: row.active,
    livemode: row.livemode,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    previous_secret_expires_at:
      previousUntil && previousUntil.getTime() > nowMs ? previousUntil.toISOString() : null,
  };
}
export type PresentedWebhook = ReturnType<typeof presentWebhook>;

export function presentDelivery(row: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: attempts.map((a) => ({
      number: a.number,
      at: a.at.toISOString(),
      manual: a.manual,
      response_status: a.response_status,
      duration_ms: a.duration_ms,
      error: a.error,
      response_body: a.response_body,
    })),
    next_attempt_at: row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
  };
}
export type PresentedDelivery = ReturnType<typeof presentDelivery>;

export class WebhookService implements WebhooksApi {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly encryptionKey: Buffer;
  private readonly policy: OutboundPolicy;

  private readonly testClocks: Pick<TestClocks, 'offsetMs'>;

  constructor(
    platform: Pick<Platform, 'db' | 'clock' | 'keys' | 'config' | 'testClocks'>,
    /** What a subscription may list: the event types the modules declare. */
    private readonly eventTypes: readonly string[],
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.testClocks = platform.testClocks;
    this.encryptionKey = platform.keys.encryptionKey;
    this.policy = { allowPrivateNetwork: platform.config.allowPrivateNetwork };
  }

  emit<T extends EventType>(trx: Tx, input: EmitEventInput<T>, batch?: WriteBatch): Promise<StoredEvent> {
    return emitEvent(trx, this.clock, input, batch, this.testClocks);
  }

  private validUrl(url: string, problems: Problems): void {
    const checked = checkUrl(url, this.policy);
    if (!checked.ok) problems.add('url', checked.reason);
  }

  private validEvents(events: string[], problems: Problems): string[] {
    events.forEach((type, i) => {
      if (!this.eventTypes.includes(type)) {
        problems.add(`events.${i}`, `is not a known event type; use one of ${this.eventTypes.join(', ')}`);
      }
    });
    return [...new Set(events)];
  }

  /**
   * docs/api.md#webhooks: the answer carries the secret, shown here only. The actor's principal (the
   * account for API keys, the user for sessions) is recorded as the subscription's creator, and its
   * mode as the subscription's (docs/api.md#test-mode): it receives events of that mode only.
   */
  async create(actor: Actor, input: Static<typeof CreateBody>) {
    const problems = new Problems();
    this.validUrl(input.url, problems);
    const events = this.validEvents(input.events, problems);
    problems.throwIfAny();
    const now = actor.clock.now();
    const secret = generateWebhookSecret();
    const id = prefixedId('wh', now.getTime());
    await insertWebhook(this.db, {
      id,
      account_id: actor.accountId,
      principal_id: actor.principalId,
      livemode: actor.livemode,
      url: input.url,
      events,
      description: input.description ?? '',
      active: true,
      secret_enc: encryptSecret(this.encryptionKey, secret),
      previous_secret_enc: null,
      previous_secret_expires_at: null,
      created_at: now,
      updated_at: now,
    });
    return {
      id,
      url: input.url,
      events,
      description: input.description ?? '',
      livemode: actor.livemode,
      secret,
      created_at: now.toISOString(),
    };
  }

  async list(actor: Actor, query: Static<typeof ListQuery>) {
    const rows = await listWebhooks(
      this.db,
      actor,
      decodeCursor(query.cursor, { prefix: 'wh' }),
      query.limit,
    );
    const { items, pagination } = page(rows, query.limit);
    const nowMs = this.clock.nowMs();
    return { webhooks: items.map((r) => presentWebhook(r, nowMs)), pagination };
  }

  /** A subscription of the actor's account and mode; another mode's is not found (404), as another account's. */
  private async mustFind(db: Db | Tx, actor: Actor, id: string, forUpdate = false): Promise<WebhookRow> {
    const row = await findWebhook(db, actor, id, { forUpdate });
    if (!row) throw new NotFound('No webhook with this id');
    return row;
  }

  async get(actor: Actor, id: string): Promise<PresentedWebhook> {
    return presentWebhook(await this.mustFind(this.db, actor, id), this.clock.nowMs());
  }

  /** Pausing (`active: false`) ends the pending deliveries as failed; they can be retried by hand. */
  async update(actor: Actor, id: string, patch: Static<typeof UpdateBody>): Promise<PresentedWebhook> {
    const problems = new Problems();
    if (patch.url !== undefined) this.validUrl(patch.url, problems);
    const events = patch.events !== undefined ? this.validEvents(patch.events, problems) : undefined;
    problems.throwIfAny();
    return withTransaction(this.db, async (trx) => {
      const current = await this.mustFind(trx, actor, id, true);
      const now = actor.clock.now();
      const row = await updateWebhook(trx, id, {
        ...(patch.url !== undefined ? { url: patch.url } : {}),
        ...(events !== undefined ? { events } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.active !== undefined ? { active: patch.active } : {}),
        updated_at: now,
      });
      // Deliveries are real-world sends: their times are the server's.
      if (current.active && patch.active === false) await failPendingDeliveries(trx, id, this.clock.now());
      return presentWebhook(row, this.clock.nowMs());
    });
  }

  async remove(actor: Actor, id: string): Promise<void> {
    if (!(await deleteWebhook(this.db, actor, id))) throw new NotFound('No webhook with this id');
  }

  /** A new secret, shown once; the previous one keeps signing alongside for ROTATION_OVERLAP_MS. */
  async rotateSecret(actor: Actor, id: string) {
    return withTransaction(this.db, async (trx) => {
      const current = await this.mustFind(trx, actor, id, true);
      const now = actor.clock.now();
      const secret = generateWebhookSecret();
      const row = await updateWebhook(trx, id, {
        secret_enc: encryptSecret(this.encryptionKey, secret),
        previous_secret_enc: current.secret_enc,
        // The overlap is of signing real deliveries: it runs on the server's clock in either mode.
        previous_secret_expires_at: new Date(this.clock.nowMs() + ROTATION_OVERLAP_MS),
        updated_at: now,
      });
      return { ...presentWebhook(row, this.clock.nowMs()), secret };
    });
  }

  /** Sends a `webhook.test` event to this subscription only (whatever types it lists). */
  async sendTest(actor: Actor, id: string): Promise<{ event: StoredEvent; delivery: PresentedDelivery }> {
    return withTransaction(this.db, async (trx) => {
      const hook = await this.mustFind(trx, actor, id);
      if (!hook.active) throw new Conflict('The webhook is inactive; activate it to send a test event');
      // The event is of the subscription's mode (the actor's), stamped with its clock; the delivery is
      // made now, in real time.
      const event = await insertEvent(trx, actor.clock, {
        accountId: actor.accountId,
        type: TEST_EVENT_TYPE,
        data: { webhook_id: id, message: 'This is a test event sent from the Kairos API.' },
        principalId: null,
        livemode: hook.livemode,
      });
      const now = this.clock.now();
      const target = { webhook_id: id, event_id: event.id, event_type: TEST_EVENT_TYPE };
      const { rows, made } = await makeDeliveries(trx, [target], now);
      // Made unless a pause committed since the look above (the insert checks again, under a lock).
      if (made.length === 0) throw new Conflict('The webhook is inactive; activate it to send a test event');
      const created: DeliveryRow = {
        ...rows[0]!,
        status: 'pending',
        attempt_count: 0,
        next_attempt_at: now,
        created_at: now,
        updated_at: now,
      };
      return { event, delivery: presentDelivery(created, []) };
    });
  }

  async listDeliveries(actor: Actor, webhookId: string, query: Static<typeof DeliveriesQuery>) {
    await this.mustFind(this.db, actor, webhookId);
    const rows = await listDeliveries(
      this.db,
      webhookId,
      { status: query.status, eventType: query.event_type },
      decodeCursor(query.cursor, { prefix: 'whd' }),
      query.limit,
    );
    const { items, pagination } = page(rows, query.limit);
    const attempts = await attemptsOf(
      this.db,
      items.map((d) => d.id),
    );
    return { deliveries: items.map((d) => presentDelivery(d, attempts.get(d.id) ?? [])), pagination };
  }

  /** One manual attempt of a failed delivery, made by a worker at once and recorded as manual. */
  async retryDelivery(actor: Actor, webhookId: string, deliveryId: string): Promise<PresentedDelivery> {
    return withTransaction(this.db, async (trx) => {
      const hook = await this.mustFind(trx, actor, webhookId);
      const delivery = await findDelivery(trx, webhookId, deliveryId, { forUpdate: true });
      if (!delivery) throw new NotFound('No delivery with this id for this webhook');
      if (delivery.status !== 'failed') {
        throw new Conflict(`Only failed deliveries can be retried; this one is ${delivery.status}`);
      }
      if (!hook.active) throw new Conflict('The webhook is inactive; activate it before retrying');
      const now = this.clock.now();
      const job = attemptJob(delivery, true);
      await enqueueMany(trx, ATTEMPT_QUEUE, [{ payload: job.payload, runAt: now }]);
      const row = await updateDelivery(trx, delivery.id, {
        status: 'pending',
        next_attempt_at: now,
        pending_job: job.token,
        updated_at: now,
      });
      const attempts = await attemptsOf(trx, [row.id]);
      return presentDelivery(row, attempts.get(row.id) ?? []);
    });
  }

  /**
   * An event of the caller's account and mode, as delivered (receivers may re-fetch instead of trusting
   * a body); another mode's is not found.
   */
  async getEvent(actor: Actor, id: string): Promise<StoredEvent> {
    const event = await findEvent(this.db, actor.accountId, actor.livemode, id);
    if (!event) throw new NotFound('No event with this id');
    return event;
  }
}
