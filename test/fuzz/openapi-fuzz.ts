/**
 * Seeded, OpenAPI-driven HTTP fuzzing of a running Kairos server.
 *
 * `prepareWorld` reads `/v1/openapi.json`, enumerates every operation and creates what the requests
 * refer to (hosts, webhooks with a delivery and an event, deletable API keys, a publishable key, a user
 * session, connect-link tokens, OAuth states). `Fuzzer` then generates requests with fast-check — valid
 * ones built from each operation's parameter and body schemas, and mutated ones (NUL characters, 10k
 * strings, wrong types, unknown and missing fields, forged cursors, malformed percent-encoding, long path
 * parameters, odd request-target forms, unknown methods, non-JSON bodies, broken framing, oversized
 * headers, bad credentials) — sends each one verbatim (node:http with a raw `path`, or a raw socket for
 * what node:http refuses to send) and checks every answer:
 *
 * - status < 500, answered within 5 s;
 * - status >= 400: `application/problem+json` with `type`, `title`, `status` (= the HTTP status),
 *   `detail` and `request_id` (`req_` + 26 base-36 characters, equal to `X-Request-Id` except on an
 *   idempotent replay, whose stored body names the request that produced it);
 * - no body shows a stack trace, `node_modules`, SQL / PostgreSQL error text or `FST_ERR`;
 * - a connection closed without any byte is accepted only for requests Node's HTTP parser may reject;
 *   whatever the server writes is parsed and held to the rules above.
 *
 * Requests that would destroy the fuzzer's own credentials are never sent with them (see `guard`):
 * DELETE /v1/api-keys/{id} only names "victim" keys created for it (any other spelling of a DELETE that
 * names a key the fuzzer authenticates with is sent without a credential), and DELETE
 * /v1/sessions/current is never sent with the session token in use (other credentials and no credential
 * still exercise it).
 *
 * Deleted hosts, webhooks and victim keys leave the id pools and are replaced; created ones join them.
 *
 * Outbound calls (webhook test/retry, ICS and CalDAV connect, OAuth token exchange) only ever go to
 * hostnames under .invalid (RFC 2606: never resolves, so nothing leaves the machine and the lookup
 * fails at once), to addresses the SSRF guard refuses before connecting, or — set up by the caller —
 * to a closed local port, so no generated URL can hold an answer past 5 s; an answer that still takes
 * longer is reported.
 *
 * Request `i` is of kind `REQUEST_KINDS[i % REQUEST_KINDS.length]` (valid, or one mutation) and is
 * generated from `(seed, i)` alone, so a failure is reproduced by the seed and the index (the ids it
 * names are those of the run's own resources, so they differ between runs).
 */
import http from 'node:http';
import net from 'node:net';
import fc from 'fast-check';
import { eventCatalogue } from '../../src/modules/index.js';

// ─── OpenAPI ────────────────────────────────────────────────────────────────────────────────────────

export interface JsonSchema {
  type?: string | string[];
  format?: string;
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  minProperties?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  description?: string;
}

export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  /** Required and without a default: a request without it is invalid. */
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  /** `METHOD /path/{template}` */
  id: string;
  method: string;
  path: string;
  params: Param[];
  body: { required: boolean; contentType: string; schema: JsonSchema } | null;
}

interface OpenApiOperation {
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: JsonSchema }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

const DOC_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** Every operation (path + method) of an OpenAPI document. */
export function operationsOf(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [m, o] of Object.entries(item)) {
      if (!DOC_METHODS.includes(m)) continue;
      const params: Param[] = [];
      for (const p of o.parameters ?? []) {
        if (p.in !== 'path' && p.in !== 'query' && p.in !== 'header') continue;
        const schema = p.schema ?? {};
        params.push({
          name: p.name,
          in: p.in,
          required: p.in === 'path' || (p.required === true && schema.default === undefined),
          schema,
        });
      }
      const content = o.requestBody?.content ?? {};
      const contentType = Object.keys(content)[0];
      ops.push({
        id: `${m.toUpperCase()} ${path}`,
        method: m.toUpperCase(),
        path,
        params,
        body:
          contentType === undefined
            ? null
            : {
                required: o.requestBody?.required === true,
                contentType,
                schema: content[contentType]?.schema ?? {},
              },
      });
    }
  }
  return ops;
}

// ─── The world: credentials and the resources requests refer to ────────────────────────────────────

export type CredentialKind = 'secret' | 'secret-other-account' | 'publishable' | 'session' | 'none';
export const CREDENTIAL_KINDS: readonly CredentialKind[] = [
  'secret',
  'secret-other-account',
  'publishable',
  'session',
  'none',
];
const CREDENTIAL_LABEL: Record<CredentialKind, string> = {
  secret: 'secret key of account A',
  'secret-other-account': 'secret key of account B',
  publishable: 'publishable key of account A',
  session: 'session token of a user of account A',
  none: 'no credential',
};

export interface AccountWorld {
  label: 'A' | 'B';
  secret: string;
  /** The account's own principal, and for A the user's. */
  principals: string[];
  hosts: string[];
  /** API keys the fuzzer may delete. */
  victimKeys: string[];
  webhooks: string[];
  deliveries: Array<{ webhook: string; delivery: string }>;
  events: string[];
  connectTokens: string[];
  oauthStates: string[];
  cursors: string[];
}

export interface World {
  baseUrl: string;
  host: string;
  port: number;
  operations: Operation[];
  a: AccountWorld;
  b: AccountWorld;
  publishable: string;
  session: string;
  user: { id: string; email: string; password: string };
  /** Key ids the fuzzer authenticates with: never deleted. */
  protectedKeyIds: string[];
  /** A fixed instant (start of the current hour) that generated dates are relative to. */
  now: number;
  /** Setup steps that could not be done (the fuzzer runs without them). */
  notes: string[];
}

export interface AccountSeed {
  id: string;
  key: string;
  keyId: string;
}

export interface PrepareOptions {
  baseUrl: string;
  /** The primary account (enterprise, high rate limit) and a second one for cross-account requests. */
  accountA: AccountSeed;
  accountB: AccountSeed;
  /** Creates a user who can sign in (the API has no route for it; the CLI uses the account service). */
  createUser(accountId: string, email: string, password: string): Promise<{ id: string }>;
}

function get(o: unknown, ...keys: string[]): unknown {
  let v = o;
  for (const k of keys)
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string')
    throw new Error(`fuzz setup: expected a string for ${what}, got ${JSON.stringify(v)}`);
  return v;
}

async function api(
  baseUrl: string,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const h: Record<string, string> = { ...headers };
  if (token) h.authorization = `Bearer ${token}`;
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: h,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`fuzz setup: ${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as unknown) : null;
}

let serial = 0;

async function createHost(baseUrl: string, acc: AccountWorld): Promise<string> {
  const n = ++serial;
  const r = await api(baseUrl, 'POST', '/v1/hosts', acc.secret, {
    display_name: `Fuzz host ${acc.label}${n}`,
    email: `fuzz-host-${acc.label.toLowerCase()}${n}@example.com`,
    timezone: 'Europe/Paris',
  });
  return str(get(r, 'host', 'principal_id'), 'host.principal_id');
}

async function createWebhook(baseUrl: string, acc: AccountWorld): Promise<string> {
  const r = await api(baseUrl, 'POST', '/v1/webhooks', acc.secret, {
    url: `https://hooks.example.invalid/kairos/${acc.label.toLowerCase()}${++serial}`,
    events: ['booking.created', 'booking.cancelled'],
    description: 'fuzz',
  });
  return str(get(r, 'id'), 'webhook.id');
}

async function createVictimKey(baseUrl: string, acc: AccountWorld): Promise<string> {
  const r = await api(baseUrl, 'POST', '/v1/api-keys', acc.secret, { name: `fuzz victim ${++serial}` });
  return str(get(r, 'api_key', 'id'), 'api_key.id');
}

/** Optional seeds: a failure is noted, not fatal. */
async function optional(world: { notes: string[] }, what: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    world.notes.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function seedAccount(baseUrl: string, acc: AccountWorld, notes: string[]): Promise<void> {
  const me = await api(baseUrl, 'GET', '/v1/me', acc.secret);
  acc.principals.push(str(get(me, 'principal_id'), 'me.principal_id'));
  for (let i = 0; i < 2; i++) {
    acc.hosts.push(await createHost(baseUrl, acc));
    acc.webhooks.push(await createWebhook(baseUrl, acc));
    acc.victimKeys.push(await createVictimKey(baseUrl, acc));
  }
  const w = { notes };
  await optional(w, `account ${acc.label}: webhook test delivery`, async () => {
    const webhook = acc.webhooks[0]!;
    const r = await api(baseUrl, 'POST', `/v1/webhooks/${webhook}/test`, acc.secret);
    acc.events.push(str(get(r, 'event', 'id'), 'event.id'));
    acc.deliveries.push({ webhook, delivery: str(get(r, 'delivery', 'id'), 'delivery.id') });
  });
  await optional(w, `account ${acc.label}: connect link`, async () => {
    const r = await api(baseUrl, 'POST', `/v1/hosts/${acc.hosts[0]}/connect-link`, acc.secret, {});
    const url = new URL(str(get(r, 'connect_link', 'url'), 'connect_link.url'));
    acc.connectTokens.push(decodeURIComponent(url.pathname.split('/').pop() ?? ''));
  });
  await optional(w, `account ${acc.label}: OAuth state`, async () => {
    const r = await api(
      baseUrl,
      'GET',
      `/v1/calendars/google/connect?principal_id=${acc.hosts[0]}`,
      acc.secret,
      undefined,
      { accept: 'application/json' },
    );
    const state = new URL(str(get(r, 'authorize_url'), 'authorize_url')).searchParams.get('state');
    if (state) acc.oauthStates.push(state);
  });
}

function emptyAccount(label: 'A' | 'B', secret: string): AccountWorld {
  return {
    label,
    secret,
    principals: [],
    hosts: [],
    victimKeys: [],
    webhooks: [],
    deliveries: [],
    events: [],
    connectTokens: [],
    oauthStates: [],
    cursors: [],
  };
}

/** Reads the OpenAPI document and creates the credentials and resources the fuzzer uses. */
export async function prepareWorld(opts: PrepareOptions): Promise<World> {
  const { baseUrl } = opts;
  const doc = (await api(baseUrl, 'GET', '/v1/openapi.json', null)) as OpenApiDocument;
  const operations = operationsOf(doc);
  if (operations.length === 0) throw new Error('fuzz setup: the OpenAPI document has no operations');
  const notes: string[] = [];
  const a = emptyAccount('A', opts.accountA.key);
  const b = emptyAccount('B', opts.accountB.key);
  await seedAccount(baseUrl, a, notes);
  await seedAccount(baseUrl, b, notes);

  const pk = await api(baseUrl, 'POST', '/v1/api-keys', a.secret, {
    name: 'fuzz publishable',
    key_type: 'publishable',
    rate_limit_per_hour: 10_000_000,
    allowed_domains: ['example.com'],
  });
  const email = 'fuzz-user@example.com';
  const password = 'correct horse battery staple';
  const user = await opts.createUser(opts.accountA.id, email, password);
  a.principals.push(user.id);
  const session = await api(baseUrl, 'POST', '/v1/sessions', null, { email, password });
  const url = new URL(baseUrl);
  return {
    baseUrl,
    host: url.hostname,
    port: Number(url.port),
    operations,
    a,
    b,
    publishable: str(get(pk, 'api_key', 'key'), 'publishable key'),
    session: str(get(session, 'session', 'token'), 'session token'),
    user: { id: user.id, email, password },
    protectedKeyIds: [
      opts.accountA.keyId,
      opts.accountB.keyId,
      str(get(pk, 'api_key', 'id'), 'publishable id'),
    ],
    now: Math.floor(Date.now() / 3_600_000) * 3_600_000,
    notes,
  };
}

function tokenOf(w: World, c: CredentialKind): string | null {
  switch (c) {
    case 'secret':
      return w.a.secret;
    case 'secret-other-account':
      return w.b.secret;
    case 'publishable':
      return w.publishable;
    case 'session':
      return w.session;
    case 'none':
      return null;
  }
}

function accountOf(w: World, c: CredentialKind): AccountWorld | null {
  if (c === 'secret' || c === 'session') return w.a;
  if (c === 'secret-other-account') return w.b;
  return null;
}

// ─── Value arbitraries ──────────────────────────────────────────────────────────────────────────────

const ZONES = [
  'UTC',
  'Europe/Paris',
  'America/New_York',
  'Asia/Kolkata',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'America/St_Johns',
  'Etc/GMT+12',
  'Not/AZone',
];
const NIL_UUID = '00000000-0000-4000-8000-000000000000';

const enc = encodeURIComponent;

function b64url(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64url');
}

function isoAt(ms: number, tz: string): string {
  if (tz === 'Z') return new Date(ms).toISOString();
  const sign = tz[0] === '-' ? -1 : 1;
  const [h, m] = tz.slice(1).split(':').map(Number);
  const local = ms + sign * ((h ?? 0) * 60 + (m ?? 0)) * 60_000;
  return new Date(local).toISOString().replace('Z', tz);
}

const TZ_SUFFIXES = ['Z', 'Z', '+00:00', '+02:00', '-05:00', '+05:30', '+13:45'];

function dateTimeArb(w: World): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.integer({ min: -24 * 30, max: 24 * 120 }),
      fc.constantFrom(0, 15, 30),
      fc.constantFrom(...TZ_SUFFIXES),
    )
    .map(([h, m, tz]) => isoAt(w.now + h * 3_600_000 + m * 60_000, tz));
}

