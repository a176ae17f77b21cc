import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildDeliveryHeaders,
  generateWebhookSecret,
  signatureHeader,
  standardSignature,
  standardWebhooksKey,
  verifySignature,
  verifyStandardSignature,
} from './signing.js';

describe('X-Webhook-Signature (docs/api.md#signatures-and-retries)', () => {
  it('is the lowercase hex HMAC-SHA256 of the body keyed with the secret string (RFC vector)', () => {
    expect(signatureHeader('key', 'The quick brown fox jumps over the lazy dog')).toBe(
      'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    );
  });

  it('uses the whole whsec_ secret text as the key and the UTF-8 bytes of the body', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"name":"Zoë 🗓️"}';
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(Buffer.from(body, 'utf8'))
      .digest('hex');
    expect(signatureHeader(secret, body)).toBe(expected);
    expect(signatureHeader(secret, body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('verifies as a receiver does', () => {
    const secret = generateWebhookSecret();
    const body = '{"id":"evt_1","type":"booking.created"}';
    const sig = signatureHeader(secret, body);
    expect(verifySignature(secret, body, sig)).toBe(true);
    expect(verifySignature(secret, `${body} `, sig)).toBe(false);
    expect(verifySignature(generateWebhookSecret(), body, sig)).toBe(false);
    expect(verifySignature(secret, body, sig.toUpperCase())).toBe(false);
    expect(verifySignature(secret, body, sig.slice(1))).toBe(false);
    expect(verifySignature(secret, body, '')).toBe(false);
  });

  it('round-trips for any body and any change of the body breaks it (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ minLength: 1 }), (body, extra) => {
        const secret = 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHQ=';
        const sig = signatureHeader(secret, body);
        return verifySignature(secret, body, sig) && !verifySignature(secret, body + extra, sig);
      }),
    );
  });
});

describe('Standard Webhooks signature', () => {
  it('reproduces the published Standard Webhooks test vector', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(
      standardSignature(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('keys with the base64-decoded part after whsec_', () => {
    const secret = generateWebhookSecret();
    expect(standardWebhooksKey(secret)).toEqual(Buffer.from(secret.slice('whsec_'.length), 'base64'));
    expect(standardWebhooksKey(secret).length).toBe(32);
  });

  it('verifies with replay protection', () => {
    const secret = generateWebhookSecret();
    const nowMs = Date.UTC(2026, 5, 1, 12, 0, 0);
    const body = '{"id":"evt_1"}';
    const h = buildDeliveryHeaders({ eventId: 'evt_1', body, secrets: [secret], nowMs });
    const input = {
      secret,
      id: h['webhook-id']!,
      timestamp: h['webhook-timestamp']!,
      signatures: h['webhook-signature']!,
      body,
      nowMs,
    };
    expect(verifyStandardSignature(input)).toBe(true);
    expect(verifyStandardSignature({ ...input, nowMs: nowMs + 301_000 })).toBe(false);
    expect(verifyStandardSignature({ ...input, nowMs: nowMs - 301_000 })).toBe(false);
    expect(verifyStandardSignature({ ...input, body: `${body}\n` })).toBe(false);
    expect(verifyStandardSignature({ ...input, id: 'evt_2' })).toBe(false);
    expect(verifyStandardSignature({ ...input, timestamp: `0${input.timestamp}` })).toBe(false);
    expect(verifyStandardSignature({ ...input, timestamp: 'soon' })).toBe(false);
    expect(verifyStandardSignature({ ...input, secret: generateWebhookSecret() })).toBe(false);
  });
});

describe('buildDeliveryHeaders', () => {
  const body = '{"id":"evt_01J","type":"booking.created","created_at":"2026-06-01T12:00:00.000Z","data":{}}';
  const nowMs = Date.parse('2026-06-01T12:00:00.750Z');

  it('carries every header, the timestamp in whole seconds', () => {
    const secret = generateWebhookSecret();
    const h = buildDeliveryHeaders({ eventId: 'evt_01J', body, secrets: [secret], nowMs });
    expect(Object.keys(h).sort()).toEqual([
      'content-type',
      'user-agent',
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
      'x-webhook-signature',
    ]);
    expect(h['content-type']).toBe('application/json');
    expect(h['user-agent']).toBe('Kairos-Webhooks/1');
    expect(h['webhook-id']).toBe('evt_01J');
    expect(h['webhook-timestamp']).toBe(String(Math.floor(nowMs / 1000)));
    expect(h['x-webhook-signature']).toBe(signatureHeader(secret, body));
    expect(h['webhook-signature']).toBe(standardSignature(secret, 'evt_01J', Math.floor(nowMs / 1000), body));
  });

  it('signs with every active secret during a rotation; X-Webhook-Signature with the previous one only', () => {
    const newest = generateWebhookSecret();
    const old = generateWebhookSecret();
    const h = buildDeliveryHeaders({ eventId: 'evt_01J', body, secrets: [newest, old], nowMs });
    const entries = h['webhook-signature']!.split(' ');
    expect(entries).toHaveLength(2);
    for (const e of entries) expect(e).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(h['x-webhook-signature']).toBe(signatureHeader(old, body));
    const base = {
      id: 'evt_01J',
      timestamp: h['webhook-timestamp']!,
      signatures: h['webhook-signature']!,
      body,
    };
    expect(verifyStandardSignature({ ...base, secret: newest, nowMs })).toBe(true);
    expect(verifyStandardSignature({ ...base, secret: old, nowMs })).toBe(true);
    expect(verifyStandardSignature({ ...base, secret: generateWebhookSecret(), nowMs })).toBe(false);
  });

  it('refuses to sign without a secret', () => {
    expect(() => buildDeliveryHeaders({ eventId: 'evt_1', body, secrets: [], nowMs })).toThrow(/secret/);
  });
});

describe('generateWebhookSecret', () => {
  it('is whsec_ + base64 of 32 random bytes', () => {
    const secrets = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const s = generateWebhookSecret();
      expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(s.slice(6), 'base64').length).toBe(32);
      secrets.add(s);
    }
    expect(secrets.size).toBe(50);
  });
});
