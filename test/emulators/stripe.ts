/**
 * Stripe emulator: the slice of Stripe's API v1 that Kairos's paid bookings use, on Stripe's wire
 * format, plus webhook delivery signed exactly as Stripe signs it.
 *
 *   POST /v1/checkout/sessions              → checkout.session (mode=payment, line_items[i][price_data])
 *   GET  /v1/checkout/sessions/{id}         → checkout.session; expand[]=payment_intent|line_items
 *   POST /v1/checkout/sessions/{id}/expire  → checkout.session, status expired (+ checkout.session.expired)
 *   POST /v1/refunds                        → refund (payment_intent or charge; amount, reason, metadata)
 *   GET  /v1/refunds/{id}, GET /v1/payment_intents/{id}
 *   POST /v1/accounts, GET /v1/accounts/{id} → account (Connect, express by default)
 *   POST /v1/account_links                  → account_link (url: <emulator>/onboard/<acct>)
 *   GET  /pay/{cs}, GET /onboard/{acct}     → tiny HTML pages (no auth)
 *
 * Wire format, as Stripe: requests are form-encoded with bracket notation (`line_items[0][quantity]=1`,
 * `metadata[k]=v`, `expand[]=x` or `expand[0]=x`; GET parameters in the query string), authenticated
 * with `Authorization: Bearer <secret key>` (Basic with the key as user name works too). Answers are
 * JSON (pretty-printed, as api.stripe.com does) with `Request-Id`, `Original-Request`, `Stripe-Version`
 * and `Content-Type: application/json`; errors are `{error: {type, code?, doc_url?, message, param?}}`.
 * `Stripe-Account` scopes every object (the platform is null; an unknown account answers 403
 * `account_invalid`); `Stripe-Context` is taken as the account when `Stripe-Account` is absent.
 * Idempotency: a POST whose `Idempotency-Key` was seen before (per key and account) answers the
 * stored answer byte for byte with `Idempotent-Replayed: true`; other parameters or another endpoint
 * with that key → 400 `idempotency_error`. As at Stripe, answers of requests that failed validation
 * (400 with a `param`), authentication, `Stripe-Account` checks or `failNext` are not stored: they
 * never reached the endpoint. Answers of executed requests (2xx, `resource_missing`,
 * `charge_already_refunded`, expiring a closed session) are.
 *
 * Pointing the real `stripe` package (v23.1.0) at it:
 *
 *   new Stripe(emu.secretKey, { host: emu.host, port: emu.port, protocol: emu.protocol })
 *
 * In v23 `host` (string), `port` (string | number) and `protocol` ('http' | 'https') are top-level
 * StripeConfig keys (node_modules/stripe/esm/lib.d.ts; stripe.core.js copies them into `_api` and
 * RequestSender sends every request there). A non-default `host` also replaces connect.stripe.com and
 * files.stripe.com (`resolveBaseAddress`). The package puts an `Idempotency-Key: stripe-node-retry-<uuid>`
 * on every v1 POST, even with `maxNetworkRetries: 0`, and its retries (default 2, after ≥ 0.5 s;
 * on connection errors, 409 and ≥ 500 unless `Stripe-Should-Retry: false`) reuse that key.
 *
 * Webhooks: every Event goes to the webhook URL as a POST with the Event's JSON (pretty-printed, as
 * Stripe sends it) and `Stripe-Signature: t=<unix s>,v1=<hex HMAC-SHA256("<t>.<raw body>", secret)>`,
 * computed here with node:crypto. Events of objects on a connected account carry `account`. Test
 * controls (`pay`, `expire`, ...) resolve once the webhook answered and return that answer; events
 * caused by API calls (the expire endpoint) are delivered after the API answered (`settle()` waits).
 * Note for verifiers: v23's `webhooks.constructEvent(payload, header, secret, tolerance,
 * cryptoProvider, receivedAt)` takes `receivedAt` in MILLISECONDS (it floors receivedAt / 1000).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { escapeHtml } from '../../src/lib/html.js';
import { type EmuRequest, type EmuResponse, html, startHttpServer } from './http.js';

/** The API version of stripe@23.1.0 (`Stripe.API_VERSION`), stamped on events by default. */
export const STRIPE_EMULATOR_API_VERSION = '2026-10-28.endive';

export interface StripeEmulatorOptions {
  /** Default `sk_test_kairos`. */
  secretKey?: string;
  /** Default `whsec_kairos_test`. */
  webhookSecret?: string;
  /**
   * A second key, of test mode, for a server that has both (Kairos's STRIPE_TEST_SECRET_KEY). A key's
   * mode is its prefix's, as at Stripe: `sk_live_…` is live (`livemode: true` on its objects and
   * events), any other is test. Each mode sees only its own objects; events of test-mode objects are
   * signed with `testWebhookSecret` (when given), live ones with `webhookSecret`.
   */
  testSecretKey?: string;
  testWebhookSecret?: string;
  /** Epoch ms; object timestamps and the signature's `t=` come from it. Default Date.now. */
  now?: () => number;
  /** Where events are POSTed; without one they are recorded but not sent. */
  webhookUrl?: string;
  /** `api_version` of events and the `Stripe-Version` answered when the request sent none. */
  apiVersion?: string;
  /** How long a webhook delivery may take before it counts as failed, default 30 000 ms. */
  webhookTimeoutMs?: number;
}

/** A parsed form value: bracket notation becomes nested objects, indexed/`[]` keys arrays. */
export type FormValue = string | FormValue[] | FormParams;
export interface FormParams {
  [key: string]: FormValue;
}

export interface StripeErrorDetail {
  type: string;
  code?: string;
  doc_url?: string;
  message: string;
  param?: string;
}

export interface StripeErrorBody {
  error: StripeErrorDetail;
}

export type SessionStatus = 'open' | 'complete' | 'expired';

export interface CheckoutSessionObject {
  id: string;
  object: 'checkout.session';
  amount_subtotal: number;
  amount_total: number;
  cancel_url: string | null;
  client_reference_id: string | null;
  created: number;
  currency: string;
  customer: null;
  customer_details: { email: string | null } | null;
  customer_email: string | null;
  expires_at: number;
  livemode: boolean;
  locale: null;
  metadata: Record<string, string>;
  mode: 'payment';
  payment_intent: string | null;
  payment_status: 'paid' | 'unpaid';
  status: SessionStatus;
  success_url: string;
  ui_mode: 'hosted';
  /** `<emulator>/pay/<id>` while open; null once complete or expired. */
  url: string | null;
}

export type PaymentIntentStatus = 'processing' | 'succeeded' | 'requires_payment_method';

export interface PaymentIntentObject {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  application_fee_amount: number | null;
  capture_method: 'automatic_async';
  client_secret: string;
  created: number;
  currency: string;
  customer: null;
  description: string | null;
  latest_charge: string | null;
  livemode: boolean;
  metadata: Record<string, string>;
  payment_method_types: string[];
  status: PaymentIntentStatus;
}

export interface RefundObject {
  id: string;
  object: 'refund';
  amount: number;
  balance_transaction: null;
  charge: string;
  created: number;
  currency: string;
  metadata: Record<string, string>;
  payment_intent: string;
  reason: string | null;
  receipt_number: null;
  source_transfer_reversal: null;
  status: 'succeeded';
  transfer_reversal: null;
}