const dateArb = fc
  .date({ min: new Date('2024-01-01T00:00:00Z'), max: new Date('2028-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

const timeArb = fc
  .oneof(
    { weight: 5, arbitrary: fc.tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 15, 30, 45)) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 })) },
    { weight: 1, arbitrary: fc.constant<[number, number]>([24, 0]) },
  )
  .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);

const emailArb = fc.oneof(
  fc.constantFrom('host@example.com', 'Someone.Else+tag@Example.COM', 'a@b.co'),
  fc.emailAddress().filter((e) => e.length <= 320),
);

/** Outbound URLs that fail fast on a machine without internet (no DNS answer) — never a hang. */
const webhookUrlArb = fc.oneof(
  fc.constantFrom('https://hooks.example.invalid/x', 'https://hooks.example.invalid/kairos?tenant=1'),
  fc.stringMatching(/^[a-z]{1,10}$/).map((s) => `https://${s}.example.invalid/hook/${s}`),
  fc.constantFrom(
    'http://hooks.example.invalid/x',
    'https://127.0.0.1/x',
    'https://10.0.0.1/x',
    'https://[::1]/x',
    'https://localhost/x',
    'ftp://hooks.example.invalid/x',
    'not a url',
    'https://hooks.example.invalid/x',
  ),
);
const icsUrlArb = fc.constantFrom(
  'https://calendar.example.invalid/feed.ics',
  'webcal://calendar.example.invalid/basic.ics',
  'https://calendar.example.invalid/x.ics',
  'http://calendar.example.invalid/feed.ics',
  'https://127.0.0.1/feed.ics',
  'https://169.254.169.254/latest/meta-data',
  'file:///etc/passwd',
  'not a url',
);
const caldavUrlArb = fc.constantFrom(
  'https://caldav.example.invalid/',
  'https://caldav.example.invalid/dav/principals/me/',
  'http://caldav.example.invalid/',
  'https://127.0.0.1:8443/',
  'caldav.example.invalid',
);

/** Mostly an id from a pool (account A's, sometimes B's: cross-account), else `fallback`. */
function pickFrom(lists: (acc: AccountWorld) => string[], w: World, fallback: fc.Arbitrary<string>) {
  const known = fc.tuple(fc.integer({ min: 0, max: 3 }), fc.nat(), fallback).map(([owner, i, fb]) => {
    const list = lists(owner === 3 ? w.b : w.a);
    return list.length === 0 ? fb : list[i % list.length]!;
  });
  return fc.oneof({ weight: 4, arbitrary: known }, { weight: 1, arbitrary: fallback });
}

function principalArb(w: World): fc.Arbitrary<string> {
  return pickFrom((acc) => [...acc.principals, ...acc.hosts], w, fc.uuid());
}

function genericString(s: JsonSchema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.max(min, Math.min(s.maxLength ?? 40, 40));
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength: min, maxLength: max }) },
    { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }) },
  );
}

function patternArb(pattern: string): fc.Arbitrary<string> | null {
  if (pattern === '^\\d{2}:\\d{2}$') return timeArb;
  try {
    return fc.stringMatching(new RegExp(pattern));
  } catch {
    return null;
  }
}

interface Hint {
  name: string;
  op: Operation;
  in: 'path' | 'query' | 'header' | 'body';
}

/** Values that satisfy a schema (mostly: some are valid in form only, e.g. an unknown time zone). */
function schemaArb(w: World, s: JsonSchema, hint: Hint, depth = 0): fc.Arbitrary<unknown> {
  const special = namedArb(w, s, hint);
  if (special) return special;
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum && s.enum.length > 0) return fc.constantFrom(...s.enum);
  const alts = s.anyOf ?? s.oneOf;
  if (alts && alts.length > 0) return fc.oneof(...alts.map((a) => schemaArb(w, a, hint, depth + 1)));
  if (s.allOf && s.allOf.length > 0)
    return schemaArb(w, Object.assign({}, ...s.allOf) as JsonSchema, hint, depth);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((t) => schemaArb(w, { ...s, type: t }, hint, depth)));
  switch (types[0]) {
    case 'string': {
      if (s.pattern) {
        const p = patternArb(s.pattern);
        if (p) return p;
      }
      switch (s.format) {
        case 'uuid':
          return fc.uuid();
        case 'date-time':
          return dateTimeArb(w);
        case 'date':
          return dateArb;
        case 'email':
          return emailArb;
        case 'uri':
          return fc.constantFrom('https://app.example.com/callback', 'https://app.example.com/cb?x=1');
      }
      return genericString(s);
    }
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = s.minItems ?? 0;
      const max = Math.max(min, Math.min(s.maxItems ?? 3, 3));
      return fc.array(schemaArb(w, s.items ?? {}, hint, depth + 1), { minLength: min, maxLength: max });
    }
    case 'object':
      return objectArb(w, s, hint, depth);
  }
  if (s.properties) return objectArb(w, s, hint, depth);
  return depth > 2 ? fc.constant('x') : fc.jsonValue({ maxDepth: 2 });
}

function objectArb(w: World, s: JsonSchema, hint: Hint, depth: number): fc.Arbitrary<unknown> {
  const props = s.properties ?? {};
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, ps] of Object.entries(props)) model[k] = schemaArb(w, ps, { ...hint, name: k }, depth + 1);
  const requiredKeys = (s.required ?? []).filter((k) => k in props);
  return fc
    .record(model, { requiredKeys })
    .map((o) => ({ ...o }))
    .filter((o) => Object.keys(o).length >= Math.min(s.minProperties ?? 0, Object.keys(props).length));
}

/** Values chosen by a field's meaning rather than its schema alone. */
function namedArb(w: World, s: JsonSchema, h: Hint): fc.Arbitrary<unknown> | null {
  const { name, op } = h;
  if (h.in === 'path') {
    const p = op.path;
    if (name === 'id' && p.startsWith('/v1/api-keys/')) {
      // DELETE only ever names victim keys: the fuzzer's own keys must survive (see the module comment).
      const lists =
        op.method === 'DELETE'
          ? (acc: AccountWorld) => acc.victimKeys
          : (acc: AccountWorld) => [...acc.victimKeys, ...w.protectedKeyIds];
      return pickFrom(lists, w, fc.uuid());
    }
    if (name === 'id' && p.startsWith('/v1/hosts/')) return pickFrom((acc) => acc.hosts, w, fc.uuid());
    if (name === 'id' && p.startsWith('/v1/principals/')) return principalArb(w);
    if (name === 'id' && p.startsWith('/v1/webhooks/'))
      return pickFrom(
        (acc) => acc.webhooks,
        w,
        schemaArb(w, { ...s }, { ...h, name: '' }) as fc.Arbitrary<string>,
      );
    if (name === 'id' && p.startsWith('/v1/events/'))
      return pickFrom(
        (acc) => acc.events,
        w,
        schemaArb(w, { ...s }, { ...h, name: '' }) as fc.Arbitrary<string>,
      );
    if (name === 'token')
      return pickFrom(
        (acc) => acc.connectTokens,
        w,
        fc.stringMatching(/^[A-Za-z0-9_.-]{10,100}$/).filter((t) => t.length >= 10 && t.length <= 100),
      );
    return null;
  }
  if (name === 'principal_id' || name === 'business_id') return principalArb(w);
  if (name === 'principal_ids')
    return fc.uniqueArray(principalArb(w), { minLength: 2, maxLength: 5 }).map((ids) => ids.join(','));
  if (name === 'timezone') return fc.constantFrom(...ZONES);
  if (name === 'events') {
    const EVENT_TYPES = subscribable();
    return fc.oneof(
      { weight: 5, arbitrary: fc.subarray([...EVENT_TYPES], { minLength: 1, maxLength: 4 }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(['webhook.test'], ['*'], ['booking.created', 'no.such.event']),
      },
    );
  }
  if (name === 'event_type') return fc.constantFrom(...subscribable(), 'webhook.test');
  if (name === 'url' && op.path.startsWith('/v1/webhooks')) return webhookUrlArb;
  if (name === 'url' && op.path.startsWith('/v1/calendars')) return icsUrlArb;
  if (name === 'server_url') return caldavUrlArb;
  if (name === 'redirect_uri')
    return fc.constantFrom(
      'https://app.example.com/cb',
      'https://app.example.com/cb?x=1',
      'javascript:alert(1)',
    );
  if (name === 'email' && op.path === '/v1/sessions')
    return fc.oneof(fc.constant(w.user.email), fc.constant(w.user.email.toUpperCase()), emailArb);
  if (name === 'password' && op.path === '/v1/sessions')
    return fc.oneof(fc.constant(w.user.password), genericString({ minLength: 1, maxLength: 30 }));
  if (name === 'state' && op.path.endsWith('/callback'))
    return pickFrom((acc) => acc.oauthStates, w, genericString({ maxLength: 60 }));
  if (name === 'cursor')
    return pickFrom(
      (acc) => acc.cursors,
      w,
      fc.tuple(dateTimeArb(w), fc.uuid()).map(([at, id]) => b64url(`${new Date(at).toISOString()}|${id}`)),
    );
  if (name === 'expires_at')
    return fc
      .integer({ min: -48, max: 24 * 400 })
      .map((hours) => new Date(w.now + hours * 3_600_000).toISOString());
  if (name === 'allowed_domains')
    return fc.oneof(
      { weight: 4, arbitrary: fc.subarray(['example.com', 'app.example.com', 'shop.example.org']) },
      {
        weight: 1,
        arbitrary: fc.array(fc.constantFrom('localhost', '*.example.com', 'EXAMPLE.COM', ''), {
          maxLength: 2,
        }),
      },
    );
  if (name === 'scopes')
    return fc.oneof(
      { weight: 2, arbitrary: fc.subarray(['read', 'write']) },
      { weight: 2, arbitrary: fc.subarray(['read:availability', 'create:booking']) },
      { weight: 1, arbitrary: fc.array(fc.constantFrom('admin', '', 'read', 'READ'), { maxLength: 2 }) },
    );
  if (name === 'rate_limit_per_hour')
    return fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 1, max: 10_000_000 }) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 2_000_000_000 }) },
    );
  if (name === 'idempotency-key')
    // Mostly fresh keys; sometimes one shared key, whose reuse with another request is a 422.
    return fc.oneof(
      { weight: 6, arbitrary: fc.uuid().map((u) => `fuzz-${u}`) },
      { weight: 1, arbitrary: fc.constant('fuzz-replayed-key') },
    );
  return null;
}

