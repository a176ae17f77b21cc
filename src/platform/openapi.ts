/**
 * What the OpenAPI document says beyond the schemas: each route's success answer (a description and
 * one realistic example, type-checked against its schema), request-body examples, the tags and the
 * guides rendered at /docs. The convention every route follows is in docs/design.md#openapi.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { COMPONENT } from './schemas.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const COMPONENT_REF = '#/components/schemas/';

/**
 * A schema of the document with every `{$ref: '#/components/schemas/X'}` replaced by the component
 * itself (the document has no cycles), keeping what the reference says beside it (a description): what
 * a validator or a serializer compiles without the rest of the document.
 */
export function inlineComponents(value: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((v) => inlineComponents(v, components));
  if (!isObject(value)) return value;
  if (typeof value.$ref === 'string' && value.$ref.startsWith(COMPONENT_REF)) {
    const { $ref, ...beside } = value;
    const target = inlineComponents(components[$ref.slice(COMPONENT_REF.length)], components) as Json;
    return { ...target, ...(inlineComponents(beside, components) as Json) };
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inlineComponents(v, components)]));
}

/** Keywords whose values are data, not schemas. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);
/** Keywords that annotate a use of a schema without changing what it accepts. */
const ANNOTATIONS = new Set(['description', 'title', 'examples', 'example', 'default', 'deprecated']);

