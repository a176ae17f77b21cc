/**
 * Webhook signatures. Every delivery carries two independent signatures:
 *
 * 1. `X-Webhook-Signature` (docs/api.md#signatures-and-retries): lowercase hex HMAC-SHA256 of the exact UTF-8
 *    request body, keyed with the subscription secret string used as-is (the whole `whsec_…`
 *    text, as UTF-8 bytes). Signed with one secret: during a rotation's 24-hour overlap the previous
 *    one (receivers that have not switched yet keep verifying), afterwards the new one.
 *
 * 2. Standard Webhooks (https://www.standardwebhooks.com, docs/api.md#signatures-and-retries): `webhook-id` (the `evt_`
 *    id, stable across retries), `webhook-timestamp` (unix seconds of this attempt, fresh on every
 *    retry) and `webhook-signature`: space-separated `v1,<base64 HMAC-SHA256>` entries over
 *    `${id}.${timestamp}.${body}`. As the Standard Webhooks specification and its reference
 *    libraries define it, the HMAC key is the base64-DECODED part after the `whsec_` prefix (not the
 *    secret text), so a receiver's off-the-shelf Standard Webhooks library verifies our deliveries.
 *    During a secret rotation every active secret signs (newest first), so receivers holding either
 *    secret accept the delivery.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { hmacSha256Hex, safeEqual } from '../../platform/crypto.js';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const WEBHOOK_USER_AGENT = 'Kairos-Webhooks/1';
/** Default tolerance for `webhook-timestamp` when verifying (Standard Webhooks recommends 5 min). */
export const DEFAULT_TIMESTAMP_TOLERANCE_SECONDS = 300;

/** `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The `X-Webhook-Signature` value: lowercase hex HMAC-SHA256 of the UTF-8 body, keyed with `secret`. */
export function signatureHeader(secret: string, body: string): string {
  return hmacSha256Hex(secret, Buffer.from(body, 'utf8'));
}

/**
 * Verifies an `X-Webhook-Signature` value as a receiver does: recompute over the raw body and
 * compare in constant time, unequal lengths rejected first.
 */
export function verifySignature(secret: string, body: string, header: string): boolean {
  return safeEqual(signatureHeader(secret, body), header);
}

/** The Standard Webhooks HMAC key: the base64-decoded part after `whsec_` (whole string if no prefix). */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? secret.slice(WEBHOOK_SECRET_PREFIX.length)
    : secret;
  return Buffer.from(encoded, 'base64');
}

/** One `webhook-signature` entry: `v1,<base64 HMAC-SHA256 of "${id}.${timestamp}.${body}">`. */
export function standardSignature(
  secret: string,
  id: string,
  timestampSeconds: number | string,
  body: string,
): string {
  const mac = createHmac('sha256', standardWebhooksKey(secret))
    .update(`${id}.${timestampSeconds}.${body}`, 'utf8')
    .digest('base64');
  return `v1,${mac}`;
}

export interface DeliveryHeaderInput {
  /** The `evt_` id; becomes `webhook-id`. */
  eventId: string;
  /** The exact JSON text that will be sent. */
  body: string;
  /** Active secrets, newest first; at least one. */
  secrets: string[];
  /** Time of this attempt; becomes `webhook-timestamp` (seconds). */
  nowMs: number;
}

/** All headers of one delivery attempt. */
export function buildDeliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  // X-Webhook-Signature carries one value: the oldest active secret's. Receivers verifying it (the
  // README's snippet) keep working through a rotation's overlap and switch when it ends; the Standard
  // Webhooks header carries every active secret, so they may switch at any time.
  const oldest = input.secrets[input.secrets.length - 1];
  if (oldest === undefined) throw new Error('buildDeliveryHeaders: at least one secret is required');
  const timestamp = Math.floor(input.nowMs / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'x-webhook-signature': signatureHeader(oldest, input.body),
    'webhook-id': input.eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': input.secrets
      .map((secret) => standardSignature(secret, input.eventId, timestamp, input.body))
      .join(' '),
  };
}

export interface StandardVerifyInput {
  secret: string;
  /** The `webhook-id` header. */
  id: string;
  /** The `webhook-timestamp` header. */
  timestamp: string;
  /** The `webhook-signature` header. */
  signatures: string;
  body: string;
  nowMs: number;
  toleranceSeconds?: number;
}

/**
 * Verifies Standard Webhooks headers as a receiver does: timestamp within tolerance (replay
 * protection), then any `v1,` entry matching in constant time.
 */
export function verifyStandardSignature(input: StandardVerifyInput): boolean {
  if (!/^\d{1,15}$/.test(input.timestamp)) return false;
  const ts = Number(input.timestamp);
  const tolerance = input.toleranceSeconds ?? DEFAULT_TIMESTAMP_TOLERANCE_SECONDS;
  if (Math.abs(Math.floor(input.nowMs / 1000) - ts) > tolerance) return false;
  const expected = standardSignature(input.secret, input.id, input.timestamp, input.body);
  let match = false;
  for (const entry of input.signatures.split(' ')) {
    if (entry.startsWith('v1,') && safeEqual(entry, expected)) match = true;
  }
  return match;
}