// ─── Drafts: a request before it becomes bytes ──────────────────────────────────────────────────────

type Framing =
  | 'normal'
  | 'cl-and-te'
  | 'bad-chunk'
  | 'cl-not-a-number'
  | 'cl-shorter-than-body'
  | 'duplicate-cl'
  | 'no-host'
  | 'http/1.0'
  | 'bad-version'
  | 'bare-lf'
  | 'obs-fold'
  | 'space-in-header-name';

type TargetForm =
  | 'origin'
  | 'absolute'
  | 'absolute-https'
  | 'absolute-other-host'
  | 'double-slash'
  | 'dot-segment'
  | 'dot-dot-segment'
  | 'encoded-slash'
  | 'encoded-dot-segment'
  | 'upper-case'
  | 'trailing-slash'
  | 'empty-segment'
  | 'backslash'
  | 'fragment'
  | 'matrix-parameter'
  | 'asterisk';

interface PathValue {
  value: string;
  /** Already percent-encoded text, inserted verbatim. */
  raw?: boolean;
}

interface QueryItem {
  name: string;
  value: string;
  raw?: boolean;
}

type DraftBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; bytes: Buffer; contentType: string | null; extraHeaders?: Array<[string, string]> };

interface Draft {
  op: Operation;
  mutation: string;
  variant: string;
  credential: CredentialKind;
  /** The Authorization header: `{{token}}` is replaced by the credential's token; null: none sent. */
  authorization: string | null | 'default';
  method: string;
  path: Record<string, PathValue>;
  /** Replaces the rendered path (already encoded) when set. */
  pathOverride?: string;
  query: QueryItem[];
  targetForm: TargetForm;
  headers: Array<[string, string]>;
  body: DraftBody | null;
  framing: Framing;
  parserMayReject: boolean;
}

function credentialArb(op: Operation): fc.Arbitrary<CredentialKind> {
  // Signing out with the session in use would end the fuzzer's session: left to the other credentials.
  const kinds =
    op.method === 'DELETE' && op.path === '/v1/sessions/current'
      ? CREDENTIAL_KINDS.filter((k) => k !== 'session')
      : CREDENTIAL_KINDS;
  // Credentials that pass the gate are favoured, so that most requests reach the handlers.
  const weight: Record<CredentialKind, number> = {
    secret: 3,
    session: 2,
    'secret-other-account': 2,
    publishable: 2,
    none: 1,
  };
  return fc.noBias(fc.oneof(...kinds.map((k) => ({ weight: weight[k], arbitrary: fc.constant(k) }))));
}

function queryValueText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function queryArb(w: World, op: Operation): fc.Arbitrary<QueryItem[]> {
  const qs = op.params.filter((p) => p.in === 'query');
  const names = new Set(qs.map((p) => p.name));
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of qs) {
    const arb = schemaArb(w, p.schema, { name: p.name, op, in: 'query' });
    model[p.name] = p.required ? arb : fc.option(arb, { nil: undefined, freq: 2 });
  }
  // `from` and `to` together: a window of up to ~70 days (62 is the limit), mostly valid.
  const window =
    names.has('from') && names.has('to')
      ? fc
          .tuple(
            dateTimeArb(w),
            fc.oneof(
              { weight: 8, arbitrary: fc.integer({ min: 15, max: 62 * 24 * 60 }) },
              { weight: 1, arbitrary: fc.integer({ min: -60, max: 0 }) },
              { weight: 1, arbitrary: fc.integer({ min: 62 * 24 * 60, max: 70 * 24 * 60 }) },
            ),
            fc.constantFrom(...TZ_SUFFIXES),
          )
          .map(([from, minutes, tz]) => ({ from, to: isoAt(Date.parse(from) + minutes * 60_000, tz) }))
      : fc.constant(null);
  return fc.tuple(fc.record(model), window).map(([values, win]) => {
    const v: Record<string, unknown> = { ...values };
    if (win) Object.assign(v, win);
    // business_id and its alias principal_id are each optional, but one of them is needed.
    if (names.has('business_id') && v.business_id === undefined && v.principal_id === undefined)
      v.principal_id = w.a.hosts[0] ?? w.a.principals[0];
    return qs
      .filter((p) => v[p.name] !== undefined)
      .map((p) => ({ name: p.name, value: queryValueText(v[p.name]) }));
  });
}

function pathArb(w: World, op: Operation): fc.Arbitrary<Record<string, PathValue>> {
  const ps = op.params.filter((p) => p.in === 'path');
  if (op.path.includes('{delivery_id}')) {
    // A delivery and its own webhook, so the pair can exist.
    const pair = fc.tuple(fc.integer({ min: 0, max: 3 }), fc.nat()).map(([owner, i]) => {
      const list = (owner === 3 ? w.b : w.a).deliveries;
      return list.length === 0
        ? { webhook: 'wh_00000000000000000000000000', delivery: 'whd_00000000000000000000000000' }
        : list[i % list.length]!;
    });
    const random = fc
      .tuple(fc.stringMatching(/^wh_[0-9a-z]{26}$/), fc.stringMatching(/^whd_[0-9a-z]{26}$/))
      .map(([webhook, delivery]) => ({ webhook, delivery }));
    return fc
      .oneof({ weight: 4, arbitrary: pair }, { weight: 1, arbitrary: random })
      .map((p) => ({ id: { value: p.webhook }, delivery_id: { value: p.delivery } }));
  }
  const model: Record<string, fc.Arbitrary<PathValue>> = {};
  for (const p of ps) {
    model[p.name] = schemaArb(w, p.schema, { name: p.name, op, in: 'path' }).map((v) => ({
      value: queryValueText(v),
    }));
  }
  return fc.record(model).map((r) => ({ ...r }));
}

function headersArb(w: World, op: Operation): fc.Arbitrary<Array<[string, string]>> {
  const hs = op.params.filter((p) => p.in === 'header');
  const parts: fc.Arbitrary<Array<[string, string]>>[] = hs.map((p) =>
    fc
      .option(schemaArb(w, p.schema, { name: p.name, op, in: 'header' }), { nil: undefined })
      .map((v): Array<[string, string]> => (v === undefined ? [] : [[p.name, queryValueText(v)]])),
  );
  parts.push(
    fc
      .option(fc.constantFrom('application/json', 'text/html', '*/*', 'application/problem+json'), {
        nil: undefined,
        freq: 3,
      })
      .map((v): Array<[string, string]> => (v === undefined ? [] : [['accept', v]])),
  );
  return fc.tuple(...parts).map((xs) => xs.flat());
}

function bodyArb(w: World, op: Operation): fc.Arbitrary<DraftBody | null> {
  if (!op.body) return fc.constant(null);
  return schemaArb(w, op.body.schema, { name: '', op, in: 'body' }).map((value) => ({ kind: 'json', value }));
}

/** A valid request for `op` (valid in form: ids may not exist, values may be refused by the service). */
export function validDraftArb(w: World, op: Operation, cred?: CredentialKind): fc.Arbitrary<Draft> {
  // Without bias: every request is the first sample of its own seed, where fast-check's bias would
  // make most values the same few small ones (one UUID, one idempotency key, empty strings).
  return fc
    .noBias(
      fc.record({
        credential: cred ? fc.constant(cred) : credentialArb(op),
        path: pathArb(w, op),
        query: queryArb(w, op),
        headers: headersArb(w, op),
        body: bodyArb(w, op),
      }),
    )
    .map((r) => ({
      op,
      mutation: 'valid',
      variant: '',
      credential: r.credential,
      authorization: 'default' as const,
      method: op.method,
      path: r.path,
      query: r.query,
      targetForm: 'origin' as const,
      headers: r.headers,
      body: r.body,
      framing: 'normal' as const,
      parserMayReject: false,
    }));
}

// ─── Mutations ──────────────────────────────────────────────────────────────────────────────────────

type JsonPath = Array<string | number>;

function leaves(
  v: unknown,
  pred: (x: unknown) => boolean,
  path: JsonPath = [],
  out: JsonPath[] = [],
): JsonPath[] {
  if (pred(v)) out.push(path);
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) leaves(x, pred, [...path, i], out);
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) leaves(x, pred, [...path, k], out);
  }
  return out;
}

function setAt(v: unknown, path: JsonPath, nv: unknown): unknown {
  if (path.length === 0) return nv;
  const [head, ...rest] = path as [string | number, ...JsonPath];
  if (Array.isArray(v)) {
    const copy = [...v];
    copy[head as number] = setAt(copy[head as number], rest, nv);
    return copy;
  }
  const obj = v !== null && typeof v === 'object' ? { ...(v as Record<string, unknown>) } : {};
  obj[head as string] = setAt(obj[head as string], rest, nv);
  return obj;
}

function deleteAt(v: unknown, path: JsonPath): unknown {
  if (path.length === 0) return undefined;
  const [head, ...rest] = path as [string | number, ...JsonPath];
  if (rest.length === 0) {
    if (Array.isArray(v)) return v.filter((_, i) => i !== head);
    const obj = { ...(v as Record<string, unknown>) };
    delete obj[head as string];
    return obj;
  }
  return setAt(v, [head], deleteAt((v as Record<string | number, unknown>)[head], rest));
}

const LONG = 10_000;
const longStrings = [
  'a'.repeat(LONG),
  'é'.repeat(LONG),
  '😀'.repeat(LONG / 2),
  'ab '.repeat(LONG / 3 + 1).slice(0, LONG),
  '\\'.repeat(LONG),
];

/** Where a string can be put: a body field, a query parameter, a path parameter. */
type Slot =
  | { kind: 'body'; path: JsonPath }
  | { kind: 'query'; index: number }
  | { kind: 'path'; name: string };

function stringSlots(d: Draft): Slot[] {
  const slots: Slot[] = [];
  if (d.body?.kind === 'json') {
    for (const p of leaves(d.body.value, (x) => typeof x === 'string')) slots.push({ kind: 'body', path: p });
    const props = d.op.body?.schema.properties ?? {};
    for (const [k, s] of Object.entries(props))
      if (s.type === 'string' || s.anyOf || s.format) slots.push({ kind: 'body', path: [k] });
  }
  d.query.forEach((_, index) => {
    slots.push({ kind: 'query', index });
  });
  for (const name of Object.keys(d.path)) slots.push({ kind: 'path', name });
  return slots;
}

/** Puts into `slot`: `text(original)` in a JSON body, `raw(encodedOriginal)` verbatim in the target. */
function fillSlot(
  d: Draft,
  slot: Slot,
  text: (orig: string) => string,
  raw: (encoded: string) => string,
): Draft {
  if (slot.kind === 'body' && d.body?.kind === 'json') {
    let orig = '';
    try {
      const cur = slot.path.reduce<unknown>((o, k) => get(o, String(k)), d.body.value);
      if (typeof cur === 'string') orig = cur;
    } catch {
      // not there yet
    }
    return { ...d, body: { kind: 'json', value: setAt(d.body.value ?? {}, slot.path, text(orig)) } };
  }
  if (slot.kind === 'query') {
    const query = d.query.map((q, i) =>
      i === slot.index ? { name: q.name, value: raw(enc(q.value)), raw: true } : q,
    );
    return { ...d, query };
  }
  if (slot.kind === 'path') {
    const cur = d.path[slot.name]?.value ?? '';
    return { ...d, path: { ...d.path, [slot.name]: { value: raw(enc(cur)), raw: true } } };
  }
  return d;
}

function withQueryDefault(d: Draft): Draft {
  // Ops without query parameters still get a query parameter to put something into.
  if (d.query.length > 0) return d;
  const p = d.op.params.find((x) => x.in === 'query');
  return { ...d, query: [{ name: p?.name ?? 'q', value: 'x' }] };
}

