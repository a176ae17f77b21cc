/** TypeBox schemas of the webhook routes (validation, OpenAPI and types in one). */
import { Type } from '@sinclair/typebox';
import { MAX_OUTBOUND_URL_LENGTH } from '../../platform/outbound.js';
import { ListQuery, named, Pagination, StringEnum, Timestamp } from '../../platform/schemas.js';
import { TEST_EVENT_TYPE } from './events.js';

const ID_CHARS = '[0-9a-z]{26}';
export const WebhookId = Type.String({ pattern: `^wh_${ID_CHARS}$`, description: 'webhook id (wh_…)' });
export const DeliveryId = Type.String({ pattern: `^whd_${ID_CHARS}$`, description: 'delivery id (whd_…)' });
export const EventId = Type.String({ pattern: `^evt_${ID_CHARS}$`, description: 'event id (evt_…)' });

/**
 * The event types (docs/api.md#events) are the catalogue the modules declare, known once they are
 * composed: the routes register them as two shared schemas (`eventTypeSchemas`) that these refer to.
 */
const EventTypeName = Type.Unsafe<string>({ $ref: 'EventType#' });
const Url = Type.String({
  minLength: 1,
  maxLength: MAX_OUTBOUND_URL_LENGTH,
  format: 'uri',
  description: 'Receiver of the HTTP POST deliveries; https only (private addresses are refused)',
});
const Description = Type.String({ maxLength: 2000 });
const Events = Type.Array(EventTypeName, { minItems: 1, maxItems: 50 });

/** What answers carry: one of the subscribable types. */
const SubscribedType = EventTypeName;
/** A delivered event's type: a subscribable one, or the test event. */
const DeliveredType = Type.Unsafe<string>({ $ref: 'DeliveredEventType#' });

/** The shared schemas of the event types of this composition: subscribable, and delivered. */
export function eventTypeSchemas(types: readonly string[]) {
  return [
    {
      $id: 'EventType',
      type: 'string',
      enum: [...types],
      description: 'A webhook event type (docs/api.md#events)',
    },
    {
      $id: 'DeliveredEventType',
      type: 'string',
      enum: [...types, TEST_EVENT_TYPE],
      description: `A webhook event type, or ${TEST_EVENT_TYPE} (sent by POST /v1/webhooks/{id}/test)`,
    },
  ] as const;
}
const ReceiverUrl = Type.String({ format: 'uri', description: 'Receiver of the HTTP POST deliveries' });

export const CreateBody = Type.Object(
  { url: Url, events: Events, description: Type.Optional(Description) },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    active: Type.Optional(
      Type.Boolean({ description: 'false pauses deliveries; pending ones end as failed' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** docs/api.md#webhooks: the bare creation answer, the only place the secret appears. */
export const CreatedWebhook = named(
  'CreatedWebhook',
  Type.Object({
    id: WebhookId,
    url: ReceiverUrl,
    events: Type.Array(SubscribedType),
    description: Type.String(),
    livemode: Type.Boolean({
      description: 'false: made with a test key; receives test-mode events only (docs/api.md#test-mode)',
    }),
    secret: Type.String({ pattern: '^whsec_', description: 'signing secret; shown only in this response' }),
    created_at: Timestamp,
  }),
);

export const Webhook = named(
  'Webhook',
  Type.Object({
    id: WebhookId,
    url: ReceiverUrl,
    events: Type.Array(SubscribedType),
    description: Type.String(),
    active: Type.Boolean(),
    livemode: Type.Boolean({
      description: 'false: made with a test key; receives test-mode events only (docs/api.md#test-mode)',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
      description: 'after a rotation: until when the previous secret still signs deliveries',
    }),
  }),
);

export const RotatedWebhook = Type.Intersect([
  Webhook,
  Type.Object({
    secret: Type.String({ pattern: '^whsec_', description: 'the new secret; shown only here' }),
  }),
]);

export const Attempt = named(
  'DeliveryAttempt',
  Type.Object({
    number: Type.Integer({ minimum: 1 }),
    at: Timestamp,
    manual: Type.Boolean({ description: 'made by POST …/deliveries/{id}/retry' }),
    response_status: Type.Union([Type.Integer(), Type.Null()]),
    duration_ms: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()], {
      description: 'null on 2xx; `HTTP <status>`, `timeout`, `refused: <reason>` or the network error',
    }),
    response_body: Type.Union([Type.String(), Type.Null()], { description: 'first KiB of the answer' }),
  }),
);

export const DeliveryStatusSchema = named(
  'DeliveryStatus',
  StringEnum(['pending', 'succeeded', 'failed'], { name: 'DeliveryStatus' }),
);

export const Delivery = named(
  'Delivery',
  Type.Object({
    id: DeliveryId,
    webhook_id: WebhookId,
    event_id: EventId,
    event_type: DeliveredType,
    status: DeliveryStatusSchema,
    attempts: Type.Array(Attempt),
    next_attempt_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
  }),
);

export const Event = named(
  'Event',
  Type.Object(
    {
      id: EventId,
      type: DeliveredType,
      created_at: Timestamp,
      livemode: Type.Boolean({ description: 'false for an event of test mode (docs/api.md#test-mode)' }),
      data: Type.Record(Type.String(), Type.Unknown()),
    },
    { description: 'The event envelope (docs/api.md#events), as delivered' },
  ),
);

export const DeliveriesQuery = Type.Composite(
  [
    ListQuery,
    Type.Object({
      status: Type.Optional(DeliveryStatusSchema),
      event_type: Type.Optional(Type.String({ maxLength: 64 })),
    }),
  ],
  { additionalProperties: false },
);

export const WebhookParams = Type.Object({ id: WebhookId }, { additionalProperties: false });
export const DeliveryParams = Type.Object(
  { id: WebhookId, delivery_id: DeliveryId },
  { additionalProperties: false },
);
export const EventParams = Type.Object({ id: EventId }, { additionalProperties: false });

export const WebhookList = Type.Object({ webhooks: Type.Array(Webhook), pagination: Pagination });
export const DeliveryList = Type.Object({ deliveries: Type.Array(Delivery), pagination: Pagination });
export const TestSent = Type.Object({ event: Event, delivery: Delivery });
