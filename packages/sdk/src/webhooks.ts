/**
 * Verifying a webhook delivery (docs/api.md, Signatures and retries) with Web Crypto, so it runs in Node
 * ≥ 20, browsers, and edge runtimes alike.
 *
 * - Standard Webhooks: `webhook-signature` holds space-separated `v1,<base64 HMAC-SHA256>` entries over
 *   `${webhook-id}.${webhook-timestamp}.${body}`, keyed with the base64-decoded part of the secret
 *   after `whsec_`; `webhook-timestamp` must be within the tolerance (5 minutes) of now.
 * - `X-Webhook-Signature` (when there is no `webhook-signature`): the lowercase hex HMAC-SHA256 of the
 *   body keyed with the whole secret text; the timestamp is checked too when the delivery carries one.
 *
 * Comparisons are Web Crypto's `verify`, which runs in constant time. During a secret rotation pass both
 * secrets: a delivery signed by either is accepted.
 */
import type { WebhookEvent } from './types.js';

/** A Fetch `Headers`, or Node's `IncomingHttpHeaders` (lower-case names). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

const enc = new TextEncoder();
type Bytes = Uint8Array<ArrayBuffer>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const v = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(v) ? v[0] : v;
}

function base64(text: string): Bytes {
  const bin = atob(text);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

const hmacKey = (raw: Bytes) =>
  crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);

const concat = (a: Bytes, b: Bytes): Bytes => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

/**
 * Checks a delivery's signature and returns its event, typed by `type`. Throws
 * WebhookVerificationError when no secret signed this exact body, or the timestamp is outside the
 * tolerance (a replay). Pass the raw body exactly as received, not re-serialised JSON.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: { toleranceSeconds?: number; now?: number } = {},
): Promise<WebhookEvent> {
  const body: Bytes = typeof rawBody === 'string' ? enc.encode(rawBody) : Uint8Array.from(rawBody);
  const secrets = (typeof secret === 'string' ? [secret] : secret).filter((x) => x.length > 0);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const standard = header(headers, 'webhook-signature');
  const legacy = header(headers, 'x-webhook-signature');
  if (timestamp !== undefined || standard !== undefined) {
    const now = Math.floor((options.now ?? Date.now()) / 1000);
    if (!timestamp || !/^\d{1,15}$/.test(timestamp))
      throw new WebhookVerificationError('missing or malformed webhook-timestamp');
    if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) {
      throw new WebhookVerificationError('webhook-timestamp outside the tolerance');
    }
  }
  let ok = false;
  if (standard !== undefined) {
    if (!id) throw new WebhookVerificationError('missing webhook-id');
    const signed = concat(enc.encode(`${id}.${timestamp}.`), body);
    const given = standard
      .split(' ')
      .filter((e) => e.startsWith('v1,'))
      .map((e) => {
        try {
          return base64(e.slice(3));
        } catch {
          return new Uint8Array(0);
        }
      });
    for (const s of secrets) {
      let raw: Bytes;
      try {
        raw = base64(s.startsWith('whsec_') ? s.slice(6) : s);
      } catch {
        continue; // not a Kairos secret: it signs nothing
      }
      if (raw.length === 0) continue;
      const key = await hmacKey(raw);
      for (const sig of given) if (await crypto.subtle.verify('HMAC', key, sig, signed)) ok = true;
    }
  } else if (legacy !== undefined && /^[0-9a-f]{64}$/.test(legacy)) {
    const sig = Uint8Array.from(legacy.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
    for (const s of secrets) {
      if (await crypto.subtle.verify('HMAC', await hmacKey(enc.encode(s)), sig, body)) ok = true;
    }
  }
  if (!ok) throw new WebhookVerificationError('no valid signature for this body and secret');
  return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
}