interface Mutation {
  name: string;
  /** Whether the mutation can be applied to requests of this operation. */
  applies(op: Operation): boolean;
  arb(d: Draft, w: World): fc.Arbitrary<Draft>;
}

function variant(d: Draft, mutation: string, v: string, patch: Partial<Draft>): Draft {
  return { ...d, ...patch, mutation, variant: v };
}

const hasPathParams = (op: Operation) => op.params.some((p) => p.in === 'path');
const hasJsonBody = (op: Operation) => op.body !== null;

const FORGED_CURSORS: Array<[string, string]> = [
  ['garbage after |', b64url('2026-01-01T00:00:00.000Z|garbage')],
  ['NUL after |', b64url('2026-01-01T00:00:00.000Z|\u0000')],
  ['NUL inside the id', b64url(`2026-01-01T00:00:00.000Z|${NIL_UUID.slice(0, 8)}\u0000${NIL_UUID.slice(9)}`)],
  ['quote after |', b64url("2026-01-01T00:00:00.000Z|' OR '1'='1")],
  ['year -271821', b64url(`-271821-04-20T00:00:00.000Z|${NIL_UUID}`)],
  ['year +275760', b64url(`+275760-09-13T00:00:00.000Z|${NIL_UUID}`)],
  ['year 0', b64url(`0000-01-01T00:00:00.000Z|${NIL_UUID}`)],
  ['year -1', b64url(`-000001-01-01T00:00:00.000Z|${NIL_UUID}`)],
  ['year 9999', b64url(`9999-12-31T23:59:59.999Z|${NIL_UUID}`)],
  ['date only', b64url(`1970-01-01|${NIL_UUID}`)],
  ['Feb 30', b64url(`2026-02-30T00:00:00Z|${NIL_UUID}`)],
  ['number as date', b64url(`0|${NIL_UUID}`)],
  ['empty date', b64url(`|${NIL_UUID}`)],
  ['two bars', b64url(`2026-01-01T00:00:00.000Z|${NIL_UUID}|x`)],
  ['long id', b64url(`2026-01-01T00:00:00.000Z|${'9'.repeat(300)}`)],
  ['prefixed id', b64url('2026-01-01T00:00:00.000Z|wh_00000000000000000000000000')],
  ['not base64', '!!!***'],
  ['padding only', '===='],
  ['over 512 characters', 'A'.repeat(600)],
];

const BAD_PERCENT = [
  '%ZZ',
  '%',
  '%C0%AE',
  '%00',
  '%E0%A4%A',
  '%FF',
  '%%',
  '%u0041',
  '%2',
  '%C0%AF',
  '%ED%A0%80',
];

const BAD_QUERY_VALUES = [
  'abc',
  '1.5',
  '-1',
  '0',
  '1e309',
  '99999999999999999999999',
  '',
  ' 1',
  '0x1f',
  'true',
  'null',
  '[]',
  '{}',
  'not-a-uuid',
  '2026-13-45T99:99:99Z',
  '-271821-04-20T00:00:00.000Z',
  '+275760-09-13T00:00:00.000Z',
  '0000-01-01T00:00:00Z',
  '2026-06-10',
  '2026-06-10T14:00:00',
  'NaN',
  'Infinity',
];

const BAD_PATH_VALUES = [
  'not-a-uuid',
  '123',
  NIL_UUID.toUpperCase(),
  `{${NIL_UUID}}`,
  '..',
  '.',
  ' ',
  'null',
  'undefined',
  '-1',
  'é',
  'wh_AAAAAAAAAAAAAAAAAAAAAAAAAA',
  "1' OR '1'='1",
  '<script>',
  '__proto__',
];

function wrongTypeArb(orig: unknown): fc.Arbitrary<unknown> {
  const all: unknown[] = [0, -1, 1.5, 1e308, true, false, null, [], [1, 'x'], {}, { a: 1 }, 'x', '', '1'];
  return fc.constantFrom(...all.filter((x) => typeof x !== typeof orig || (x === null) !== (orig === null)));
}

const ODD_CONTENT: Array<{
  v: string;
  ct: string | null;
  body: Buffer | string;
  extra?: Array<[string, string]>;
}> = [
  { v: 'text/plain', ct: 'text/plain', body: 'hello' },
  { v: 'form-urlencoded', ct: 'application/x-www-form-urlencoded', body: 'name=x&y=%ZZ' },
  {
    v: 'multipart',
    ct: 'multipart/form-data; boundary=x',
    body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n',
  },
  { v: 'xml', ct: 'application/xml', body: '<a>1</a>' },
  { v: 'no content-type', ct: null, body: '{"name":"x"}' },
  { v: 'truncated JSON', ct: 'application/json', body: '{"name":' },
  { v: 'single quotes', ct: 'application/json', body: "{'name':'x'}" },
  { v: 'open bracket', ct: 'application/json', body: '[' },
  { v: 'NaN', ct: 'application/json', body: 'NaN' },
  { v: 'trailing garbage', ct: 'application/json', body: '{"name":"x"}garbage' },
  { v: 'BOM', ct: 'application/json', body: '\ufeff{"name":"x"}' },
  { v: 'empty', ct: 'application/json', body: '' },
  { v: 'whitespace', ct: 'application/json', body: '  \n ' },
  { v: 'null', ct: 'application/json', body: 'null' },
  { v: 'string', ct: 'application/json', body: '"x"' },
  { v: 'number', ct: 'application/json', body: '123' },
  { v: 'array', ct: 'application/json', body: '[]' },
  { v: 'deep nesting', ct: 'application/json', body: `${'['.repeat(5000)}${']'.repeat(5000)}` },
  { v: 'deep object', ct: 'application/json', body: `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}` },
  { v: '__proto__', ct: 'application/json', body: '{"__proto__":{"polluted":1},"name":"x"}' },
  {
    v: 'constructor.prototype',
    ct: 'application/json',
    body: '{"constructor":{"prototype":{"polluted":1}}}',
  },
  { v: 'duplicate keys', ct: 'application/json', body: '{"name":"x","name":5}' },
  { v: 'huge number', ct: 'application/json', body: '{"name":"x","limit":1e999,"expires_in_hours":1e999}' },
  {
    v: 'invalid UTF-8',
    ct: 'application/json',
    body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  },
  { v: 'lone surrogate', ct: 'application/json', body: '{"name":"\\ud800","display_name":"\\udfff"}' },
  { v: 'escaped NUL key', ct: 'application/json', body: '{"\\u0000":"x","name":"\\u0000"}' },
  {
    v: 'utf-16 charset',
    ct: 'application/json; charset=utf-16',
    body: Buffer.from('{"name":"x"}', 'utf16le'),
  },
  {
    v: 'latin1 charset',
    ct: 'application/json; charset=latin1',
    body: Buffer.from('{"name":"\xe9"}', 'latin1'),
  },
  { v: 'json-patch', ct: 'application/json-patch+json', body: '[]' },
  { v: 'vnd.api+json', ct: 'application/vnd.api+json', body: '{"name":"x"}' },
  { v: 'problem+json', ct: 'application/problem+json', body: '{"name":"x"}' },
  { v: 'upper-case type', ct: 'APPLICATION/JSON', body: '{"name":"x"}' },
  { v: 'bare semicolon', ct: 'application/json;', body: '{"name":"x"}' },
  { v: 'semicolons', ct: ';;;', body: '{}' },
  { v: 'no subtype', ct: 'application/', body: '{}' },
  { v: 'wildcard', ct: '*/*', body: '{}' },
  { v: 'two types', ct: 'application/json, text/plain', body: '{}' },
  {
    v: 'gzip (not gzipped)',
    ct: 'application/json',
    body: '{"name":"x"}',
    extra: [['content-encoding', 'gzip']],
  },
  { v: 'br', ct: 'application/json', body: '{"name":"x"}', extra: [['content-encoding', 'br']] },
  {
    v: 'unknown encoding',
    ct: 'application/json',
    body: '{"name":"x"}',
    extra: [['content-encoding', 'x-fuzz']],
  },
];

const BAD_AUTH: Array<[string, string]> = [
  ['scheme only', 'Bearer'],
  ['scheme and spaces', 'Bearer   '],
  ['basic', 'Basic dXNlcjpwYXNz'],
  ['token scheme', 'Token {{token}}'],
  ['lower-case scheme', 'bearer {{token}}'],
  ['no scheme', '{{token}}'],
  ['extra word', 'Bearer {{token}} extra'],
  ['token + x', 'Bearer {{token}}x'],
  ['truncated token', 'Bearer {{token-truncated}}'],
  ['secret prefix, random', 'Bearer svc_sk_live_0123456789abcdefghijklmnopqrstuv'],
  ['publishable prefix, random', 'Bearer svc_pk_live_0123456789abcdefghijklmnopqrstuv'],
  ['prefix only', 'Bearer svc_sk_live_'],
  ['JWT alg none', `Bearer ${b64url('{"alg":"none","typ":"JWT"}')}.${b64url('{"sub":"x","sid":"y"}')}.`],
  [
    'JWT forged HS256',
    `Bearer ${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url(`{"sub":"${NIL_UUID}","sid":"${NIL_UUID}","exp":99999999999}`)}.${b64url('sig')}`,
  ],
  ['JWT weird claims', `Bearer ${b64url('{"alg":"HS256"}')}.${b64url('{"exp":"soon","sub":5}')}.x`],
  ['JWT bad base64', 'Bearer eyJ!!.eyJ!!.x'],
  ['three dots', 'Bearer a.b.c.d'],
  ['5000-character token', `Bearer ${'a'.repeat(5000)}`],
  ['latin1 bytes', 'Bearer \u00ff\u00fe\u00e9'],
  ['percent-encoded NUL', 'Bearer %00'],
  ['tab separator', 'Bearer\t{{token}}'],
];

const ORIGINS = [
  'null',
  'https://evil.example',
  'https://app.example.com',
  'https://example.com.evil.example',
  'http://[::1',
  'not a url',
  '\u00ff\u00fe',
  'https://example.com:99999',
  `https://${'a'.repeat(300)}.example.com`,
  'file://',
  'https://EXAMPLE.COM',
];

const METHODS_NODE_KNOWS = new Set(http.METHODS);
const ODD_METHODS = [
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'HEAD',
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'MKCOL',
  'PURGE',
  'SEARCH',
  'LINK',
  'UNLOCK',
  'REPORT',
  'M-SEARCH',
  'CONNECT',
  'FOO',
  'get',
  'GETS',
  'BREW',
];

const TARGET_FORMS: TargetForm[] = [
  'absolute',
  'absolute-https',
  'absolute-other-host',
  'double-slash',
  'dot-segment',
  'dot-dot-segment',
  'encoded-slash',
  'encoded-dot-segment',
  'upper-case',
  'trailing-slash',
  'empty-segment',
  'backslash',
  'fragment',
  'matrix-parameter',
  'asterisk',
];

const FRAMINGS: Framing[] = [
  'cl-and-te',
  'bad-chunk',
  'cl-not-a-number',
  'cl-shorter-than-body',
  'duplicate-cl',
  'no-host',
  'http/1.0',
  'bad-version',
  'bare-lf',
  'obs-fold',
  'space-in-header-name',
];

const ODD_HEADERS: Array<[string, Array<[string, string]>]> = [
  ['Expect: x-fuzz', [['expect', 'x-fuzz']]],
  ['Expect: 100-continue', [['expect', '100-continue']]],
  ['Accept: application/xml', [['accept', 'application/xml']]],
  ['Accept-Encoding: nonsense', [['accept-encoding', 'gzip;q=abc, *;q=-1']]],
  ['X-Forwarded-For garbage', [['x-forwarded-for', 'not-an-ip, ::::, 999.1.1.1']]],
  ['Host: other', [['host', 'evil.example']]],
  ['If-None-Match: *', [['if-none-match', '*']]],
  ['Range', [['range', 'bytes=0-1']]],
  ['X-Request-Id spoofed', [['x-request-id', 'spoofed-request-id']]],
  ['Content-Type without body', [['content-type', 'application/json']]],
  ['Cookie garbage', [['cookie', 'kairos_connect=%ZZ; =; ;;']]],
  ['3000 headers', Array.from({ length: 3000 }, (_, i): [string, string] => [`x-fuzz-${i}`, 'v'])],
  [
    'Connection: upgrade',
    [
      ['connection', 'Upgrade'],
      ['upgrade', 'websocket'],
    ],
  ],
];