export interface AccountObject {
  id: string;
  object: 'account';
  business_type: null;
  capabilities: Record<string, string>;
  charges_enabled: boolean;
  country: string;
  created: number;
  default_currency: string;
  details_submitted: boolean;
  email: string | null;
  metadata: Record<string, string>;
  payouts_enabled: boolean;
  type: 'express' | 'standard' | 'custom';
}

export interface StripeEventObject {
  id: string;
  object: 'event';
  /** Connect events only: the connected account the object lives on. */
  account?: string;
  api_version: string;
  created: number;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
  livemode: boolean;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

export interface DeliverOptions {
  /** Sign with this secret instead of the webhook secret. */
  secret?: string;
  /** The signature's `t=` (unix seconds), default now(). */
  timestampSeconds?: number;
  /** Send this `Stripe-Signature` header verbatim (no signing). */
  signatureHeader?: string;
  /** Send to this URL instead of the webhook URL. */
  url?: string;
}

export interface WebhookDelivery {
  event: StripeEventObject;
  /** An HTTP answer came back (any status). */
  delivered: boolean;
  /** Held back by `deliverNothing` (then in `pending`; nothing was sent). */
  held: boolean;
  /** The receiver's status; 0 when held, without a webhook URL, or on a connection error/timeout. */
  status: number;
  /** The receiver's body, or the connection error's message. */
  body: string;
  /** The raw JSON body sent ('' when held). */
  payload: string;
  /** The `Stripe-Signature` header sent ('' when held). */
  signatureHeader: string;
  url: string | null;
}

export interface LoggedRequest {
  method: string;
  /** Without the query string. */
  path: string;
  /** The parsed form (body for POST, query for GET). */
  params: FormParams;
  headers: { idempotencyKey: string | null; stripeAccount: string | null };
  /** The secret key it was authenticated with (null: none sent). */
  apiKey: string | null;
  /** The status answered (as sent, after failNext/dropNextResponse). */
  status: number;
  /** Answered from the idempotency store. */
  replayed: boolean;
  requestId: string;
}

export type SessionView = CheckoutSessionObject & {
  /** The `Stripe-Account` the session was created on, null for the platform. */
  account: string | null;
  application_fee_amount: number | null;
};
export type PaymentIntentView = PaymentIntentObject & { account: string | null; amount_refunded: number };
export type RefundView = RefundObject & { account: string | null };

export interface StripeEmulator {
  /** `http://127.0.0.1:<port>` */
  url: string;
  host: string;
  port: number;
  protocol: 'http';
  secretKey: string;
  webhookSecret: string;
  testSecretKey: string | null;
  testWebhookSecret: string | null;
  /** `{host, port, protocol}` to spread into the `stripe` package's config. */
  stripeConfig(): { host: string; port: number; protocol: 'http' };
  readonly webhookUrl: string | null;
  setWebhookUrl(url: string | null): void;

  /** The customer pays: complete + paid (or unpaid with `async`), a payment intent, checkout.session.completed. */
  pay(sessionId: string, opts?: { async?: boolean }): Promise<WebhookDelivery>;
  /** A delayed payment (pay with async) succeeds: paid, checkout.session.async_payment_succeeded. */
  asyncSucceed(sessionId: string): Promise<WebhookDelivery>;
  /** A delayed payment fails: checkout.session.async_payment_failed (session stays complete + unpaid). */
  asyncFail(sessionId: string): Promise<WebhookDelivery>;
  /** Stripe expires an open session: checkout.session.expired. */
  expire(sessionId: string): Promise<WebhookDelivery>;
  /** Seeds a connected account directly (no event). */
  addAccount(fields?: Partial<Omit<AccountObject, 'object' | 'created'>>): AccountObject;
  /** Changes an account's readiness and delivers account.updated (Event `account` = acctId). */
  updateAccount(
    acctId: string,
    patch: { charges_enabled?: boolean; payouts_enabled?: boolean; details_submitted?: boolean },
  ): Promise<WebhookDelivery>;

  /** Every Event created, in order. */
  events: StripeEventObject[];
  lastEvent(): StripeEventObject | undefined;
  /** Sends a stored event again (same id, fresh signature). */
  redeliver(eventId: string, opts?: DeliverOptions): Promise<WebhookDelivery>;
  /** Sends any event now (ignores deliverNothing). */
  deliver(event: StripeEventObject, opts?: DeliverOptions): Promise<WebhookDelivery>;
  /** When true, new events go to `pending` instead of being sent. */
  deliverNothing: boolean;
  pending: StripeEventObject[];
  /** Sends the pending events one after the other (newest first with reverse) and empties `pending`. */
  flush(opts?: { reverse?: boolean }): Promise<WebhookDelivery[]>;
  /** Every delivery attempt (not held ones), in order. */
  deliveries: WebhookDelivery[];
  /** Waits for the deliveries started in the background (events caused by API calls). */
  settle(): Promise<void>;

