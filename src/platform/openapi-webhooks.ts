/**
 * The OpenAPI 3.1 top-level `webhooks` of the document: one entry per event type the modules declare
 * (docs/api.md#events), describing the POST a receiver gets: the Standard Webhooks headers, the
 * envelope, and the event's own payload schema as `data`.
 */
import type { TObject } from '@sinclair/typebox';

/** An event type's declaration, as the composition gathers it. */
export interface DeclaredEvent {
  payload: TObject;
}

const header = (name: string, description: string, pattern?: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string', ...(pattern ? { pattern } : {}) },
});

/** `booking.created` → `bookingCreatedEvent`. */
function operationId(type: string): string {
  const words = type.split(/[._]/);
  return `${words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('')}Event`;
}

export function webhooksDocument(events: ReadonlyMap<string, DeclaredEvent>): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [type, { payload }] of events) {
    out[type] = {
      post: {
        operationId: operationId(type),
        tags: ['Webhooks'],
        summary: type,
        description:
          `${payload.description ?? type}. Sent to every active subscription listing \`${type}\` ` +
          '(docs: Signatures and retries): a 2xx ends the delivery; any other answer, or none in time, ' +
          'is retried with the same `webhook-id`, so deliveries are at least once.',
        security: [],
        parameters: [
          header(
            'webhook-id',
            'The event id (`evt_…`), the same on every retry: receivers deduplicate by it',
            '^evt_',
          ),
          header('webhook-timestamp', 'Seconds since the epoch when this attempt was signed', '^[0-9]+$'),
          header('webhook-signature', 'Standard Webhooks signatures (`v1,<base64>`, one per active secret)'),
          header(
            'x-webhook-signature',
            'Lowercase hex HMAC-SHA256 of the raw body with the subscription secret',
            '^[0-9a-f]{64}$',
          ),
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              example: {
                id: 'evt_01jxk9c2f4h6j8k0m2n4p6q8r0',
                type,
                created_at: '2054-06-08T09:15:02.310Z',
                livemode: true,
                data: (payload.examples as unknown[] | undefined)?.[0] ?? {},
              },
              schema: {
                type: 'object',
                additionalProperties: false,
                required: ['id', 'type', 'created_at', 'livemode', 'data'],
                properties: {
                  id: { type: 'string', pattern: '^evt_[0-9a-z]{26}$' },
                  type: { type: 'string', const: type },
                  created_at: { type: 'string', format: 'date-time' },
                  livemode: {
                    type: 'boolean',
                    description: 'false for an event of test mode, sent to test-mode subscriptions only',
                  },
                  data: payload,
                },
              },
            },
          },
        },
        responses: {
          '200': { description: 'Received (any 2xx): the delivery succeeded' },
          default: { description: 'Any other answer, or none within the timeout: the attempt is retried' },
        },
      },
    };
  }
  return out;
}