const MUTATIONS: Mutation[] = [
  {
    name: 'nul-in-body',
    applies: hasJsonBody,
    arb: (d) => {
      const slots = stringSlots(d).filter((s) => s.kind === 'body');
      const all: Slot[] = slots.length > 0 ? slots : [{ kind: 'body', path: ['name'] }];
      return fc
        .tuple(fc.constantFrom(...all), fc.constantFrom('\u0000', 'a\u0000b', 'end\u0000'))
        .map(([slot, s]) =>
          variant(
            fillSlot(
              d.body ? d : { ...d, body: { kind: 'json', value: {} } },
              slot,
              () => s,
              (e) => e,
            ),
            'nul-in-body',
            JSON.stringify(s),
            {},
          ),
        );
    },
  },
  {
    name: 'nul-in-query',
    applies: () => true,
    arb: (d) => {
      const dq = withQueryDefault(d);
      return fc.tuple(fc.nat(), fc.constantFrom('%00', 'a%00b', 'tail%00')).map(([i, s]) =>
        variant(
          fillSlot(
            dq,
            { kind: 'query', index: i % dq.query.length },
            (o) => o,
            (e) => (s === 'tail%00' ? `${e}%00` : s),
          ),
          'nul-in-query',
          s,
          {},
        ),
      );
    },
  },
  {
    name: 'nul-in-path',
    applies: hasPathParams,
    arb: (d) =>
      fc.tuple(fc.constantFrom(...Object.keys(d.path)), fc.constantFrom('%00', 'tail%00')).map(([name, s]) =>
        variant(
          fillSlot(
            d,
            { kind: 'path', name },
            (o) => o,
            (e) => (s === '%00' ? s : `${e}%00`),
          ),
          'nul-in-path',
          s,
          {},
        ),
      ),
  },
  {
    name: 'raw-control-character-in-target',
    applies: () => true,
    arb: (d) =>
      fc.constantFrom('\u0000', ' ', '\t', '\u007f', '\u0001', '\r').map((c) =>
        variant(d, 'raw-control-character-in-target', JSON.stringify(c), {
          query: [...d.query, { name: 'x', value: `a${c}b`, raw: true }],
          parserMayReject: true,
        }),
      ),
  },
  {
    name: 'long-string',
    applies: () => true,
    arb: (d) => {
      const dq = withQueryDefault(d);
      const slots = stringSlots(dq);
      return fc.tuple(fc.constantFrom(...slots), fc.constantFrom(...longStrings.keys())).map(([slot, k]) =>
        variant(
          fillSlot(
            dq,
            slot,
            () => longStrings[k]!,
            () => enc(longStrings[k]!),
          ),
          'long-string',
          `${slot.kind}: ${LONG} × ${JSON.stringify(longStrings[k]!.slice(0, 2))}`,
          {},
        ),
      );
    },
  },
  {
    name: 'wrong-type-in-body',
    applies: hasJsonBody,
    arb: (d) => {
      const value = d.body?.kind === 'json' ? d.body.value : {};
      const paths = leaves(value, () => true);
      return fc
        .constantFrom(...paths)
        .chain((p) => {
          const orig = p.reduce<unknown>((o, k) => get(o, String(k)), value);
          return wrongTypeArb(orig).map((nv) => ({ p, nv }));
        })
        .map(({ p, nv }) =>
          variant(d, 'wrong-type-in-body', `${p.join('.') || '(root)'} = ${JSON.stringify(nv)}`, {
            body: { kind: 'json', value: setAt(value, p, nv) },
          }),
        );
    },
  },
  {
    name: 'wrong-type-in-query',
    applies: () => true,
    arb: (d) => {
      const names = d.op.params.filter((p) => p.in === 'query').map((p) => p.name);
      return fc
        .tuple(
          fc.constantFrom(...(names.length > 0 ? names : ['limit'])),
          fc.constantFrom(...BAD_QUERY_VALUES),
        )
        .map(([name, v]) =>
          variant(d, 'wrong-type-in-query', `${name}=${JSON.stringify(v)}`, {
            query: [...d.query.filter((q) => q.name !== name), { name, value: v }],
          }),
        );
    },
  },
  {
    name: 'wrong-format-in-path',
    applies: hasPathParams,
    arb: (d) =>
      fc
        .tuple(fc.constantFrom(...Object.keys(d.path)), fc.constantFrom(...BAD_PATH_VALUES))
        .map(([name, v]) =>
          variant(d, 'wrong-format-in-path', `${name}=${JSON.stringify(v)}`, {
            path: { ...d.path, [name]: { value: v } },
          }),
        ),
  },
  {
    name: 'extra-field',
    applies: () => true,
    arb: (d) =>
      fc
        .tuple(
          fc.constantFrom(
            'unknown_field',
            '__proto__',
            'constructor',
            'prototype',
            '',
            'a.b',
            '$where',
            'ünï',
            'na\u0000me',
          ),
          fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant('x')),
          fc.constantFrom('query', 'query-duplicate', 'body'),
        )
        .map(([k, v, where]) => {
          if (where !== 'body' || !hasJsonBody(d.op)) {
            const dup = d.query[0];
            const extra =
              dup && where === 'query-duplicate'
                ? { name: dup.name, value: '2' }
                : { name: k, value: queryValueText(v) };
            return variant(
              d,
              'extra-field',
              `query ${JSON.stringify(extra.name)}=${JSON.stringify(extra.value)}`,
              {
                query: [...d.query, extra],
              },
            );
          }
          const base =
            d.body?.kind === 'json' && d.body.value && typeof d.body.value === 'object' ? d.body.value : {};
          const objects = leaves(base, (x) => x !== null && typeof x === 'object' && !Array.isArray(x));
          const at = objects[objects.length > 1 ? 1 : 0] ?? [];
          return variant(d, 'extra-field', `body ${[...at, k].join('.')}=${JSON.stringify(v)}`, {
            body: { kind: 'json', value: setAt(base, [...at, k], v) },
          });
        }),
  },
  {
    name: 'missing-required',
    applies: (op) => hasJsonBody(op) || op.params.some((p) => p.in === 'query' && p.required),
    arb: (d) => {
      const choices: Array<() => Draft> = [];
      const value = d.body?.kind === 'json' ? d.body.value : undefined;
      for (const k of d.op.body?.schema.required ?? [])
        choices.push(() =>
          variant(d, 'missing-required', `body.${k}`, {
            body: { kind: 'json', value: deleteAt(value ?? {}, [k]) },
          }),
        );
      if (d.op.body) {
        choices.push(() => variant(d, 'missing-required', 'no body', { body: null }));
        choices.push(() => variant(d, 'missing-required', 'body {}', { body: { kind: 'json', value: {} } }));
        choices.push(() =>
          variant(d, 'missing-required', 'body null', { body: { kind: 'json', value: null } }),
        );
      }
      for (const p of d.op.params.filter((x) => x.in === 'query' && x.required))
        choices.push(() =>
          variant(d, 'missing-required', `query ${p.name}`, {
            query: d.query.filter((q) => q.name !== p.name),
          }),
        );
      return fc.constantFrom(...choices).map((f) => f());
    },
  },
  {
    name: 'forged-cursor',
    applies: (op) => op.params.some((p) => p.name === 'cursor'),
    arb: (d) =>
      fc
        .oneof(
          fc.constantFrom(...FORGED_CURSORS),
          fc
            .uint8Array({ minLength: 1, maxLength: 60 })
            .map((b): [string, string] => ['random bytes', Buffer.from(b).toString('base64url')]),
          fc
            .string({ maxLength: 40 })
            .map((s): [string, string] => ['random text after |', b64url(`2026-01-01T00:00:00.000Z|${s}`)]),
        )
        .map(([v, cursor]) =>
          variant(d, 'forged-cursor', `${v}: ${cursor.slice(0, 80)}`, {
            query: [...d.query.filter((q) => q.name !== 'cursor'), { name: 'cursor', value: cursor }],
          }),
        ),
  },
  {
    name: 'bad-percent-encoding',
    applies: () => true,
    arb: (d) =>
      fc
        .tuple(
          fc.constantFrom(...BAD_PERCENT),
          fc.constantFrom('path-param', 'query-value', 'query-name', 'static-segment'),
        )
        .map(([bad, where]) => {
          const names = Object.keys(d.path);
          if (where === 'path-param' && names.length > 0) {
            const name = names[0]!;
            return variant(d, 'bad-percent-encoding', `${where} ${bad}`, {
              path: { ...d.path, [name]: { value: `${enc(d.path[name]!.value)}${bad}`, raw: true } },
            });
          }
          if (where === 'static-segment') {
            const rendered = renderPath(d);
            const i = rendered.indexOf('/', 1);
            const pathOverride =
              i === -1 ? `${rendered}${bad}` : `${rendered.slice(0, i + 2)}${bad}${rendered.slice(i + 2)}`;
            return variant(d, 'bad-percent-encoding', `${where} ${bad}`, { pathOverride });
          }
          const item =
            where === 'query-name'
              ? { name: `x${bad}`, value: '1', raw: true }
              : { name: d.query[0]?.name ?? 'q', value: bad, raw: true };
          return variant(d, 'bad-percent-encoding', `${where} ${bad}`, {
            query: [...d.query.filter((q) => q.name !== item.name), item],
          });
        }),
  },
  {
    name: 'long-path-parameter',
    applies: hasPathParams,
    arb: (d) =>
      fc
        .tuple(
          fc.constantFrom(...Object.keys(d.path)),
          fc.integer({ min: 101, max: 400 }),
          fc.constantFrom('digits', 'prefixed', 'uuid-padded'),
        )
        .map(([name, n, kind]) => {
          const base = d.path[name]!.value;
          const value =
            kind === 'digits'
              ? '9'.repeat(n)
              : kind === 'prefixed'
                ? `${base.split('_')[0]}_${'a'.repeat(n)}`
                : `${base}${'0'.repeat(n)}`;
          return variant(d, 'long-path-parameter', `${name}: ${value.length} characters (${kind})`, {
            path: { ...d.path, [name]: { value } },
          });
        }),
  },
  {
    name: 'target-form',
    applies: () => true,
    arb: (d) => fc.constantFrom(...TARGET_FORMS).map((f) => variant(d, 'target-form', f, { targetForm: f })),
  },
  {
    name: 'method',
    applies: () => true,
    arb: (d) =>
      fc.constantFrom(...ODD_METHODS.filter((m) => m !== d.op.method)).map((m) =>
        variant(d, 'method', m, {
          method: m,
          parserMayReject: !METHODS_NODE_KNOWS.has(m) || m === 'CONNECT',
        }),
      ),
  },
  {
    name: 'odd-body',
    applies: () => true,
    arb: (d) =>
      fc.constantFrom(...ODD_CONTENT).map((c) =>
        variant(d, 'odd-body', c.v, {
          body: {
            kind: 'raw',
            bytes: Buffer.isBuffer(c.body) ? c.body : Buffer.from(c.body, 'utf8'),
            contentType: c.ct,
            extraHeaders: c.extra,
          },
        }),
      ),
  },
  {
    name: 'framing',
    applies: () => true,
    arb: (d) =>
      fc.constantFrom(...FRAMINGS).map((f) =>
        variant(d, 'framing', f, {
          framing: f,
          parserMayReject: f !== 'http/1.0' && f !== 'cl-shorter-than-body',
          body: d.body ?? { kind: 'json', value: {} },
        }),
      ),
  },
  {
    name: 'oversized-header',
    applies: () => true,
    arb: (d) =>
      fc.constantFrom('x-fuzz-padding', 'authorization', 'cookie', 'user-agent').map((h) => {
        const big = 'a'.repeat(20 * 1024);
        const headers: Array<[string, string]> = [
          ...d.headers,
          [h, h === 'authorization' ? `Bearer ${big}` : big],
        ];
        return variant(d, 'oversized-header', `20 KB ${h}`, {
          headers,
          authorization: h === 'authorization' ? null : d.authorization,
          parserMayReject: true,
        });
      }),
  },
  {
    name: 'bad-authorization',
    applies: () => true,
    arb: (d) =>
      fc
        .tuple(
          fc.constantFrom(...BAD_AUTH),
          fc.constantFrom<CredentialKind>('secret', 'publishable', 'session', 'secret-other-account'),
        )
        .map(([[v, header], cred]) =>
          variant(d, 'bad-authorization', v, {
            credential: header.includes('{{token') ? cred : 'none',
            authorization: header,
          }),
        ),
  },
  {
    name: 'duplicate-authorization',
    applies: () => true,
    arb: (d) =>
      fc.constantFrom('valid then garbage', 'garbage then valid').map((v) =>
        variant(d, 'duplicate-authorization', v, {
          credential: d.credential === 'none' ? 'secret' : d.credential,
          authorization: 'default',
          headers:
            v === 'valid then garbage'
              ? [...d.headers, ['authorization', 'Bearer garbage']]
              : [['authorization', 'Bearer garbage'], ...d.headers],
        }),
      ),
  },
  {
    name: 'bad-idempotency-key',
    applies: (op) => op.params.some((p) => p.name === 'idempotency-key'),
    arb: (d) =>
      fc
        .constantFrom('k'.repeat(257), 'has space', 'ünï', '', '\t', '%00', 'a, b', 'k'.repeat(10_000), '🙂')
        .map((k) =>
          variant(
            d,
            'bad-idempotency-key',
            JSON.stringify(k.length > 40 ? `${k.slice(0, 3)}…(${k.length})` : k),
            {
              headers: [...d.headers.filter(([n]) => n !== 'idempotency-key'), ['idempotency-key', k]],
            },
          ),
        ),
  },
  {
    name: 'origin',
    applies: () => true,
    arb: (d) =>
      fc.tuple(fc.constantFrom(...ORIGINS), fc.boolean()).map(([o, pk]) =>
        variant(d, 'origin', o.length > 40 ? `${o.slice(0, 30)}…` : o, {
          credential: pk ? 'publishable' : d.credential,
          headers: [...d.headers, ['origin', o]],
        }),
      ),
  },
  {
    name: 'odd-headers',
    applies: () => true,
    arb: (d) =>
      fc
        .constantFrom(...ODD_HEADERS)
        .map(([v, hs]) => variant(d, 'odd-headers', v, { headers: [...d.headers, ...hs] })),
  },
];