/** JSON with object keys sorted: equal for equal schemas whatever order their keys were written in. */
function stable(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    isObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

/**
 * The document with every schema named by `named()` (platform/schemas.ts, the `x-component` keyword)
 * written once, as `#/components/schemas/<name>`, and referred to wherever it appears: a client
 * generator makes one class of it, not one per place. A use that annotates the schema differently (its
 * own description) keeps that annotation beside the reference. Two different schemas under one name
 * are a mistake in the schemas: the document is not built.
 */
export function liftComponents(doc: Json): Json {
  const components = isObject(doc.components) ? doc.components : {};
  const schemas: Json = { ...(isObject(components.schemas) ? components.schemas : {}) };
  const seen = new Map<string, { shape: string; annotations: Json }>();
  const walk = (value: unknown, at: string): unknown => {
    if (Array.isArray(value)) return value.map((v, i) => walk(v, `${at}/${i}`));
    if (!isObject(value)) return value;
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = DATA_KEYWORDS.has(k) ? v : walk(v, `${at}/${k}`);
    // Written as fastify-swagger writes the routes' schemas, so that the webhooks' payloads (which it does
    // not convert) are the same schemas: a record's pattern as `additionalProperties`, `const` as `enum`.
    const pattern = out.patternProperties;
    if (isObject(pattern) && Object.keys(pattern).length === 1 && isObject(pattern['^(.*)$'])) {
      delete out.patternProperties;
      out.additionalProperties = pattern['^(.*)$'];
    }
    if ('const' in out && (out.type !== undefined || Object.keys(out).length === 1)) {
      out.enum = [out.const];
      delete out.const;
    }
    const name = out[COMPONENT];
    if (typeof name !== 'string') return out;
    delete out[COMPONENT];
    const annotations: Json = {};
    const rule: Json = {};
    for (const [k, v] of Object.entries(out)) (ANNOTATIONS.has(k) ? annotations : rule)[k] = v;
    const shape = stable(rule);
    const known = seen.get(name);
    if (!known) {
      if (name in schemas) throw new Error(`${at}: the component ${name} already exists`);
      seen.set(name, { shape, annotations });
      schemas[name] = out;
      return { $ref: `${COMPONENT_REF}${name}` };
    }
    if (known.shape !== shape) throw new Error(`${at}: another schema is already named ${name}`);
    const own = Object.entries(annotations).filter(([k, v]) => stable(known.annotations[k]) !== stable(v));
    return { $ref: `${COMPONENT_REF}${name}`, ...Object.fromEntries(own) };
  };
  const { components: _, ...rest } = doc;
  const lifted = walk(rest, '#') as Json;
  const liftedSchemas = walk(schemas, '#/components/schemas') as Json;
  // Components lifted while walking the existing ones are added as they were found.
  for (const [k, v] of Object.entries(schemas)) liftedSchemas[k] ??= v;
  return { ...lifted, components: { ...components, schemas: liftedSchemas } };
}

/** What a route says about its answers' headers (its `config`), by `METHOD /openapi/{path}`. */
export interface RouteHeaders {
  /** The rate limiter runs for it (every access but `unmetered`): X-RateLimit-* on its answers. */
  metered: boolean;
  /** It honours Idempotency-Key: a replayed answer says Idempotent-Replayed. */
  idempotent: boolean;
}

/** The response headers Kairos sets (platform/http.ts, gate.ts, idempotency-hooks.ts), as components. */
export const RESPONSE_HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description: 'The request id, also the problem body’s `request_id`: quote it when asking for help',
    required: true,
    schema: { type: 'string', pattern: '^req_[0-9a-hjkmnp-tv-z]{26}$' },
  },
  'X-RateLimit-Limit': {
    description: 'Requests allowed in this hour (docs: Rate limits)',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in this hour (0 when exhausted)',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'When the window ends (ISO 8601)',
    schema: { type: 'string', format: 'date-time' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying',
    schema: { type: 'integer', minimum: 0 },
  },
  'Idempotent-Replayed': {
    description:
      '`true` when this is the remembered answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** `X-RateLimit-Limit` → `XRateLimitLimit`, the header's component name. */
const headerComponent = (name: string) => name.replace(/-/g, '');

/**
 * The document with every answer's headers declared, by reference to `components.headers`:
 * X-Request-Id on all; the rate-limit headers on metered operations (present once the limiter ran);
 * Retry-After on 429 and 503 (and on 409, where an idempotent request is still running);
 * Idempotent-Replayed on the answers an idempotent operation remembers (2xx and 4xx).
 */
export function declareHeaders(doc: Json, routes: ReadonlyMap<string, RouteHeaders>): Json {
  const paths: Json = {};
  for (const [path, item] of Object.entries((doc.paths as Json | undefined) ?? {})) {
    const methods: Json = {};
    for (const [method, op] of Object.entries(item as Json)) {
      if (!isObject(op) || !isObject(op.responses)) {
        methods[method] = op;
        continue;
      }
      const route = routes.get(`${method.toUpperCase()} ${path}`) ?? { metered: true, idempotent: false };
      const responses: Json = {};
      for (const [status, res] of Object.entries(op.responses)) {
        const names = ['X-Request-Id'];
        if (route.metered) names.push('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset');
        if (status === '429' || status === '503' || (status === '409' && route.idempotent)) {
          names.push('Retry-After');
        }
        if (route.idempotent && /^[24]/.test(status) && status !== '429') names.push('Idempotent-Replayed');
        const headers: Json = { ...((res as Json).headers as Json | undefined) };
        for (const n of names) headers[n] ??= { $ref: `#/components/headers/${headerComponent(n)}` };
        responses[status] = { ...(res as Json), headers };
      }
      methods[method] = { ...op, responses };
    }
    paths[path] = methods;
  }
  const components = (doc.components as Json | undefined) ?? {};
  const headers = Object.fromEntries(
    Object.entries(RESPONSE_HEADERS).map(([n, h]) => [headerComponent(n), h]),
  );
  return {
    ...doc,
    paths,
    components: { ...components, headers: { ...(components.headers as Json), ...headers } },
  };
}

/**
 * A success response: `description` replaces fastify-swagger's "Default Response" and `example`
 * becomes the media type's example. The example is typed by the schema, so it cannot drift from it.
 */
export function answer<T extends TSchema>(description: string, schema: T, example: Static<T>): T {
  return { ...schema, 'x-response-description': description, examples: [example] };
}

/** A success response without a body (204, or a redirect whose Location header is the answer). */
export function noContent(description: string): { type: 'null'; 'x-response-description': string } {
  return { type: 'null', 'x-response-description': description };
}

/** A request body with one realistic example (typed by the schema; it becomes the media type's example). */
export function withExample<T extends TSchema>(schema: T, example: Static<T>): T {
  return { ...schema, examples: [example] };
}

/** The tags of the document, in the order the reference shows them, with what each is about. */
export const TAGS: readonly { name: string; description: string }[] = [
  {
    name: 'Sessions',
    description: 'Sign in and out with a user’s e-mail and password, and read who the caller is.',
  },
  {
    name: 'API keys',
    description:
      'Secret keys (`svc_sk_live_…`) for servers, publishable keys (`svc_pk_live_…`) for browsers; ' +
      'test keys (`svc_sk_test_…`, `svc_pk_test_…`) act in test mode. A key’s value is shown once, ' +
      'when it is created.',
  },
  {
    name: 'Test mode',
    description:
      'Test keys see and make test-mode objects only; nothing they do leaves the server (no mail sent, ' +
      'no calendar written, no live Stripe call). The test clock moves test mode’s time forward.',
  },
  {
    name: 'Hosts',
    description:
      'Principals an account manages: each has its own calendars and working hours. A host connects ' +
      'their own calendar through a connect link without the account ever seeing their credentials.',
  },
  { name: 'Schedules', description: 'Working hours, date overrides, buffers and notice of a principal.' },
  {
    name: 'Calendars',
    description:
      'Google and Microsoft (OAuth), CalDAV and read-only ICS feeds: where busy time is read from and ' +
      'where meetings are written.',
  },
  {
    name: 'Availability',
    description:
      'Bookable slots, the first free slot, mutual slots of several principals and the busy/free blocks ' +
      'behind them. Times are UTC; `timezone` only changes labels and grouping.',
  },
  {
    name: 'Bookings',
    description:
      'Bookings of the caller or its hosts. A slot is taken once: a concurrent booking of the same ' +
      'time is 409 `conflict`.',
  },
  {
    name: 'Booking links',
    description: 'Public booking pages (`/book/{slug}`) with their durations, hosts, questions and waitlist.',
  },
  {
    name: 'Public booking surface',
    description:
      'What a booking page calls: anonymous (limited per client address) or with a publishable key. ' +
      'Attendees manage their booking through a self-service token.',
  },
  {
    name: 'Payments',
    description: 'Paid booking links through Stripe Checkout, and Stripe Connect for accounts.',
  },
  { name: 'Webhooks', description: 'Signed HTTP callbacks for events (see *Webhooks* above).' },
  { name: 'Events', description: 'The events webhooks deliver, as delivered.' },
  {
    name: 'Consents',
    description: 'A principal lets another read its availability (and, with `details`, event titles).',
  },
  { name: 'Network', description: 'Invitations by e-mail and the principals connected to the caller.' },
  {
    name: 'Proposals',
    description: 'Meeting times proposed between principals, and polls over several times.',
  },
];

/** Sidebar groups of the reference (`x-tagGroups`); every tag is in exactly one. */
export const TAG_GROUPS: readonly { name: string; tags: string[] }[] = [
  { name: 'Access', tags: ['Sessions', 'API keys', 'Test mode'] },
  { name: 'Scheduling', tags: ['Hosts', 'Schedules', 'Calendars', 'Availability'] },
  { name: 'Booking', tags: ['Bookings', 'Booking links', 'Public booking surface', 'Payments'] },
  { name: 'Notifications', tags: ['Webhooks', 'Events'] },
  { name: 'Sharing', tags: ['Consents', 'Network', 'Proposals'] },
];

/** The guides at the top of the reference (Markdown; docs/api.md is the full contract). */
export function guides(baseUrl: string): string {
  return `Kairos answers availability questions, takes bookings and pushes signed webhooks. Every
endpoint is under \`/v1\`; bodies are JSON (UTF-8, \`snake_case\`); times are ISO 8601 instants,
answered in UTC with milliseconds (\`2054-06-10T14:00:00.000Z\`).

## Authentication

Send a credential as a Bearer token: \`Authorization: Bearer svc_sk_live_…\`.

- **Secret key** (\`svc_sk_live_…\`): everything of its account. For servers; never ship it to a
  browser.
- **Publishable key** (\`svc_pk_live_…\`): only the public booking surface (\`/v1/public/…\`) and
  \`GET /v1/availability/slots\` and \`/next\` for its own account and its hosts; it can be locked
  to \`allowed_domains\` (checked against \`Origin\`).
- **Session token** (a JWT from \`POST /v1/sessions\`): everything of the user’s account, until it
  expires or \`DELETE /v1/sessions/current\`.

An account’s first secret key comes from the command line (\`kairos accounts create --name Acme\`);
further keys from \`POST /v1/api-keys\`. A key’s value is shown once; Kairos stores a keyed hash.
A missing, unknown, revoked or expired credential is 401; a publishable key outside its reach is 403
with \`key_type\` and \`available_scopes\`. Operations marked without authentication (the public booking
surface, sign-in, connect-link pages) take no credential.

\`\`\`sh
curl ${baseUrl}/v1/me -H "Authorization: Bearer $KAIROS_KEY"
\`\`\`

## Errors

Every error, whatever produced it, is \`application/problem+json\` (RFC 9457):

\`\`\`json
{
  "type": "${baseUrl}/errors/validation-error",
  "title": "Validation Error",
  "status": 400,
  "detail": "Invalid request: invitee_email must be an e-mail address",
  "request_id": "req_01jxk7d9m2v8r4c6t0y3w5q1az",
  "errors": { "invitee_email": "must be an e-mail address" }
}
\`\`\`

- \`type\` ends in a stable slug (\`validation-error\`, \`unauthorized\`, \`forbidden\`, \`not-found\`,
  \`conflict\`, \`unprocessable\`, \`rate-limit-exceeded\`, …); it is also a page that explains it
  ([every slug](${baseUrl}/errors)). Branch on the slug, never on \`title\` or \`detail\`.
- \`errors\` maps each refused field to a message (dot paths for nested fields) on 400.
- \`code\` is a machine-readable reason where a client must tell cases apart within one slug (for
  example \`calendar_not_connected\` or \`calendar_read_only\`).
- \`request_id\` is also sent as the \`X-Request-Id\` header of every answer: quote it when asking
  for help.
- Retry 429 and 5xx with exponential backoff (honouring \`retry_after\`), never another 4xx. A 409
  on a slot means it was taken: read availability again and pick another time.

## Rate limits

Limits are per key per hour: the key’s \`rate_limit_per_hour\`, else its account plan’s (free 100,
premium 1,000, enterprise set per account). User sessions count against the user, anonymous calls
to the public surface against the client address. Every answer carries:

| Header | |
|---|---|
| \`X-RateLimit-Limit\` | requests allowed in this hour |
| \`X-RateLimit-Remaining\` | requests left (0 when exhausted) |
| \`X-RateLimit-Reset\` | when the window ends (ISO 8601) |

Over the limit the answer is 429 \`rate-limit-exceeded\` with \`retry_after\` in the body and a
\`Retry-After\` header (seconds).

## Idempotency

Creating POSTs accept an \`Idempotency-Key\` header (1–256 of \`A-Za-z0-9_-:.\`; a UUID is a good
choice). Within 24 hours a repeat with the same key returns the first answer byte for byte, with
\`Idempotent-Replayed: true\`, instead of acting again — so a client can safely retry a request whose
answer it never saw. While the first request still runs a repeat is 409 \`idempotency-key-in-use\`
(retry shortly); the same key with another method, path or body is 422 \`idempotency-key-reused\`.
Keys are scoped to the caller. Successful and 4xx answers are remembered, 5xx answers are not.

\`\`\`sh
curl -X POST ${baseUrl}/v1/bookings -H "Authorization: Bearer $KAIROS_KEY" \\
  -H "Idempotency-Key: 6f1c2e0a-8d9b-4f5e-a3c7-2b1d0e9f8a76" -H "Content-Type: application/json" \\
  -d '{"start_time": "2054-06-10T14:00:00Z", "end_time": "2054-06-10T14:30:00Z", "customer_email": "ada@example.com", "customer_name": "Ada Lovelace"}'
\`\`\`

## Pagination

Lists answer \`{"<items>": […], "pagination": {"next_cursor", "has_more"}}\` and take \`limit\` (1–100,
default 50) and \`cursor\`. To read the next page, send \`next_cursor\` back as \`cursor\`, unchanged;
\`has_more: false\` (and \`next_cursor: null\`) ends the list. Cursors are opaque: one the list did not
issue is 400 with \`errors.cursor\`.

## Webhooks

Subscribe a URL with \`POST /v1/webhooks\`; the answer carries the signing secret (\`whsec_…\`) once.
Each event is delivered as an HTTP POST of \`{"id": "evt_…", "type", "created_at", "data"}\` with:

| Header | |
|---|---|
| \`X-Webhook-Signature\` | lowercase hex HMAC-SHA256 of the raw body, keyed with the secret |
| \`webhook-id\` | the event id, stable across retries (remember it to ignore repeats) |
| \`webhook-timestamp\` | Unix seconds of this attempt (refuse old ones to stop replays) |
| \`webhook-signature\` | Standard Webhooks: space-separated \`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">\`, keyed with the base64-decoded part of the secret after \`whsec_\` |

Verify the signature over the exact bytes received, before parsing them, and compare in constant
time:

\`\`\`ts
import { createHmac, timingSafeEqual } from 'node:crypto';

/** rawBody: the exact bytes received, before any JSON parsing. */
export function verifyKairosSignature(rawBody: Buffer, header: string | undefined, secret: string): boolean {
  if (!header) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'), 'utf8');
  const received = Buffer.from(header, 'utf8');
  return expected.length === received.length && timingSafeEqual(expected, received); // length first
}
\`\`\`

Deliveries are not ordered: several are in flight to one endpoint at once, and retries come later,
so an event may arrive before one that happened earlier: compare the envelopes' \`created_at\`, or
read the resource back, rather than trusting the order of arrival.

Answer 2xx to accept a delivery. Anything else, no answer within 10 seconds or a redirect is
retried after 1, 5 and 30 minutes; after the 4th failed attempt the delivery is \`failed\` (retry it
by hand with \`POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry\`). After
\`POST /v1/webhooks/{id}/rotate-secret\`, \`X-Webhook-Signature\` is still made with the previous
secret for 24 hours (\`previous_secret_expires_at\`) and \`webhook-signature\` carries one entry per
secret; switch receivers to the new secret when the overlap ends.
`;
}
