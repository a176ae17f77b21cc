import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../../../test/helpers/receiver.js';
import { closeOutboundDispatchers } from '../../platform/outbound.js';
import { attemptDelivery } from './attempt.js';
import {
  buildDeliveryHeaders,
  generateWebhookSecret,
  verifySignature,
  verifyStandardSignature,
} from './signing.js';

const DEV = { allowPrivateNetwork: true };
const STRICT = { allowPrivateNetwork: false };

const envelope = {
  id: 'evt_01JTEST',
  type: 'booking.created',
  created_at: '2026-06-01T12:00:00.000Z',
  data: { booking: { id: 'booking_1', customer_name: 'Zoë Ünicode 🗓️' } },
};
const body = JSON.stringify(envelope);

describe('attemptDelivery', () => {
  let receiver: Receiver;
  const secret = generateWebhookSecret();
  const nowMs = Date.now();
  const headers = buildDeliveryHeaders({ eventId: envelope.id, body, secrets: [secret], nowMs });
  const attempt = (over: Partial<Parameters<typeof attemptDelivery>[0]> = {}) =>
    attemptDelivery({ url: receiver.url, body, headers, timeoutMs: 2_000, policy: DEV, ...over });

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => {
    receiver.setBehaviour(() => ({ status: 200 }));
  });
  afterAll(async () => {
    await receiver.close();
    await closeOutboundDispatchers();
  });

  it('succeeds on 2xx and the receiver can verify both signatures over the raw body', async () => {
    receiver.setBehaviour(() => ({ status: 200, body: 'ok' }));
    const before = receiver.received.length;
    const result = await attempt();
    expect(result).toMatchObject({ ok: true, response_status: 200, error: null, response_body: 'ok' });
    expect(Number.isInteger(result.duration_ms)).toBe(true);
    const [got] = (await receiver.waitFor(before + 1)).slice(before);
    expect(got!.method).toBe('POST');
    expect(got!.body).toBe(body);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toBe('Kairos-Webhooks/1');
    expect(got!.headers['webhook-id']).toBe(envelope.id);
    expect(verifySignature(secret, got!.body, String(got!.headers['x-webhook-signature']))).toBe(true);
    expect(
      verifyStandardSignature({
        secret,
        id: String(got!.headers['webhook-id']),
        timestamp: String(got!.headers['webhook-timestamp']),
        signatures: String(got!.headers['webhook-signature']),
        body: got!.body,
        nowMs: Date.now(),
      }),
    ).toBe(true);
  });

  it('treats any 2xx as success', async () => {
    receiver.setBehaviour(() => ({ status: 204 }));
    expect(await attempt()).toMatchObject({ ok: true, response_status: 204, error: null, response_body: '' });
  });

  it('fails on 3xx (not followed), 4xx and 5xx, keeping the status', async () => {
    for (const status of [301, 302, 400, 410, 500, 503]) {
      const before = receiver.received.length;
      receiver.setBehaviour(() => ({ status, headers: { location: `${receiver.url}/next` }, body: 'nope' }));
      const result = await attempt();
      expect(result).toMatchObject({ ok: false, response_status: status, error: `HTTP ${status}` });
      expect(result.response_body).toBe('nope');
      expect(receiver.received.length).toBe(before + 1);
    }
  });

  it('keeps at most 1 KiB of the response body', async () => {
    receiver.setBehaviour(() => ({ status: 500, body: 'é'.repeat(40_000) }));
    const result = await attempt();
    expect(result.ok).toBe(false);
    expect(Buffer.byteLength(result.response_body!, 'utf8')).toBeLessThanOrEqual(1024);
    expect(result.response_body).toBe('é'.repeat(512));
  });

  it('reports a timeout as error "timeout"', async () => {
    receiver.setBehaviour(() => ({ status: 200, delayMs: 3_000 }));
    const result = await attempt({ timeoutMs: 200 });
    expect(result).toMatchObject({ ok: false, response_status: null, error: 'timeout', response_body: null });
    expect(result.duration_ms).toBeGreaterThanOrEqual(150);
    expect(result.duration_ms).toBeLessThan(1_500);
  });

  it('reports an SSRF refusal as "refused: <reason>" without contacting the receiver', async () => {
    const before = receiver.received.length;
    const literal = await attempt({ url: `https://127.0.0.1:${receiver.port}/hook`, policy: STRICT });
    expect(literal).toMatchObject({ ok: false, response_status: null, response_body: null });
    expect(literal.error).toBe('refused: address 127.0.0.1 is not a public address');
    const plain = await attempt({ policy: STRICT });
    expect(plain.error).toMatch(/^refused: scheme http not allowed/);
    const name = await attempt({ url: `https://localhost:${receiver.port}/hook`, policy: STRICT });
    expect(name.error).toMatch(/^refused: localhost resolves to non-public address/);
    expect(receiver.received.length).toBe(before);
  });

  it('reports a connection error with its message', async () => {
    const srv = createServer();
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
    const { port } = srv.address() as { port: number };
    await new Promise<void>((resolve) => srv.close(() => resolve()));
    const result = await attempt({ url: `http://127.0.0.1:${port}/hook` });
    expect(result).toMatchObject({ ok: false, response_status: null, response_body: null });
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('reports a connection reset before any answer', async () => {
    const srv = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
    const { port } = srv.address() as { port: number };
    try {
      const result = await attempt({ url: `http://127.0.0.1:${port}/hook` });
      expect(result).toMatchObject({ ok: false, response_status: null, response_body: null });
      expect(result.error).toBeTruthy();
    } finally {
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    }
  });

  it('never throws, even for a malformed URL', async () => {
    const result = await attempt({ url: 'definitely not a url' });
    expect(result).toMatchObject({ ok: false, response_status: null, error: 'refused: invalid URL' });
  });
});