export const MUTATION_NAMES = MUTATIONS.map((m) => m.name);

/**
 * The kinds of request, in the round-robin order request indexes take them: valid requests get three
 * slots, every mutation one, so a run of n requests applies each mutation about n / (3 + mutations)
 * times, each time to an operation (and credential) chosen at random among those it applies to.
 */
export const REQUEST_KINDS: readonly string[] = ['valid', ...MUTATIONS.map((m) => m.name), 'valid', 'valid'];

/** Requests of one kind (see REQUEST_KINDS). */
export function requestArb(w: World, kind: string): fc.Arbitrary<Draft> {
  const m = MUTATIONS.find((x) => x.name === kind);
  const ops = m ? w.operations.filter((op) => m.applies(op)) : w.operations;
  return fc
    .noBias(fc.constantFrom(...ops))
    .chain((op) => validDraftArb(w, op).chain((d) => (m ? fc.noBias(m.arb(d, w)) : fc.constant(d))));
}

// ─── Rendering ──────────────────────────────────────────────────────────────────────────────────────

export interface FuzzRequest {
  index: number;
  op: string;
  mutation: string;
  variant: string;
  credential: CredentialKind;
  method: string;
  /** The request target, sent verbatim. */
  target: string;
  /** Header lines in order; `{{token}}` stands for the credential's token. */
  headers: Array<[string, string]>;
  body: Buffer | null;
  framing: Framing;
  transport: 'node:http' | 'raw socket';
  parserMayReject: boolean;
  /** Sent without its credential because it would have destroyed it. */
  disarmed?: string;
}

function renderPath(d: Draft): string {
  return d.op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = d.path[name];
    if (!v) return '';
    return v.raw ? v.value : enc(v.value);
  });
}

function applyTargetForm(form: TargetForm, path: string, query: string, w: World): string {
  const q = query ? `?${query}` : '';
  switch (form) {
    case 'origin':
      return `${path}${q}`;
    case 'absolute':
      return `http://${w.host}:${w.port}${path}${q}`;
    case 'absolute-https':
      return `https://${w.host}:${w.port}${path}${q}`;
    case 'absolute-other-host':
      return `http://evil.example${path}${q}`;
    case 'double-slash':
      return `/${path}${q}`;
    case 'dot-segment':
      return `/.${path.replace(/^\/v1\//, '/v1/./')}${q}`;
    case 'dot-dot-segment':
      return `${path.replace(/^\/v1\//, '/v1/x/../')}${q}`;
    case 'encoded-slash':
      return `${path.slice(0, 1)}${path.slice(1).replace(/\//g, '%2F')}${q}`;
    case 'encoded-dot-segment':
      return `${path.replace(/^\/v1\//, '/v1/%2e/x/%2E%2E/')}${q}`;
    case 'upper-case':
      return `${path.toUpperCase()}${q}`;
    case 'trailing-slash':
      return `${path}/${q}`;
    case 'empty-segment':
      return `${path.replace(/^\/v1\//, '/v1//')}${q}`;
    case 'backslash':
      return `${path.replace(/^\/v1\//, '/v1\\')}${q}`;
    case 'fragment':
      return `${path}${q}#fragment`;
    case 'matrix-parameter':
      return `${path};jsessionid=1${q}`;
    case 'asterisk':
      return '*';
  }
}

const TOKEN_SAFE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE_SAFE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function render(w: World, d: Draft, index: number): FuzzRequest {
  const path = d.pathOverride ?? renderPath(d);
  const query = d.query
    .map((q) => (q.raw ? `${q.name}=${q.value}` : `${enc(q.name)}=${enc(q.value)}`))
    .join('&');
  const target = applyTargetForm(d.targetForm, path, query, w);
  const headers: Array<[string, string]> = [];
  if (d.authorization === 'default') {
    if (d.credential !== 'none') headers.push(['authorization', 'Bearer {{token}}']);
  } else if (d.authorization !== null) headers.push(['authorization', d.authorization]);
  let body: Buffer | null = null;
  if (d.body?.kind === 'json') {
    body = d.body.value === undefined ? null : Buffer.from(JSON.stringify(d.body.value), 'utf8');
    if (body) headers.push(['content-type', 'application/json']);
  } else if (d.body?.kind === 'raw') {
    body = d.body.bytes;
    if (d.body.contentType !== null) headers.push(['content-type', d.body.contentType]);
    headers.push(...(d.body.extraHeaders ?? []));
  }
  headers.push(...d.headers);
  const headBytes = target.length + headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  const raw =
    d.framing !== 'normal' ||
    !/^[\x21-\xff]+$/.test(target) ||
    !TOKEN_SAFE.test(d.method) ||
    d.method === 'CONNECT' ||
    headers.some(([k, v]) => !TOKEN_SAFE.test(k) || !HEADER_VALUE_SAFE.test(v)) ||
    headBytes > 12_000;
  return {
    index,
    op: d.op.id,
    mutation: d.mutation,
    variant: d.variant,
    credential: d.credential,
    method: d.method,
    target,
    headers,
    body,
    framing: d.framing,
    transport: raw ? 'raw socket' : 'node:http',
    // Node's parser refuses heads over 16 KiB (431) and bytes it cannot parse; it may just close.
    parserMayReject: d.parserMayReject || headBytes > 16_000,
  };
}

// ─── Sending ────────────────────────────────────────────────────────────────────────────────────────

export interface ParsedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface Answer {
  responses: ParsedResponse[];
  /** Bytes the server wrote (raw socket), or 1 when node:http saw an unparseable answer. */
  bytes: number;
  ms: number;
  timedOut: boolean;
  error: string | null;
  /** Raw-socket answers that could not be parsed as HTTP responses. */
  unparsed: string | null;
}

export const ANSWER_TIMEOUT_MS = 5_000;

function tokenFor(w: World, req: FuzzRequest): string {
  return tokenOf(w, req.credential) ?? '';
}

function fillHeaders(w: World, req: FuzzRequest): Array<[string, string]> {
  const token = tokenFor(w, req);
  return req.headers.map(([k, v]) => [
    k,
    v
      .replace('{{token-truncated}}', token.slice(0, Math.max(1, token.length - 3)))
      .replace('{{token}}', token),
  ]);
}

function sendHttp(w: World, req: FuzzRequest): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of fillHeaders(w, req)) {
      const cur = headers[k];
      headers[k] = cur === undefined ? v : Array.isArray(cur) ? [...cur, v] : [cur, v];
    }
    if (req.body && headers['content-length'] === undefined)
      headers['content-length'] = String(req.body.length);
    let settled = false;
    const finish = (a: Omit<Answer, 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...a, ms: performance.now() - started });
    };
    const r = http.request({
      host: w.host,
      port: w.port,
      method: req.method,
      path: req.target,
      headers,
      agent: false,
    });
    const timer = setTimeout(() => {
      r.destroy();
      finish({ responses: [], bytes: 0, timedOut: true, error: 'timeout', unparsed: null });
    }, ANSWER_TIMEOUT_MS);
    r.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (e) =>
        finish({ responses: [], bytes: 1, timedOut: false, error: String(e), unparsed: null }),
      );
      res.on('end', () => {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) h[k] = Array.isArray(v) ? v.join(', ') : String(v);
        finish({
          responses: [{ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks) }],
          bytes: 1,
          timedOut: false,
          error: null,
          unparsed: null,
        });
      });
    });
    r.on('error', (e: NodeJS.ErrnoException) => {
      const code = e.code ?? e.message;
      // HPE_*: the server wrote something node:http could not parse as a response.
      finish({
        responses: [],
        bytes: code.startsWith('HPE_') ? 1 : 0,
        timedOut: false,
        error: code,
        unparsed: null,
      });
    });
    r.end(req.body ?? undefined);
  });
}

function rawBytes(w: World, req: FuzzRequest): Buffer {
  const headers = fillHeaders(w, req);
  const body = req.body ?? Buffer.alloc(0);
  const eol = req.framing === 'bare-lf' ? '\n' : '\r\n';
  const version =
    req.framing === 'http/1.0' ? 'HTTP/1.0' : req.framing === 'bad-version' ? 'HTTP/2.7' : 'HTTP/1.1';
  const lines: string[] = [`${req.method} ${req.target} ${version}`];
  if (
    req.framing !== 'no-host' &&
    req.framing !== 'http/1.0' &&
    !headers.some(([k]) => k.toLowerCase() === 'host')
  )
    lines.push(`host: ${w.host}:${w.port}`);
  for (const [k, v] of headers) lines.push(`${k}: ${v}`);
  lines.push('connection: close');
  let payload = body;
  switch (req.framing) {
    case 'cl-and-te':
      lines.push(`content-length: ${body.length}`, 'transfer-encoding: chunked');
      payload = Buffer.concat([
        Buffer.from(`${body.length.toString(16)}\r\n`),
        body,
        Buffer.from('\r\n0\r\n\r\n'),
      ]);
      break;
    case 'bad-chunk':
      lines.push('transfer-encoding: chunked');
      payload = Buffer.from('zz\r\n{}\r\n0\r\n\r\n');
      break;
    case 'cl-not-a-number':
      lines.push('content-length: abc');
      break;
    case 'cl-shorter-than-body':
      lines.push(`content-length: ${Math.min(2, body.length)}`);
      break;
    case 'duplicate-cl':
      lines.push(`content-length: ${body.length}`, `content-length: ${body.length + 1}`);
      break;
    case 'obs-fold':
      lines.push('x-folded: a', ' b');
      if (body.length > 0) lines.push(`content-length: ${body.length}`);
      break;
    case 'space-in-header-name':
      lines.push('x bad: 1');
      if (body.length > 0) lines.push(`content-length: ${body.length}`);
      break;
    default:
      if (body.length > 0) lines.push(`content-length: ${body.length}`);
  }
  return Buffer.concat([Buffer.from(`${lines.join(eol)}${eol}${eol}`, 'utf8'), payload]);
}