  /** The next n API requests (after authentication) answer `status` with Stripe's error body, doing nothing. */
  failNext(n: number, status: number): void;
  /** The next n API requests take effect (and are stored for idempotency) but answer 500 api_error. */
  dropNextResponse(n?: number): void;
  requests: LoggedRequest[];
  sessions(): SessionView[];
  paymentIntents(): PaymentIntentView[];
  refunds(): RefundView[];
  accounts(): AccountObject[];
  /** Forgets every object, event, request and pending failure; keeps the webhook URL. */
  reset(): void;
  close(): Promise<void>;
}

/** `t=<ts>,v1=<hex HMAC-SHA256 of "<ts>.<payload>">`, as Stripe signs webhook deliveries. */
export function stripeSignatureHeader(payload: string, secret: string, timestampSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestampSeconds}.${payload}`, 'utf8').digest('hex');
  return `t=${timestampSeconds},v1=${v1}`;
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function isParams(v: unknown): v is FormParams {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Objects whose keys are all indexes become arrays (in index order), except under `metadata`. */
function arrayify(v: FormValue, key: string | null): FormValue {
  if (!isParams(v)) return v;
  const keys = Object.keys(v);
  if (key !== 'metadata' && keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) {
    return keys
      .map(Number)
      .sort((a, b) => a - b)
      .map((i) => arrayify(v[String(i)] as FormValue, null));
  }
  const out: FormParams = {};
  for (const k of keys) out[k] = arrayify(v[k] as FormValue, k);
  return out;
}

/** Parses a form body or query with Stripe's bracket notation into nested objects and arrays. */
export function parseStripeForm(input: string | URLSearchParams): FormParams {
  const search = typeof input === 'string' ? new URLSearchParams(input) : input;
  const root: FormParams = {};
  for (const [rawKey, value] of search) {
    const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(rawKey);
    const path = m
      ? [m[1] as string, ...[...(m[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1] as string)]
      : [rawKey];
    if (path.some((p) => FORBIDDEN_KEYS.has(p))) continue;
    let node = root;
    for (let i = 0; i < path.length; i++) {
      const key = path[i] === '' ? String(Object.keys(node).length) : (path[i] as string);
      if (i === path.length - 1) {
        node[key] = value;
        break;
      }
      const next = node[key];
      if (isParams(next)) {
        node = next;
      } else {
        const created: FormParams = {};
        node[key] = created;
        node = created;
      }
    }
  }
  return arrayify(root, null) as FormParams;
}

/** An error answer; `stored` says whether the idempotency layer keeps it (the endpoint ran). */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: StripeErrorDetail,
    readonly stored: boolean,
  ) {
    super(detail.message);
  }
}

function errorDetail(type: string, message: string, code?: string, param?: string): StripeErrorDetail {
  // Keys in Stripe's (alphabetical) order.
  const d = {} as StripeErrorDetail;
  if (code) {
    d.code = code;
    d.doc_url = `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`;
  }
  d.message = message;
  if (param) d.param = param;
  d.type = type;
  return d;
}

/** A validation failure: the endpoint never ran, nothing is stored for idempotency. */
function paramError(message: string, param: string, code?: string): ApiError {
  return new ApiError(400, errorDetail('invalid_request_error', message, code, param), false);
}

const missing = (param: string) =>
  paramError(`Missing required param: ${param}.`, param, 'parameter_missing');
const unknownParam = (param: string) =>
  paramError(`Received unknown parameter: ${param}`, param, 'parameter_unknown');

function noSuch(kind: string, id: string, param: string | undefined, status = 404): ApiError {
  return new ApiError(
    status,
    errorDetail('invalid_request_error', `No such ${kind}: '${id}'`, 'resource_missing', param),
    true,
  );
}

/** A failure of the endpoint itself (a state conflict): stored for idempotency. */
function stateError(message: string, code?: string, param?: string): ApiError {
  return new ApiError(400, errorDetail('invalid_request_error', message, code, param), true);
}

const join = (prefix: string | null, key: string) => (prefix ? `${prefix}[${key}]` : key);

function checkKeys(p: FormParams, allowed: readonly string[], prefix: string | null): void {
  for (const k of Object.keys(p)) {
    if (!allowed.includes(k)) throw unknownParam(join(prefix, k));
  }
}

function str(p: FormParams, key: string, prefix: string | null = null): string | undefined {
  const v = p[key];
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string') throw paramError(`Invalid string: ${JSON.stringify(v)}`, join(prefix, key));
  return v;
}

function int(p: FormParams, key: string, prefix: string | null = null): number | undefined {
  const s = str(p, key, prefix);
  if (s === undefined) return undefined;
  if (!/^-?\d+$/.test(s) || !Number.isSafeInteger(Number(s))) {
    throw paramError(`Invalid integer: ${s}`, join(prefix, key), 'parameter_invalid_integer');
  }
  return Number(s);
}

function obj(p: FormParams, key: string, prefix: string | null = null): FormParams | undefined {
  const v = p[key];
  if (v === undefined || v === '') return undefined;
  if (!isParams(v)) throw paramError('Invalid object', join(prefix, key));
  return v;
}

function metadataParam(p: FormParams, prefix: string | null = null): Record<string, string> {
  const m = obj(p, 'metadata', prefix);
  const out: Record<string, string> = {};
  if (!m) return out;
  const path = join(prefix, 'metadata');
  const keys = Object.keys(m);
  if (keys.length > 50) throw paramError('Metadata can have up to 50 keys.', path);
  for (const k of keys) {
    const v = m[k];
    if (typeof v !== 'string') throw paramError(`Invalid value for ${path}[${k}]: must be a string`, path);
    if (k.length > 40) throw paramError(`Metadata keys can be up to 40 characters long (${k}).`, path);
    if (v.length > 500) throw paramError(`Metadata values can be up to 500 characters long (${k}).`, path);
    if (v !== '') out[k] = v;
  }
  return out;
}

function urlParam(p: FormParams, key: string): string | undefined {
  const v = str(p, key);
  if (v === undefined) return undefined;
  let ok = false;
  try {
    const u = new URL(v);
    ok = u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    ok = false;
  }
  if (!ok) throw paramError('Not a valid URL', key, 'url_invalid');
  return v;
}

function expandParam(p: FormParams, allowed: readonly string[]): string[] {
  const v = p.expand;
  if (v === undefined || v === '') return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list)) throw paramError('Invalid array', 'expand');
  return list.map((e, i) => {
    if (typeof e !== 'string') throw paramError('Invalid string', `expand[${i}]`);
    if (!allowed.includes(e)) throw paramError(`This property cannot be expanded (${e}).`, `expand[${i}]`);
    return e;
  });
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function newId(prefix: string, length = 24): string {
  return prefix + [...randomBytes(length)].map((b) => ALNUM[b % ALNUM.length]).join('');
}

function maskKey(key: string): string {
  const m = /^([a-z]{2,4}_(?:test|live)_)(.*)$/.exec(key);
  const prefix = m ? (m[1] as string) : '';
  const rest = m ? (m[2] as string) : key;
  return prefix + '*'.repeat(Math.max(0, rest.length - 4)) + rest.slice(-4);
}

function headerValue(req: EmuRequest, name: string): string | null {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? null : s;
}

function apiKeyOf(authorization: string | null): string | null {
  if (!authorization) return null;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (bearer) return bearer[1] as string;
  const basic = /^Basic\s+(\S+)\s*$/i.exec(authorization);
  if (basic)
    return (
      Buffer.from(basic[1] as string, 'base64')
        .toString('utf8')
        .split(':')[0] ?? ''
    );
  return '';
}

function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  if (isParams(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

// Parameter names the `stripe` package's types know for these endpoints (API 2026-10-28.endive).
const SESSION_CREATE_PARAMS = [
  'adaptive_pricing',
  'after_expiration',
  'allow_promotion_codes',
  'allowed_payment_method_types',
  'automatic_tax',
  'billing_address_collection',
  'branding_settings',
  'cancel_url',
  'client_reference_id',
  'consent_collection',
  'currency',
  'custom_fields',
  'custom_text',
  'customer',
  'customer_account',
  'customer_creation',
  'customer_email',
  'customer_update',
  'discounts',
  'excluded_payment_method_types',
  'expand',
  'expires_at',
  'integration_identifier',
  'invoice_creation',
  'line_items',
  'locale',
  'managed_payments',
  'metadata',
  'mode',
  'name_collection',
  'optional_items',
  'origin_context',
  'payment_intent_data',
  'payment_method_collection',
  'payment_method_configuration',
  'payment_method_data',
  'payment_method_options',
  'permissions',
  'phone_number_collection',
  'redirect_on_completion',
  'return_url',
  'saved_payment_method_options',
  'setup_intent_data',
  'shipping_address_collection',
  'shipping_options',
  'submit_type',
  'subscription_data',
  'success_url',
  'tax_id_collection',
  'ui_mode',
  'wallet_options',
] as const;
const LINE_ITEM_PARAMS = ['adjustable_quantity', 'metadata', 'price', 'price_data', 'quantity', 'tax_rates'];
const PRICE_DATA_PARAMS = [
  'currency',
  'product',
  'product_data',
  'recurring',
  'tax_behavior',
  'unit_amount',
  'unit_amount_decimal',
];
const PRODUCT_DATA_PARAMS = [
  'description',
  'images',
  'metadata',
  'name',
  'tax_code',
  'tax_details',
  'unit_label',
];
const PAYMENT_INTENT_DATA_PARAMS = [
  'application_fee_amount',
  'capture_method',
  'description',
  'metadata',
  'on_behalf_of',
  'receipt_email',
  'setup_future_usage',
  'shipping',
  'statement_descriptor',
  'statement_descriptor_suffix',
  'transfer_data',
  'transfer_group',
];
const REFUND_CREATE_PARAMS = [
  'amount',
  'charge',
  'currency',
  'customer',
  'expand',
  'instructions_email',
  'metadata',
  'origin',
  'payment_intent',
  'reason',
  'refund_application_fee',
  'reverse_transfer',
];
const ACCOUNT_CREATE_PARAMS = [
  'account_token',
  'business_profile',
  'business_type',
  'capabilities',
  'company',
  'controller',
  'country',
  'default_currency',
  'documents',
  'email',
  'expand',
  'external_account',
  'groups',
  'individual',
  'metadata',
  'settings',
  'tos_acceptance',
  'type',
];
const ACCOUNT_LINK_PARAMS = [
  'account',
  'type',
  'collect',
  'collection_options',
  'expand',
  'refresh_url',
  'return_url',
];
const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

interface LineItemRecord {
  id: string;
  name: string;
  currency: string;
  unit_amount: number;
  quantity: number;
  priceId: string;
  productId: string;
}

interface SessionRecord {
  obj: CheckoutSessionObject;
  account: string | null;
  applicationFeeAmount: number | null;
  paymentIntentMetadata: Record<string, string>;
  paymentIntentDescription: string | null;
  lineItems: LineItemRecord[];
}

interface PaymentIntentRecord {
  obj: PaymentIntentObject;
  account: string | null;
  refunded: number;
}

interface RefundRecord {
  obj: RefundObject;
  account: string | null;
  livemode: boolean;
}

interface StoredAnswer {
  method: string;
  path: string;
  fingerprint: string;
  status: number;
  body: string;
  requestId: string;
}

interface Ctx {
  account: string | null;
  /** The mode of the key used: each mode sees only its own objects. */
  livemode: boolean;
  requestId: string;
  idempotencyKey: string | null;
}

interface Answer {
  status: number;
  body: unknown;
}

export async function startStripeEmulator(opts: StripeEmulatorOptions = {}): Promise<StripeEmulator> {
  const secretKey = opts.secretKey ?? 'sk_test_kairos';
  const webhookSecret = opts.webhookSecret ?? 'whsec_kairos_test';
  const testSecretKey = opts.testSecretKey ?? null;
  const testWebhookSecret = opts.testWebhookSecret ?? null;
  const keyLivemode = (key: string) => key.startsWith('sk_live_');
  const now = opts.now ?? Date.now;
  const apiVersion = opts.apiVersion ?? STRIPE_EMULATOR_API_VERSION;
  const webhookTimeoutMs = opts.webhookTimeoutMs ?? 30_000;
  let webhookUrl: string | null = opts.webhookUrl ?? null;
  let baseUrl = '';
  const nowSec = () => Math.floor(now() / 1000);

  const sessions = new Map<string, SessionRecord>();
  const paymentIntents = new Map<string, PaymentIntentRecord>();
  const refunds = new Map<string, RefundRecord>();
  const accounts = new Map<string, AccountObject>();
  const idempotency = new Map<string, StoredAnswer>();
  const events: StripeEventObject[] = [];
  const pending: StripeEventObject[] = [];
  const deliveries: WebhookDelivery[] = [];
  const requests: LoggedRequest[] = [];
  const inflight = new Set<Promise<unknown>>();
  let deliverNothing = false;
  let failRemaining = 0;
  let failStatus = 500;
  let dropRemaining = 0;

  // ---------------------------------------------------------------- events and delivery

  const createEvent = (
    type: string,
    object: object,
    o: {
      account: string | null;
      request?: { id: string | null; idempotency_key: string | null };
      previous?: Record<string, unknown>;
    },
  ): StripeEventObject => {
    const data: StripeEventObject['data'] = {
      object: structuredClone(object) as Record<string, unknown>,
    };
    if (o.previous) data.previous_attributes = structuredClone(o.previous);
    const ev: StripeEventObject = { id: newId('evt_'), object: 'event' } as StripeEventObject;
    if (o.account) ev.account = o.account;
    Object.assign(ev, {
      api_version: apiVersion,
      created: nowSec(),
      data,
      livemode: (object as { livemode?: unknown }).livemode === true,
      pending_webhooks: webhookUrl ? 1 : 0,
      request: o.request ?? { id: null, idempotency_key: null },
      type,
    });
    events.push(ev);
    return ev;
  };

  const post = async (event: StripeEventObject, o: DeliverOptions = {}): Promise<WebhookDelivery> => {
    const payload = JSON.stringify(event, null, 2);
    const signatureHeader =
      o.signatureHeader ??
      stripeSignatureHeader(
        payload,
        o.secret ?? (event.livemode ? webhookSecret : (testWebhookSecret ?? webhookSecret)),
        o.timestampSeconds ?? nowSec(),
      );
    const url = o.url ?? webhookUrl;
    const base = { event, held: false, payload, signatureHeader, url };
    let d: WebhookDelivery;
    if (!url) {
      d = { ...base, delivered: false, status: 0, body: 'no webhook URL set' };
    } else {
      try {
        const res = await fetch(url, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            'content-type': 'application/json; charset=utf-8',
            accept: '*/*; q=0.5, application/xml',
            'cache-control': 'no-cache',
            'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
            'stripe-signature': signatureHeader,
          },
          body: payload,
          signal: AbortSignal.timeout(webhookTimeoutMs),
        });
        d = { ...base, delivered: true, status: res.status, body: await res.text() };
      } catch (err) {
        d = { ...base, delivered: false, status: 0, body: err instanceof Error ? err.message : String(err) };
      }
    }
    deliveries.push(d);
    return d;
  };

  const held = (event: StripeEventObject): WebhookDelivery => {
    pending.push(event);
    return {
      event,
      delivered: false,
      held: true,
      status: 0,
      body: '',
      payload: '',
      signatureHeader: '',
      url: webhookUrl,
    };
  };

  /** For test controls: resolves with the webhook's answer. */
  const emit = (event: StripeEventObject): Promise<WebhookDelivery> =>
    deliverNothing ? Promise.resolve(held(event)) : post(event);

  /** For API calls: delivered after the API answer, as Stripe does. */
  const emitInBackground = (event: StripeEventObject): void => {
    if (deliverNothing) {
      held(event);
      return;
    }
    const p: Promise<unknown> = new Promise((resolve) => setImmediate(resolve)).then(() => post(event));
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  };

  // ---------------------------------------------------------------- object helpers

  const sessionFor = (id: string, account: string | null, livemode: boolean): SessionRecord => {
    const rec = sessions.get(id);
    if (!rec || rec.account !== account || rec.obj.livemode !== livemode)
      throw noSuch('checkout.session', id, 'session');
    return rec;
  };

  const renderSession = (rec: SessionRecord, expand: string[]): Record<string, unknown> => {
    const out = structuredClone(rec.obj) as unknown as Record<string, unknown>;
    if (expand.includes('payment_intent') && rec.obj.payment_intent) {
      const pi = paymentIntents.get(rec.obj.payment_intent);
      if (pi) out.payment_intent = structuredClone(pi.obj);
    }
    if (expand.includes('line_items')) {
      out.line_items = {
        object: 'list',
        data: rec.lineItems.map((li) => ({
          id: li.id,
          object: 'item',
          amount_discount: 0,
          amount_subtotal: li.unit_amount * li.quantity,
          amount_tax: 0,
          amount_total: li.unit_amount * li.quantity,
          currency: li.currency,
          description: li.name,
          price: {
            id: li.priceId,
            object: 'price',
            active: false,
            currency: li.currency,
            product: li.productId,
            type: 'one_time',
            unit_amount: li.unit_amount,
          },
          quantity: li.quantity,
        })),
        has_more: false,
        url: `/v1/checkout/sessions/${rec.obj.id}/line_items`,
      };
    }
    return out;
  };

  const renderRefund = (rec: RefundRecord, expand: string[]): Record<string, unknown> => {
    const out = structuredClone(rec.obj) as unknown as Record<string, unknown>;
    if (expand.includes('payment_intent')) {
      const pi = paymentIntents.get(rec.obj.payment_intent);
      if (pi) out.payment_intent = structuredClone(pi.obj);
    }
    return out;
  };

  const expireSession = (rec: SessionRecord): void => {
    rec.obj.status = 'expired';
    rec.obj.url = null;
  };

  const makeAccount = (fields: Partial<Omit<AccountObject, 'object' | 'created'>> = {}): AccountObject => {
    const acct: AccountObject = {
      id: fields.id ?? newId('acct_', 16),
      object: 'account',
      business_type: null,
      capabilities: fields.capabilities ?? {},
      charges_enabled: fields.charges_enabled ?? false,
      country: fields.country ?? 'US',
      created: nowSec(),
      default_currency: fields.default_currency ?? 'usd',
      details_submitted: fields.details_submitted ?? false,
      email: fields.email ?? null,
      metadata: fields.metadata ?? {},
      payouts_enabled: fields.payouts_enabled ?? false,
      type: fields.type ?? 'express',
    };
    if (accounts.has(acct.id)) throw new Error(`account ${acct.id} already exists`);
    accounts.set(acct.id, acct);
    return acct;
  };

  // ---------------------------------------------------------------- endpoints

  const createSession = (p: FormParams, ctx: Ctx): Answer => {
    checkKeys(p, SESSION_CREATE_PARAMS, null);
    const mode = str(p, 'mode');
    if (mode === undefined) throw missing('mode');
    if (!['payment', 'setup', 'subscription'].includes(mode)) {
      throw paramError(`Invalid mode: must be one of payment, setup, or subscription`, 'mode');
    }
    if (mode !== 'payment') throw paramError(`The Stripe emulator only supports mode=payment.`, 'mode');
    const rawItems = p.line_items;
    if (rawItems === undefined || rawItems === '') throw missing('line_items');
    if (!Array.isArray(rawItems) || rawItems.length === 0) throw paramError('Invalid array', 'line_items');
    const lineItems: LineItemRecord[] = rawItems.map((raw, i) => {
      const prefix = `line_items[${i}]`;
      if (!isParams(raw)) throw paramError('Invalid object', prefix);
      checkKeys(raw, LINE_ITEM_PARAMS, prefix);
      const price = str(raw, 'price', prefix);
      if (price !== undefined) throw noSuch('price', price, `${prefix}[price]`, 400);
      const pd = obj(raw, 'price_data', prefix);
      if (!pd) throw missing(`${prefix}[price_data]`);
      const pdPrefix = `${prefix}[price_data]`;
      checkKeys(pd, PRICE_DATA_PARAMS, pdPrefix);
      const currency = str(pd, 'currency', pdPrefix);
      if (currency === undefined) throw missing(`${pdPrefix}[currency]`);
      if (!/^[a-z]{3}$/i.test(currency))
        throw paramError(`Invalid currency: ${currency}`, `${pdPrefix}[currency]`);
      const unitAmount = int(pd, 'unit_amount', pdPrefix);
      if (unitAmount === undefined) throw missing(`${pdPrefix}[unit_amount]`);
      if (unitAmount < 1) {
        throw paramError('This value must be greater than or equal to 1.', `${pdPrefix}[unit_amount]`);
      }
      const product = str(pd, 'product', pdPrefix);
      if (product !== undefined) throw noSuch('product', product, `${pdPrefix}[product]`, 400);
      const productData = obj(pd, 'product_data', pdPrefix);
      if (!productData) throw missing(`${pdPrefix}[product_data]`);
      checkKeys(productData, PRODUCT_DATA_PARAMS, `${pdPrefix}[product_data]`);
      const name = str(productData, 'name', `${pdPrefix}[product_data]`);
      if (name === undefined) throw missing(`${pdPrefix}[product_data][name]`);
      const quantity = int(raw, 'quantity', prefix);
      if (quantity === undefined) throw missing(`${prefix}[quantity]`);
      if (quantity < 1)
        throw paramError('This value must be greater than or equal to 1.', `${prefix}[quantity]`);
      return {
        id: newId('li_'),
        name,
        currency: currency.toLowerCase(),
        unit_amount: unitAmount,
        quantity,
        priceId: newId('price_'),
        productId: newId('prod_', 14),
      };
    });
    const currency = (lineItems[0] as LineItemRecord).currency;
    if (lineItems.some((li) => li.currency !== currency)) {
      throw paramError('All line items must use the same currency.', 'line_items');
    }
    const successUrl = urlParam(p, 'success_url');
    if (successUrl === undefined) throw missing('success_url');
    const cancelUrl = urlParam(p, 'cancel_url') ?? null;
    const clientReferenceId = str(p, 'client_reference_id') ?? null;
    if (clientReferenceId !== null && clientReferenceId.length > 200) {
      throw paramError('client_reference_id can be at most 200 characters.', 'client_reference_id');
    }
    const customerEmail = str(p, 'customer_email') ?? null;
    if (customerEmail !== null && !EMAIL.test(customerEmail)) {
      throw paramError(`Invalid email address: ${customerEmail}`, 'customer_email', 'email_invalid');
    }
    const metadata = metadataParam(p);
    const created = nowSec();
    const expiresAt = int(p, 'expires_at');
    if (expiresAt !== undefined && expiresAt - created < 30 * 60) {
      throw paramError(
        'The `expires_at` timestamp must be at least 30 minutes from Checkout Session creation.',
        'expires_at',
      );
    }
    if (expiresAt !== undefined && expiresAt - created > 24 * 3600) {
      throw paramError(
        'The `expires_at` timestamp must be less than 24 hours from Checkout Session creation.',
        'expires_at',
      );
    }
    const amountTotal = lineItems.reduce((sum, li) => sum + li.unit_amount * li.quantity, 0);
    const pid = obj(p, 'payment_intent_data');
    let applicationFeeAmount: number | null = null;
    let piMetadata: Record<string, string> = {};
    let piDescription: string | null = null;
    if (pid) {
      checkKeys(pid, PAYMENT_INTENT_DATA_PARAMS, 'payment_intent_data');
      piMetadata = metadataParam(pid, 'payment_intent_data');
      piDescription = str(pid, 'description', 'payment_intent_data') ?? null;
      const fee = int(pid, 'application_fee_amount', 'payment_intent_data');
      if (fee !== undefined) {
        const param = 'payment_intent_data[application_fee_amount]';
        const transfer = obj(pid, 'transfer_data', 'payment_intent_data');
        const destination = transfer
          ? str(transfer, 'destination', 'payment_intent_data[transfer_data]')
          : undefined;
        if (!ctx.account && destination === undefined) {
          throw paramError(
            'Can only apply an application_fee_amount when the PaymentIntent is attempting a direct payment ' +
              '(using an OAuth key or Stripe-Account header) or destination payment (using `transfer_data[destination]`).',
            param,
          );
        }
        if (fee < 0) throw paramError('This value must be greater than or equal to 0.', param);
        if (fee > amountTotal) {
          throw paramError('The application fee amount cannot be greater than the payment amount.', param);
        }
        applicationFeeAmount = fee;
      }
    }
    const expand = expandParam(p, ['payment_intent', 'line_items']);
    const id = newId('cs_test_', 58);
    const session: CheckoutSessionObject = {
      id,
      object: 'checkout.session',
      amount_subtotal: amountTotal,
      amount_total: amountTotal,
      cancel_url: cancelUrl,
      client_reference_id: clientReferenceId,
      created,
      currency,
      customer: null,
      customer_details: null,
      customer_email: customerEmail,
      expires_at: expiresAt ?? created + 24 * 3600,
      livemode: ctx.livemode,
      locale: null,
      metadata,
      mode: 'payment',
      payment_intent: null,
      payment_status: 'unpaid',
      status: 'open',
      success_url: successUrl,
      ui_mode: 'hosted',
      url: `${baseUrl}/pay/${id}`,
    };
    const rec: SessionRecord = {
      obj: session,
      account: ctx.account,
      applicationFeeAmount,
      paymentIntentMetadata: piMetadata,
      paymentIntentDescription: piDescription,
      lineItems,
    };
    sessions.set(id, rec);
    return { status: 200, body: renderSession(rec, expand) };
  };

  const retrieveSession = (id: string, p: FormParams, ctx: Ctx): Answer => {
    checkKeys(p, ['expand'], null);
    const expand = expandParam(p, ['payment_intent', 'line_items']);
    return { status: 200, body: renderSession(sessionFor(id, ctx.account, ctx.livemode), expand) };
  };

  const expireEndpoint = (id: string, p: FormParams, ctx: Ctx): Answer => {
    checkKeys(p, ['expand'], null);
    const expand = expandParam(p, ['payment_intent', 'line_items']);
    const rec = sessionFor(id, ctx.account, ctx.livemode);
    if (rec.obj.status !== 'open') {
      throw stateError(`Only Checkout Sessions with a status in ["open"] can be expired.`);
    }
    expireSession(rec);
    emitInBackground(
      createEvent('checkout.session.expired', rec.obj, {
        account: rec.account,
        request: { id: ctx.requestId, idempotency_key: ctx.idempotencyKey },
      }),
    );
    return { status: 200, body: renderSession(rec, expand) };
  };

  const createRefund = (p: FormParams, ctx: Ctx): Answer => {
    checkKeys(p, REFUND_CREATE_PARAMS, null);
    const piId = str(p, 'payment_intent');
    const chargeId = str(p, 'charge');
    if (piId === undefined && chargeId === undefined) {
      throw paramError(
        'One of the following params should be provided for this request: payment_intent or charge.',
        'payment_intent',
      );
    }
    const amount = int(p, 'amount');
    if (amount !== undefined && amount < 1) throw paramError('Invalid positive integer', 'amount');
    const reason = str(p, 'reason') ?? null;
    if (reason !== null && !REFUND_REASONS.includes(reason)) {
      throw paramError(`Invalid reason: must be one of ${REFUND_REASONS.join(', ')}`, 'reason');
    }
    const metadata = metadataParam(p);
    const expand = expandParam(p, ['payment_intent']);
    let pi: PaymentIntentRecord | undefined;
    if (piId !== undefined) {
      pi = paymentIntents.get(piId);
      if (!pi || pi.account !== ctx.account || pi.obj.livemode !== ctx.livemode)
        throw noSuch('payment_intent', piId, 'payment_intent');
    } else {
      pi = [...paymentIntents.values()].find(
        (x) =>
          x.obj.latest_charge === chargeId && x.account === ctx.account && x.obj.livemode === ctx.livemode,
      );
      if (!pi) throw noSuch('charge', chargeId as string, 'charge');
    }
    if (pi.obj.status !== 'succeeded' || !pi.obj.latest_charge) {
      throw stateError(
        `This PaymentIntent (${pi.obj.id}) does not have a successful charge to refund.`,
        undefined,
        'payment_intent',
      );
    }
    const remaining = pi.obj.amount - pi.refunded;
    if (remaining <= 0) {
      throw stateError(
        `Charge ${pi.obj.latest_charge} has already been refunded.`,
        'charge_already_refunded',
      );
    }
    if (amount !== undefined && amount > remaining) {
      throw stateError(
        `Refund amount (${amount}) is greater than unrefunded amount on charge (${remaining})`,
        undefined,
        'amount',
      );
    }
    const refundAmount = amount ?? remaining;
    pi.refunded += refundAmount;
    const refund: RefundObject = {
      id: newId('re_'),
      object: 'refund',
      amount: refundAmount,
      balance_transaction: null,
      charge: pi.obj.latest_charge,
      created: nowSec(),
      currency: pi.obj.currency,
      metadata,
      payment_intent: pi.obj.id,
      reason,
      receipt_number: null,
      source_transfer_reversal: null,
      status: 'succeeded',
      transfer_reversal: null,
    };
    const rec: RefundRecord = { obj: refund, account: ctx.account, livemode: ctx.livemode };
    refunds.set(refund.id, rec);
    return { status: 200, body: renderRefund(rec, expand) };
  };

  const createAccount = (p: FormParams): Answer => {
    checkKeys(p, ACCOUNT_CREATE_PARAMS, null);
    const type = str(p, 'type');
    if (type !== undefined && type !== 'express' && type !== 'standard' && type !== 'custom') {
      throw paramError('Invalid type: must be one of custom, express, or standard', 'type');
    }
    obj(p, 'controller');
    const email = str(p, 'email');
    if (email !== undefined && !EMAIL.test(email)) {
      throw paramError(`Invalid email address: ${email}`, 'email', 'email_invalid');
    }
    const country = str(p, 'country');
    if (country !== undefined && !/^[A-Z]{2}$/i.test(country)) {
      throw paramError(`Invalid country: ${country}`, 'country');
    }
    const metadata = metadataParam(p);
    expandParam(p, []);
    const fields: Partial<AccountObject> = { type: type ?? 'express', metadata };
    if (email !== undefined) fields.email = email;
    if (country !== undefined) fields.country = country.toUpperCase();
    const dc = str(p, 'default_currency');
    if (dc !== undefined) fields.default_currency = dc.toLowerCase();
    return { status: 200, body: structuredClone(makeAccount(fields)) };
  };

  const retrieveAccount = (id: string, p: FormParams): Answer => {
    checkKeys(p, ['expand'], null);
    expandParam(p, []);
    const acct = accounts.get(id);
    if (!acct) throw noSuch('account', id, 'account');
    return { status: 200, body: structuredClone(acct) };
  };

  const createAccountLink = (p: FormParams): Answer => {
    checkKeys(p, ACCOUNT_LINK_PARAMS, null);
    const account = str(p, 'account');
    if (account === undefined) throw missing('account');
    const type = str(p, 'type');
    if (type === undefined) throw missing('type');
    if (type !== 'account_onboarding' && type !== 'account_update') {
      throw paramError('Invalid type: must be one of account_onboarding or account_update', 'type');
    }
    const refreshUrl = urlParam(p, 'refresh_url');
    if (refreshUrl === undefined) throw missing('refresh_url');
    const returnUrl = urlParam(p, 'return_url');
    if (returnUrl === undefined) throw missing('return_url');
    expandParam(p, []);
    if (!accounts.has(account)) throw noSuch('account', account, 'account', 400);
    const created = nowSec();
    return {
      status: 200,
      body: {
        object: 'account_link',
        created,
        expires_at: created + 300,
        url: `${baseUrl}/onboard/${account}`,
      },
    };
  };

  const retrievePaymentIntent = (id: string, p: FormParams, ctx: Ctx): Answer => {
    checkKeys(p, ['expand'], null);
    expandParam(p, []);
    const pi = paymentIntents.get(id);
    if (!pi || pi.account !== ctx.account || pi.obj.livemode !== ctx.livemode)
      throw noSuch('payment_intent', id, 'intent');
    return { status: 200, body: structuredClone(pi.obj) };
  };

  const retrieveRefund = (id: string, p: FormParams, ctx: Ctx): Answer => {
    checkKeys(p, ['expand'], null);
    const expand = expandParam(p, ['payment_intent']);
    const rec = refunds.get(id);
    if (!rec || rec.account !== ctx.account || rec.livemode !== ctx.livemode)
      throw noSuch('refund', id, 'refund');
    return { status: 200, body: renderRefund(rec, expand) };
  };

  const route = (method: string, path: string, p: FormParams, ctx: Ctx): Answer | undefined => {
    const seg = (re: RegExp) => {
      const m = re.exec(path);
      return m ? decodeURIComponent(m[1] as string) : undefined;
    };
    if (method === 'POST') {
      if (path === '/v1/checkout/sessions') return createSession(p, ctx);
      const expireId = seg(/^\/v1\/checkout\/sessions\/([^/]+)\/expire$/);
      if (expireId !== undefined) return expireEndpoint(expireId, p, ctx);
      if (path === '/v1/refunds') return createRefund(p, ctx);
      if (path === '/v1/accounts') return createAccount(p);
      if (path === '/v1/account_links') return createAccountLink(p);
    }
    if (method === 'GET') {
      const sessionId = seg(/^\/v1\/checkout\/sessions\/([^/]+)$/);
      if (sessionId !== undefined) return retrieveSession(sessionId, p, ctx);
      const acctId = seg(/^\/v1\/accounts\/([^/]+)$/);
      if (acctId !== undefined) return retrieveAccount(acctId, p);
      const piId = seg(/^\/v1\/payment_intents\/([^/]+)$/);
      if (piId !== undefined) return retrievePaymentIntent(piId, p, ctx);
      const refundId = seg(/^\/v1\/refunds\/([^/]+)$/);
      if (refundId !== undefined) return retrieveRefund(refundId, p, ctx);
    }
    return undefined;
  };

  // ---------------------------------------------------------------- the API pipeline

  const injectedError = (status: number): StripeErrorDetail => {
    if (status === 429) {
      return errorDetail(
        'rate_limit_error',
        'Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.',
        'rate_limit',
      );
    }
    if (status >= 500) return errorDetail('api_error', 'An unknown error occurred');
    if (status === 402) return errorDetail('card_error', 'Your card was declined.', 'card_declined');
    return errorDetail('invalid_request_error', `Injected failure (${status}).`);
  };

  const api = (req: EmuRequest): EmuResponse => {
    const requestId = newId('req_', 14);
    const method = req.method.toUpperCase();
    const path = req.url.pathname;
    const params = method === 'POST' ? parseStripeForm(req.body) : parseStripeForm(req.url.searchParams);
    const idempotencyKey = method === 'POST' ? headerValue(req, 'idempotency-key') : null;
    const accountHeader = headerValue(req, 'stripe-account') ?? headerValue(req, 'stripe-context');
    const entry: LoggedRequest = {
      method,
      path,
      params,
      headers: { idempotencyKey, stripeAccount: accountHeader },
      apiKey: null,
      status: 0,
      replayed: false,
      requestId,
    };
    requests.push(entry);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'request-id': requestId,
      'original-request': requestId,
      'stripe-version': headerValue(req, 'stripe-version') ?? apiVersion,
    };
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    if (accountHeader) headers['stripe-account'] = accountHeader;
    const answer = (status: number, body: string, extra: Record<string, string> = {}): EmuResponse => {
      entry.status = status;
      return { status, body, headers: { ...headers, ...extra } };
    };
    const errorAnswer = (status: number, detail: StripeErrorDetail, extra: Record<string, string> = {}) =>
      answer(status, JSON.stringify({ error: detail }, null, 2), extra);

    const key = apiKeyOf(headerValue(req, 'authorization'));
    if (key === null) {
      return errorAnswer(
        401,
        errorDetail(
          'invalid_request_error',
          "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
        ),
        { 'www-authenticate': 'Basic realm="Stripe"' },
      );
    }
    entry.apiKey = key;
    if (key !== secretKey && key !== testSecretKey) {
      return errorAnswer(
        401,
        errorDetail('invalid_request_error', `Invalid API Key provided: ${maskKey(key)}`),
        {
          'www-authenticate': 'Basic realm="Stripe"',
        },
      );
    }
    if (failRemaining > 0) {
      failRemaining--;
      return errorAnswer(failStatus, injectedError(failStatus));
    }
    if (accountHeader !== null && !accounts.has(accountHeader)) {
      return errorAnswer(
        403,
        errorDetail(
          'invalid_request_error',
          `The provided key '${maskKey(key)}' does not have access to account '${accountHeader}' (or that account does not exist). Application access may have been revoked.`,
          'account_invalid',
        ),
      );
    }
    const account = accountHeader;
    const fingerprint = stableStringify(params);
    const storeKey = idempotencyKey ? `${key}\u0000${account ?? ''}\u0000${idempotencyKey}` : null;
    if (storeKey) {
      const seen = idempotency.get(storeKey);
      if (seen) {
        if (seen.method !== method || seen.path !== path) {
          return errorAnswer(
            400,
            errorDetail(
              'idempotency_error',
              `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${seen.method} ${seen.path}' vs '${method} ${path}'). Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
            ),
          );
        }
        if (seen.fingerprint !== fingerprint) {
          return errorAnswer(
            400,
            errorDetail(
              'idempotency_error',
              `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
            ),
          );
        }
        entry.replayed = true;
        return answer(seen.status, seen.body, {
          'idempotent-replayed': 'true',
          'original-request': seen.requestId,
        });
      }
    }
    const ctx: Ctx = { account, livemode: keyLivemode(key), requestId, idempotencyKey };
    let status: number;
    let body: string;
    try {
      const out = route(method, path, params, ctx);
      if (!out) {
        return errorAnswer(
          404,
          errorDetail(
            'invalid_request_error',
            `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
          ),
        );
      }
      status = out.status;
      body = JSON.stringify(out.body, null, 2);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (!err.stored) return errorAnswer(err.status, err.detail);
      status = err.status;
      body = JSON.stringify({ error: err.detail }, null, 2);
    }
    if (storeKey) idempotency.set(storeKey, { method, path, fingerprint, status, body, requestId });
    if (dropRemaining > 0) {
      dropRemaining--;
      return errorAnswer(500, injectedError(500));
    }
    return answer(status, body);
  };

  const pages = (req: EmuRequest): EmuResponse => {
    const path = req.url.pathname;
    const pay = /^\/pay\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && pay) {
      const rec = sessions.get(decodeURIComponent(pay[1] as string));
      if (!rec) return html(404, 'No such Checkout Session.');
      const { id, amount_total, currency, status } = rec.obj;
      return html(200, escapeHtml(`Checkout ${id}: ${amount_total} ${currency} (${status})`));
    }
    const onboard = /^\/onboard\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && onboard) {
      const acct = accounts.get(decodeURIComponent(onboard[1] as string));
      if (!acct) return html(404, 'No such account.');
      return html(200, escapeHtml(`Onboarding for ${acct.id}`));
    }
    return html(404, 'Not found');
  };

  const server = await startHttpServer((req) => {
    if (!req.url.pathname.startsWith('/v1/')) return pages(req);
    try {
      return api(req);
    } catch (err) {
      return {
        status: 500,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          error: errorDetail(
            'api_error',
            `Emulator error: ${err instanceof Error ? err.message : String(err)}`,
          ),
        }),
      };
    }
  });
  baseUrl = server.url;
  const { hostname, port } = new URL(server.url);

  // ---------------------------------------------------------------- test controls

  const openSession = (sessionId: string): SessionRecord => {
    const rec = sessions.get(sessionId);
    if (!rec) throw new Error(`no such checkout session ${sessionId}`);
    if (rec.obj.status !== 'open')
      throw new Error(`checkout session ${sessionId} is ${rec.obj.status}, not open`);
    return rec;
  };

  const processingIntent = (sessionId: string): { rec: SessionRecord; pi: PaymentIntentRecord } => {
    const rec = sessions.get(sessionId);
    if (!rec) throw new Error(`no such checkout session ${sessionId}`);
    const pi = rec.obj.payment_intent ? paymentIntents.get(rec.obj.payment_intent) : undefined;
    if (rec.obj.status !== 'complete' || !pi || pi.obj.status !== 'processing') {
      throw new Error(
        `checkout session ${sessionId} has no delayed payment in progress (pay it with async first)`,
      );
    }
    return { rec, pi };
  };

  return {
    url: server.url,
    host: hostname,
    port: Number(port),
    protocol: 'http',
    secretKey,
    webhookSecret,
    testSecretKey,
    testWebhookSecret,
    stripeConfig: () => ({ host: hostname, port: Number(port), protocol: 'http' }),
    get webhookUrl() {
      return webhookUrl;
    },
    setWebhookUrl(url) {
      webhookUrl = url;
    },

    pay(sessionId, o = {}) {
      const rec = openSession(sessionId);
      if (now() >= rec.obj.expires_at * 1000) {
        throw new Error(`checkout session ${sessionId} passed its expires_at; expire() it instead`);
      }
      const async = o.async === true;
      const piId = newId('pi_');
      const pi: PaymentIntentObject = {
        id: piId,
        object: 'payment_intent',
        amount: rec.obj.amount_total,
        amount_received: async ? 0 : rec.obj.amount_total,
        application_fee_amount: rec.applicationFeeAmount,
        capture_method: 'automatic_async',
        client_secret: `${piId}_secret_${newId('', 25)}`,
        created: nowSec(),
        currency: rec.obj.currency,
        customer: null,
        description: rec.paymentIntentDescription,
        latest_charge: async ? null : newId('ch_'),
        livemode: rec.obj.livemode,
        metadata: structuredClone(rec.paymentIntentMetadata),
        payment_method_types: [async ? 'sepa_debit' : 'card'],
        status: async ? 'processing' : 'succeeded',
      };
      paymentIntents.set(piId, { obj: pi, account: rec.account, refunded: 0 });
      rec.obj.status = 'complete';
      rec.obj.payment_status = async ? 'unpaid' : 'paid';
      rec.obj.payment_intent = piId;
      rec.obj.customer_details = { email: rec.obj.customer_email ?? 'customer@example.com' };
      rec.obj.url = null;
      return emit(createEvent('checkout.session.completed', rec.obj, { account: rec.account }));
    },
    asyncSucceed(sessionId) {
      const { rec, pi } = processingIntent(sessionId);
      pi.obj.status = 'succeeded';
      pi.obj.amount_received = pi.obj.amount;
      pi.obj.latest_charge = newId('ch_');
      rec.obj.payment_status = 'paid';
      return emit(createEvent('checkout.session.async_payment_succeeded', rec.obj, { account: rec.account }));
    },
    asyncFail(sessionId) {
      const { rec, pi } = processingIntent(sessionId);
      pi.obj.status = 'requires_payment_method';
      return emit(createEvent('checkout.session.async_payment_failed', rec.obj, { account: rec.account }));
    },
    expire(sessionId) {
      const rec = openSession(sessionId);
      expireSession(rec);
      return emit(createEvent('checkout.session.expired', rec.obj, { account: rec.account }));
    },
    addAccount: (fields) => structuredClone(makeAccount(fields)),
    updateAccount(acctId, patch) {
      const acct = accounts.get(acctId);
      if (!acct) throw new Error(`no such account ${acctId}`);
      const previous: Record<string, unknown> = {};
      for (const k of ['charges_enabled', 'payouts_enabled', 'details_submitted'] as const) {
        const v = patch[k];
        if (v !== undefined && v !== acct[k]) {
          previous[k] = acct[k];
          acct[k] = v;
        }
      }
      return emit(createEvent('account.updated', acct, { account: acctId, previous }));
    },

    events,
    lastEvent: () => events[events.length - 1],
    redeliver(eventId, o) {
      const ev = events.find((e) => e.id === eventId);
      if (!ev) return Promise.reject(new Error(`no such event ${eventId}`));
      return post(ev, o);
    },
    deliver: (event, o) => post(event, o),
    get deliverNothing() {
      return deliverNothing;
    },
    set deliverNothing(v: boolean) {
      deliverNothing = v;
    },
    pending,
    async flush(o = {}) {
      const batch = pending.splice(0, pending.length);
      if (o.reverse) batch.reverse();
      const out: WebhookDelivery[] = [];
      for (const ev of batch) out.push(await post(ev));
      return out;
    },
    deliveries,
    async settle() {
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
    },

    failNext(n, status) {
      failRemaining = n;
      failStatus = status;
    },
    dropNextResponse(n = 1) {
      dropRemaining = n;
    },
    requests,
    sessions: () =>
      [...sessions.values()].map((r) => ({
        ...structuredClone(r.obj),
        account: r.account,
        application_fee_amount: r.applicationFeeAmount,
      })),
    paymentIntents: () =>
      [...paymentIntents.values()].map((r) => ({
        ...structuredClone(r.obj),
        account: r.account,
        amount_refunded: r.refunded,
      })),
    refunds: () => [...refunds.values()].map((r) => ({ ...structuredClone(r.obj), account: r.account })),
    accounts: () => [...accounts.values()].map((a) => structuredClone(a)),
    reset() {
      sessions.clear();
      paymentIntents.clear();
      refunds.clear();
      accounts.clear();
      idempotency.clear();
      events.length = 0;
      pending.length = 0;
      deliveries.length = 0;
      requests.length = 0;
      deliverNothing = false;
      failRemaining = 0;
      dropRemaining = 0;
    },
    close: () => server.close(),
  };
}