/** Parses the HTTP/1.x responses in `buf`; `eof`: the stream has ended (bodies up to the end complete). */
export function parseResponses(
  buf: Buffer,
  method: string,
  eof: boolean,
): { responses: ParsedResponse[]; complete: boolean; error: string | null } {
  const responses: ParsedResponse[] = [];
  let at = 0;
  while (at < buf.length) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end === -1) return { responses, complete: false, error: eof ? 'truncated head' : null };
    const head = buf.subarray(at, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(head[0] ?? '');
    if (!m)
      return { responses, complete: false, error: `not an HTTP status line: ${JSON.stringify(head[0])}` };
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const i = line.indexOf(':');
      if (i <= 0) return { responses, complete: false, error: `bad header line ${JSON.stringify(line)}` };
      const k = line.slice(0, i).trim().toLowerCase();
      const v = line.slice(i + 1).trim();
      headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
    }
    let p = end + 4;
    if (status >= 100 && status < 200) {
      at = p;
      continue;
    }
    let body: Buffer;
    if (method === 'HEAD' || status === 204 || status === 304) {
      body = Buffer.alloc(0);
    } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = [];
      for (;;) {
        const nl = buf.indexOf('\r\n', p);
        if (nl === -1) return { responses, complete: false, error: eof ? 'truncated chunk' : null };
        const size = Number.parseInt(buf.subarray(p, nl).toString('latin1').split(';')[0] ?? '', 16);
        if (Number.isNaN(size)) return { responses, complete: false, error: 'bad chunk size' };
        if (nl + 2 + size + 2 > buf.length)
          return { responses, complete: false, error: eof ? 'truncated chunk' : null };
        parts.push(buf.subarray(nl + 2, nl + 2 + size));
        p = nl + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      if (!Number.isInteger(n) || n < 0) return { responses, complete: false, error: 'bad content-length' };
      if (p + n > buf.length) return { responses, complete: false, error: eof ? 'truncated body' : null };
      body = buf.subarray(p, p + n);
      p += n;
    } else {
      if (!eof) return { responses, complete: false, error: null };
      body = buf.subarray(p);
      p = buf.length;
    }
    responses.push({ status, headers, body });
    at = p;
  }
  return { responses, complete: true, error: null };
}

function sendRaw(w: World, req: FuzzRequest): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | null = null;
    let settled = false;
    const sock = net.connect(w.port, w.host);
    const finish = (timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      const buf = Buffer.concat(chunks);
      const parsed = parseResponses(buf, req.method, true);
      resolve({
        responses: parsed.responses,
        bytes: buf.length,
        ms: performance.now() - started,
        timedOut: timedOut && parsed.responses.length === 0,
        error: timedOut ? 'timeout' : error,
        unparsed: parsed.error
          ? `${parsed.error}: ${JSON.stringify(buf.toString('latin1').slice(0, 300))}`
          : null,
      });
    };
    const timer = setTimeout(() => finish(true), ANSWER_TIMEOUT_MS);
    sock.on('connect', () => sock.write(rawBytes(w, req)));
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    sock.on('close', () => finish(false));
  });
}

export function send(w: World, req: FuzzRequest): Promise<Answer> {
  return req.transport === 'raw socket' ? sendRaw(w, req) : sendHttp(w, req);
}

// ─── Checks ─────────────────────────────────────────────────────────────────────────────────────────

const REQUEST_ID = /^req_[0-9a-z]{26}$/;
const LEAKS: Array<[string, RegExp]> = [
  ['stack trace', /at .*\.(ts|js):\d+/],
  ['node_modules path', /node_modules/],
  [
    'SQL / PostgreSQL error text',
    /invalid input syntax|syntax error at or near|violates|SELECT |INSERT INTO|UPDATE "|DELETE FROM|relation "|invalid byte sequence for encoding|timestamp out of range|date\/time field value out of range|null value in column|duplicate key value|current transaction is aborted/i,
  ],
  ['Fastify error code', /FST_ERR/],
];

function requestText(req: FuzzRequest): string {
  let target = req.target;
  try {
    target += ` ${decodeURIComponent(req.target)}`;
  } catch {
    // malformed on purpose
  }
  return `${target} ${req.headers.map(([k, v]) => `${k}: ${v}`).join('\n')} ${req.body?.toString('utf8') ?? ''}`;
}

/** Operations a person's browser visits (OAuth callback, a host's connect link): pages for browsers. */
const BROWSER_PAGES =
  /^(GET \/v1\/(calendars\/(google|microsoft)\/callback|public\/connect\/\{token\})|POST \/v1\/public\/connect\/\{token\}\/(caldav|ics))$/;

function acceptsHtml(req: FuzzRequest): boolean {
  return req.headers.some(([name, value]) => name.toLowerCase() === 'accept' && /text\/html/i.test(value));
}

/** What is wrong with an answer (empty: nothing). */
export function violations(req: FuzzRequest, ans: Answer): string[] {
  const v: string[] = [];
  if (ans.timedOut) return [`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`];
  if (ans.unparsed) v.push(`server wrote bytes that are not an HTTP response (${ans.unparsed})`);
  if (ans.responses.length === 0) {
    if (ans.bytes > 0 && !ans.unparsed) v.push(`unparseable answer (${ans.error ?? 'no error'})`);
    else if (ans.bytes === 0 && !req.parserMayReject)
      v.push(`connection closed without an answer (${ans.error ?? 'clean close'})`);
    return v;
  }
  if (ans.ms > ANSWER_TIMEOUT_MS) v.push(`answered after ${Math.round(ans.ms)} ms`);
  const echoed = requestText(req);
  for (const r of ans.responses) {
    if (r.status >= 500) v.push(`status ${r.status}`);
    if (r.status >= 400) {
      const ct = r.headers['content-type'] ?? '';
      // The pages a person's browser visits answer a browser (Accept: text/html) with a page.
      const page = BROWSER_PAGES.test(req.op) && /^text\/html\b/i.test(ct) && acceptsHtml(req);
      if (!page && !/^application\/problem\+json\b/i.test(ct))
        v.push(`error is ${ct ? JSON.stringify(ct) : 'without content-type'}, not problem+json`);
      const xid = r.headers['x-request-id'];
      if (req.method === 'HEAD' || page) {
        if (!xid || !REQUEST_ID.test(xid)) v.push('X-Request-Id missing or not req_<26>');
      } else {
        let p: unknown;
        try {
          p = JSON.parse(r.body.toString('utf8'));
        } catch {
          v.push('error body is not JSON');
        }
        if (p !== undefined) {
          if (p === null || typeof p !== 'object' || Array.isArray(p))
            v.push('error body is not a JSON object');
          else {
            const o = p as Record<string, unknown>;
            for (const f of ['type', 'title', 'detail'])
              if (typeof o[f] !== 'string') v.push(`problem without a string ${f}`);
            if (o.status !== r.status)
              v.push(`problem status ${JSON.stringify(o.status)} ≠ HTTP ${r.status}`);
            if (typeof o.request_id !== 'string' || !REQUEST_ID.test(o.request_id))
              v.push('problem request_id missing or not req_<26>');
            // An idempotent replay is the first answer byte for byte: its request_id names the request
            // that produced it (the one in the logs), not this one.
            else if (o.request_id !== xid && r.headers['idempotent-replayed'] !== 'true')
              v.push('problem request_id ≠ X-Request-Id header');
          }
        }
      }
    }
    const text = r.body.toString('utf8');
    for (const [what, re] of LEAKS) {
      const m = re.exec(text);
      if (m && !echoed.includes(m[0])) v.push(`body shows ${what} (${JSON.stringify(m[0].slice(0, 60))})`);
    }
  }
  return [...new Set(v)];
}

// ─── Running, collecting, reporting ─────────────────────────────────────────────────────────────────

export interface Failure {
  /** operation + status + first line of the body (normalised) */
  key: string;
  /** the same across operations: mutation + status + violations + first body line */
  group: string;
  op: string;
  status: string;
  violations: string[];
  count: number;
  variants: Set<string>;
  credentials: Set<CredentialKind>;
  seed: number;
  request: FuzzRequest;
  answer: Answer;
}

function firstLine(req: FuzzRequest, ans: Answer, w: World): string {
  const r = ans.responses[0];
  if (!r) return ans.unparsed ? ans.unparsed.slice(0, 120) : `(${ans.error ?? 'no answer'})`;
  let text = (r.body.toString('utf8').split('\n')[0] ?? '').replaceAll(w.baseUrl, '{base}');
  const path = req.target.split('?', 1)[0] ?? req.target;
  const echoes = [req.target, path];
  for (const t of [req.target, path]) {
    try {
      echoes.push(decodeURIComponent(t));
    } catch {
      // malformed on purpose
    }
  }
  for (const t of echoes.sort((a, b) => b.length - a.length))
    if (t.length > 3) text = text.replaceAll(t, '{target}');
  return text
    .replace(/req_[0-9a-z]{26}/g, 'req_…')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '{uuid}')
    .replace(/\b(whd?|evt|cal|conn)_[0-9a-z]{26}\b/g, '$1_…')
    .replace(/(.)\1{20,}/g, '$1…')
    .slice(0, 160);
}

export interface Stats {
  requests: number;
  byCredential: Record<string, number>;
  byStatusClass: Record<string, number>;
  byMutation: Record<string, number>;
  operations: Set<string>;
  atLeast500: number;
  errorsNotProblem: number;
  timeouts: number;
  disarmed: number;
  ms: number;
}

function emptyStats(): Stats {
  return {
    requests: 0,
    byCredential: Object.fromEntries(CREDENTIAL_KINDS.map((k) => [k, 0])),
    byStatusClass: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, 'no answer': 0 },
    byMutation: {},
    operations: new Set(),
    atLeast500: 0,
    errorsNotProblem: 0,
    timeouts: 0,
    disarmed: 0,
    ms: 0,
  };
}

function canonicalPath(target: string): string {
  let p = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  p = p.split(/[?#]/, 1)[0] ?? '';
  try {
    p = decodeURIComponent(p);
  } catch {
    // as sent
  }
  const out: string[] = [];
  for (const seg of p.replace(/\\/g, '/').split(/\/+/)) {
    if (seg === '.' || seg === '') continue;
    if (seg === '..') out.pop();
    else out.push(seg.split(';')[0] ?? seg);
  }
  return `/${out.join('/')}`.toLowerCase();
}

export class Fuzzer {
  readonly stats = emptyStats();
  private readonly arbs = new Map<string, fc.Arbitrary<Draft>>();

  constructor(
    readonly world: World,
    readonly seed: number,
  ) {}

  /** The seed of request `index`: requests depend on (seed, index) only. */
  private seedOf(index: number): number {
    return (Math.imul(this.seed ^ 0x5bd1e995, 0x9e3779b1) + Math.imul(index + 1, 0x85ebca6b)) | 0;
  }

  generate(index: number): Draft {
    const kind = REQUEST_KINDS[index % REQUEST_KINDS.length]!;
    let arb = this.arbs.get(kind);
    if (!arb) {
      arb = requestArb(this.world, kind);
      this.arbs.set(kind, arb);
    }
    return fc.sample(arb, { seed: this.seedOf(index), numRuns: 1 })[0]!;
  }

  /** Never destroys the fuzzer's own credentials: such a request goes out without a credential. */
  private guard(req: FuzzRequest): FuzzRequest {
    if (req.method.toUpperCase() !== 'DELETE') return req;
    const p = canonicalPath(req.target);
    const usesToken = req.headers.some(
      ([k, v]) => k.toLowerCase() === 'authorization' && v.includes('{{token'),
    );
    let why: string | null = null;
    if (p === '/v1/sessions/current' && req.credential === 'session' && usesToken)
      why = 'would sign the fuzzer out';
    for (const id of this.world.protectedKeyIds)
      if (p.includes(id.toLowerCase())) why = 'would revoke a key the fuzzer uses';
    if (!why) return req;
    this.stats.disarmed++;
    return {
      ...req,
      credential: 'none',
      headers: req.headers.filter(([k]) => k.toLowerCase() !== 'authorization'),
      disarmed: why,
    };
  }

  /** Sends one request, updates stats and the pools, returns its violations. */
  async exchange(draft: Draft, index: number, collector: Collector): Promise<void> {
    const req = this.guard(render(this.world, draft, index));
    const ans = await send(this.world, req);
    const s = this.stats;
    s.requests++;
    s.ms += ans.ms;
    s.byCredential[req.credential] = (s.byCredential[req.credential] ?? 0) + 1;
    s.byMutation[req.mutation] = (s.byMutation[req.mutation] ?? 0) + 1;
    s.operations.add(req.op);
    if (ans.timedOut) s.timeouts++;
    if (ans.responses.length === 0) s.byStatusClass['no answer']!++;
    for (const r of ans.responses) {
      const cls = `${Math.floor(r.status / 100)}xx`;
      s.byStatusClass[cls] = (s.byStatusClass[cls] ?? 0) + 1;
      if (r.status >= 500) s.atLeast500++;
      if (r.status >= 400 && !/^application\/problem\+json\b/i.test(r.headers['content-type'] ?? ''))
        s.errorsNotProblem++;
    }
    const v = violations(req, ans);
    if (v.length > 0) collector.add(this, req, ans, v);
    await this.learn(req, ans);
  }

  /** Keeps the id pools current: created resources join, deleted ones leave (and are replaced). */
  private async learn(req: FuzzRequest, ans: Answer): Promise<void> {
    const r = ans.responses[0];
    if (!r || r.status >= 300) return;
    const acc = accountOf(this.world, req.credential);
    const path = canonicalPath(req.target);
    const method = req.method.toUpperCase();
    let json: unknown;
    try {
      json = JSON.parse(r.body.toString('utf8'));
    } catch {
      json = null;
    }
    const cap = (list: string[], id: unknown) => {
      if (typeof id !== 'string' || list.includes(id)) return;
      list.push(id);
      if (list.length > 8) list.shift();
    };
    if (acc && method === 'POST') {
      if (path === '/v1/hosts') cap(acc.hosts, get(json, 'host', 'principal_id'));
      if (path === '/v1/webhooks') cap(acc.webhooks, get(json, 'id'));
      if (path === '/v1/api-keys') cap(acc.victimKeys, get(json, 'api_key', 'id'));
    }
    if (acc && method === 'GET') cap(acc.cursors, get(json, 'pagination', 'next_cursor'));
    if (method === 'DELETE') {
      for (const a of [this.world.a, this.world.b]) {
        for (const list of [a.hosts, a.webhooks, a.victimKeys]) {
          const i = list.findIndex((id) => path.includes(id.toLowerCase()));
          if (i !== -1) list.splice(i, 1);
        }
        if (a.hosts.length === 0) a.hosts.push(await createHost(this.world.baseUrl, a));
        if (a.webhooks.length === 0) a.webhooks.push(await createWebhook(this.world.baseUrl, a));
        if (a.victimKeys.length === 0) a.victimKeys.push(await createVictimKey(this.world.baseUrl, a));
      }
    }
  }

  /** Do the fuzzer's credentials still work? (secret keys and the session: /v1/me; the publishable key: 403) */
  async credentialsAlive(): Promise<string[]> {
    const lost: string[] = [];
    for (const kind of ['secret', 'secret-other-account', 'session', 'publishable'] as const) {
      const res = await fetch(`${this.world.baseUrl}/v1/me`, {
        headers: { authorization: `Bearer ${tokenOf(this.world, kind)}` },
      });
      await res.arrayBuffer();
      const ok = kind === 'publishable' ? res.status === 403 : res.status === 200;
      if (!ok) lost.push(`${CREDENTIAL_LABEL[kind]} answers ${res.status} on GET /v1/me`);
    }
    return lost;
  }

  /** One valid request for every operation with every credential kind. */
  async sweep(collector: Collector): Promise<number> {
    let n = 0;
    for (const [i, op] of this.world.operations.entries()) {
      for (const [j, cred] of CREDENTIAL_KINDS.entries()) {
        if (cred === 'session' && op.method === 'DELETE' && op.path === '/v1/sessions/current') continue;
        const index = -(i * CREDENTIAL_KINDS.length + j + 1);
        const draft = fc.sample(validDraftArb(this.world, op, cred), {
          seed: this.seedOf(index),
          numRuns: 1,
        })[0]!;
        await this.exchange(draft, index, collector);
        n++;
      }
    }
    return n;
  }

  /** `runs` generated requests (indexes 0 … runs-1, or only the given ones). */
  async run(runs: number, collector: Collector, only?: number[]): Promise<void> {
    const indexes = only ?? Array.from({ length: runs }, (_, i) => i);
    for (const [k, i] of indexes.entries()) {
      await this.exchange(this.generate(i), i, collector);
      if ((k + 1) % 250 === 0) {
        const lost = await this.credentialsAlive();
        if (lost.length > 0)
          throw new Error(
            `fuzzer credentials lost after request #${i} (seed ${this.seed}): ${lost.join('; ')}`,
          );
      }
    }
  }

  summary(title: string, collectors: Collector[] = []): string {
    const s = this.stats;
    const distinct = collectors.reduce((n, c) => n + c.size, 0);
    const fmt = (o: Record<string, number>) =>
      Object.entries(o)
        .map(([k, n]) => `${k} ${n}`)
        .join(' · ');
    const line = '─'.repeat(96);
    return [
      line,
      `${title}`,
      `seed                     ${this.seed}   (replay: FUZZ_SEED=${this.seed})`,
      `requests                 ${s.requests} over ${s.operations.size}/${this.world.operations.length} operations, ${Math.round(s.ms / 1000)} s in flight`,
      `by credential            ${fmt(s.byCredential)}`,
      `by status class          ${fmt(s.byStatusClass)}`,
      `answers >= 500           ${s.atLeast500}`,
      `errors not problem+json  ${s.errorsNotProblem}`,
      `no answer within 5 s     ${s.timeouts}`,
      `distinct failures        ${distinct} (listed by the failing tests)`,
      `sent without credential  ${s.disarmed} (would have destroyed the fuzzer's own credential)`,
      `by mutation              ${fmt(Object.fromEntries(Object.entries(s.byMutation).sort()))}`,
      ...(this.world.notes.length > 0 ? [`setup notes              ${this.world.notes.join('; ')}`] : []),
      line,
    ].join('\n');
  }
}

/**
 * Failures of one run, deduplicated by operation + status + first line of the body (normalised: request
 * ids, ids and echoes of the target masked) — and by mutation, so that two causes of the same answer (a
 * 500 from a NUL and a 500 from a cursor on one operation) stay apart.
 */
export class Collector {
  readonly failures = new Map<string, Failure>();

  add(f: Fuzzer, req: FuzzRequest, ans: Answer, v: string[]): void {
    const status = ans.responses.length > 0 ? ans.responses.map((r) => r.status).join('+') : 'no answer';
    const line = firstLine(req, ans, f.world);
    const key = `${req.op} | ${req.mutation} | ${status} | ${line}`;
    const cur = this.failures.get(key);
    if (cur) {
      cur.count++;
      cur.variants.add(`${req.mutation}${req.variant ? `: ${req.variant}` : ''}`);
      cur.credentials.add(req.credential);
      for (const x of v) if (!cur.violations.includes(x)) cur.violations.push(x);
      return;
    }
    this.failures.set(key, {
      key,
      group: `${status} | ${v.map((x) => x.replace(/\(.*\)$/, '').trim()).join('; ')} | ${line}`,
      op: req.op,
      status,
      violations: v,
      count: 1,
      variants: new Set([`${req.mutation}${req.variant ? `: ${req.variant}` : ''}`]),
      credentials: new Set([req.credential]),
      seed: f.seed,
      request: req,
      answer: ans,
    });
  }

  get size(): number {
    return this.failures.size;
  }

  /** Every distinct failure, grouped into classes (status + violations + first body line) across operations. */
  report(): string {
    const groups = new Map<string, Failure[]>();
    for (const f of this.failures.values()) groups.set(f.group, [...(groups.get(f.group) ?? []), f]);
    const out: string[] = [
      `${this.failures.size} distinct failures (operation + mutation + status + first body line) in ${groups.size} classes:`,
    ];
    let g = 0;
    for (const fs of groups.values()) {
      const first = fs[0]!;
      const count = fs.reduce((n, f) => n + f.count, 0);
      const ops = [...new Set(fs.map((f) => f.op))];
      const byMutation = new Map<string, Failure>();
      for (const f of fs) if (!byMutation.has(f.request.mutation)) byMutation.set(f.request.mutation, f);
      out.push(
        '',
        `[${++g}] ${first.status} — ${first.violations.join('; ')}`,
        `    ${count} requests, ${ops.length} operation(s): ${ops.join(', ')}`,
        `    variants: ${[...new Set(fs.flatMap((f) => [...f.variants]))].slice(0, 12).join(' | ')}`,
      );
      for (const f of byMutation.values()) out.push(reproduction(f));
    }
    return out.join('\n');
  }
}

function printable(b: Buffer | string, max = 400): string {
  const s = typeof b === 'string' ? b : b.toString('utf8');
  const j = JSON.stringify(s.length > max ? s.slice(0, max) : s);
  return s.length > max ? `${j}… (${s.length} characters)` : j;
}

export function reproduction(f: Failure): string {
  const q = f.request;
  const r = f.answer;
  const lines = [
    `    reproduce: FUZZ_SEED=${f.seed} FUZZ_ONLY=${q.index}${q.index < 0 ? ' (negative index: the per-operation sweep)' : ''}`,
    `    ${q.method} ${printable(q.target, 300)} via ${q.transport}${q.framing !== 'normal' ? `, framing ${q.framing}` : ''}`,
    `    credential: ${CREDENTIAL_LABEL[q.credential]}${q.disarmed ? ` (disarmed: ${q.disarmed})` : ''}`,
    ...q.headers
      .slice(0, 12)
      .map(
        ([k, v]) =>
          `    ${k}: ${printable(v.replace('{{token}}', `<${CREDENTIAL_LABEL[q.credential]}>`), 120)}`,
      ),
    ...(q.headers.length > 12 ? [`    … ${q.headers.length - 12} more header lines`] : []),
    ...(q.body ? [`    body (${q.body.length} bytes): ${printable(q.body, 300)}`] : []),
  ];
  if (r.responses.length === 0) {
    lines.push(
      `    → ${r.timedOut ? 'no answer within 5 s' : `no answer (${r.error ?? 'closed'})`}${r.unparsed ? `; wrote ${r.unparsed}` : ''}`,
    );
  }
  for (const a of r.responses) {
    lines.push(
      `    → ${a.status} ${a.headers['content-type'] ?? '(no content-type)'}, x-request-id ${a.headers['x-request-id'] ?? '(none)'}, ${Math.round(r.ms)} ms`,
      `      ${printable(a.body, 300)}`,
    );
  }
  return lines.join('\n');
}

/** The event types a subscription may list: every module's declared events but the test event. */
function subscribable(): string[] {
  return [...eventCatalogue().keys()].filter((type) => type !== 'webhook.test');
}
