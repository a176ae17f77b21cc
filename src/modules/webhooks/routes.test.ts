import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleBooking } from '../../../test/helpers/events.js';
import { eventCatalogue } from '../index.js';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { decryptSecret } from '../../platform/crypto.js';
import { inlineComponents } from '../../platform/openapi.js';
import { closeOutboundDispatchers } from '../../platform/outbound.js';
import { emitEvent } from './events.js';

// The production outbound policy: https only, no private or loopback addresses.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  await closeOutboundDispatchers();
});

const HOOK = 'https://hooks.example.com/kairos';

async function createHook(token: string, body: Record<string, unknown> = {}) {
  const res = await t.call('POST', '/v1/webhooks', {
    token,
    body: { url: HOOK, events: ['booking.created'], description: 'CRM sync', ...body },
  });
  expect(res.status).toBe(201);
  return res.json();
}

describe('POST /v1/webhooks', () => {
  it('answers the bare docs/api.md#webhooks object with a whsec_ secret, stored only encrypted', async () => {
    const acc = await t.account();
    const res = await t.call('POST', '/v1/webhooks', {
      token: acc.key,
      body: { url: HOOK, events: ['booking.created', 'proposal.resolved'], description: 'CRM sync' },
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual([
      'created_at',
      'description',
      'events',
      'id',
      'livemode',
      'secret',
      'url',
    ]);
    expect(body).toMatchObject({ url: HOOK, events: ['booking.created', 'proposal.resolved'] });
    expect(body.id).toMatch(/^wh_[0-9a-z]{26}$/);
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.headers.get('location')).toBe(`/v1/webhooks/${body.id}`);

    const row = await t.ctx.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(body.secret);
    expect(decryptSecret(t.ctx.keys.encryptionKey, row.secret_enc)).toBe(body.secret);
  });

  it('rejects unknown event types with a message per field', async () => {
    const acc = await t.account();
    const res = await t.call('POST', '/v1/webhooks', {
      token: acc.key,
      body: { url: HOOK, events: ['booking.created', 'proposal.consent_revoked', 'webhook.test'] },
    });
    expect(res.status).toBe(400);
    const problem = await res.json();
    expect(problem.type).toMatch(/\/errors\/validation-error$/);
    expect(Object.keys(problem.errors)).toEqual(['events.1', 'events.2']);
    // The document's enum is the schema the server validates with: the message names every type.
    expect(problem.errors['events.1']).toMatch(/^must be one of: booking\.created, /);
    expect(problem.errors['events.2']).not.toContain('webhook.test');
  });

  it('accepts every docs/api.md#events event type', async () => {
    const acc = await t.account();
    const all = [...eventCatalogue().keys()].filter((type) => type !== 'webhook.test');
    const body = await createHook(acc.key, { events: all });
    expect(body.events).toEqual(all);
  });

  it('refuses non-https URLs, IP literals of private networks, credentials and unknown fields', async () => {
    const acc = await t.account();
    const cases: [unknown, string][] = [
      [{ url: 'http://hooks.example.com/x', events: ['booking.created'] }, 'url'],
      [{ url: 'https://127.0.0.1/x', events: ['booking.created'] }, 'url'],
      [{ url: 'https://[::ffff:10.0.0.1]/x', events: ['booking.created'] }, 'url'],
      [{ url: 'https://169.254.169.254/latest', events: ['booking.created'] }, 'url'],
      [{ url: 'https://user:pw@hooks.example.com/x', events: ['booking.created'] }, 'url'],
      [{ url: 'not a url', events: ['booking.created'] }, 'url'],
      [{ url: HOOK, events: [] }, 'events'],
      [{ url: HOOK }, 'events'],
      [{ url: HOOK, events: ['booking.created'], secret: 'whsec_mine' }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const res = await t.call('POST', '/v1/webhooks', { token: acc.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys((await res.json()).errors)).toContain(field);
    }
  });

  it('replays the first answer for a repeated Idempotency-Key and creates one webhook', async () => {
    const acc = await t.account();
    const send = () =>
      t.call('POST', '/v1/webhooks', {
        token: acc.key,
        headers: { 'idempotency-key': 'create-hook-1' },
        body: { url: HOOK, events: ['booking.created'] },
      });
    const first = await send();
    const second = await send();
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.text()).toBe(await first.text());
    const list = await (await t.call('GET', '/v1/webhooks', { token: acc.key })).json();
    expect(list.webhooks).toHaveLength(1);
  });

  it('is forbidden to publishable keys and needs a credential', async () => {
    const acc = await t.account();
    const pk = await t.ctx.modules.apiKeys.create(acc.id, { name: 'widget', key_type: 'publishable' });
    const res = await t.call('POST', '/v1/webhooks', {
      token: pk.key,
      body: { url: HOOK, events: ['booking.created'] },
    });
    expect(res.status).toBe(403);
    expect((await t.call('GET', '/v1/webhooks', { token: pk.key })).status).toBe(403);
    expect((await t.call('GET', '/v1/webhooks')).status).toBe(401);
  });
});

describe('managing webhooks', () => {
  it('lists newest first with cursor pagination, never showing a secret', async () => {
    const acc = await t.account();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createHook(acc.key, { description: `hook ${i}` })).id);
    const first = await (await t.call('GET', '/v1/webhooks?limit=2', { token: acc.key })).json();
    expect(first.webhooks.map((w: { id: string }) => w.id)).toEqual([ids[2], ids[1]]);
    expect(first.pagination.has_more).toBe(true);
    const cursor = encodeURIComponent(first.pagination.next_cursor);
    const second = await (
      await t.call('GET', `/v1/webhooks?limit=2&cursor=${cursor}`, { token: acc.key })
    ).json();
    expect(second.webhooks.map((w: { id: string }) => w.id)).toEqual([ids[0]]);
    expect(second.pagination).toEqual({ next_cursor: null, has_more: false });
    expect(JSON.stringify([first, second])).not.toContain('whsec_');
    expect(first.webhooks[0]).toMatchObject({ active: true, previous_secret_expires_at: null });
  });

  it('reads, updates and deletes a webhook; other accounts get 404', async () => {
    const acc = await t.account();
    const other = await t.account();
    const hook = await createHook(acc.key);
    const path = `/v1/webhooks/${hook.id}`;

    const read = await t.call('GET', path, { token: acc.key });
    expect(read.status).toBe(200);
    const { webhook } = await read.json();
    expect(webhook).toMatchObject({ id: hook.id, url: HOOK, events: ['booking.created'], active: true });
    expect(webhook.secret).toBeUndefined();
    expect((await t.call('GET', path, { token: other.key })).status).toBe(404);
    expect((await t.call('PATCH', path, { token: other.key, body: { active: false } })).status).toBe(404);
    expect((await t.call('DELETE', path, { token: other.key })).status).toBe(404);

    const patched = await t.call('PATCH', path, {
      token: acc.key,
      body: {
        url: 'https://other.example.com/in',
        events: ['booking.cancelled'],
        description: 'x',
        active: false,
      },
    });
    expect(patched.status).toBe(200);
    expect((await patched.json()).webhook).toMatchObject({
      url: 'https://other.example.com/in',
      events: ['booking.cancelled'],
      description: 'x',
      active: false,
    });
    const badPatch = await t.call('PATCH', path, { token: acc.key, body: { events: ['nope'] } });
    expect(badPatch.status).toBe(400);
    expect((await t.call('PATCH', path, { token: acc.key, body: {} })).status).toBe(400);

    expect((await t.call('DELETE', path, { token: acc.key })).status).toBe(204);
    expect((await t.call('GET', path, { token: acc.key })).status).toBe(404);
    expect((await t.call('GET', '/v1/webhooks/wh_nope', { token: acc.key })).status).toBe(400);
  });

  it('rotates the secret: the new one is shown once, the old one stays for 24 hours', async () => {
    const acc = await t.account();
    const hook = await createHook(acc.key);
    const res = await t.call('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { token: acc.key });
    expect(res.status).toBe(200);
    const { webhook } = await res.json();
    expect(webhook.secret).toMatch(/^whsec_/);
    expect(webhook.secret).not.toBe(hook.secret);
    const overlap = new Date(webhook.previous_secret_expires_at).getTime() - Date.now();
    expect(overlap).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(overlap).toBeLessThanOrEqual(24 * 3_600_000);
    const row = await t.ctx.db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', hook.id)
      .executeTakeFirstOrThrow();
    expect(decryptSecret(t.ctx.keys.encryptionKey, row.secret_enc)).toBe(webhook.secret);
    expect(decryptSecret(t.ctx.keys.encryptionKey, row.previous_secret_enc!)).toBe(hook.secret);
    const read = await (await t.call('GET', `/v1/webhooks/${hook.id}`, { token: acc.key })).json();
    expect(read.webhook.secret).toBeUndefined();
  });
});

describe('outbound guard at delivery time', () => {
  it('records an SSRF refusal as a failed attempt when a host name resolves to loopback', async () => {
    const acc = await t.account();
    // A name (not an IP literal) passes the static check; it resolves to 127.0.0.1 at connect time.
    const hook = await createHook(acc.key, { url: 'https://localhost:9/hook' });
    await t.ctx.db.transaction().execute((trx) =>
      emitEvent(trx, t.ctx.clock, {
        accountId: acc.id,
        livemode: true,
        type: 'booking.created',
        data: { booking: sampleBooking() },
      }),
    );
    await t.ctx.jobs.drain();
    const res = await t.call('GET', `/v1/webhooks/${hook.id}/deliveries`, { token: acc.key });
    const { deliveries } = await res.json();
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0].status).toBe('pending');
    expect(deliveries[0].attempts).toEqual([
      expect.objectContaining({
        number: 1,
        manual: false,
        response_status: null,
        error: expect.stringMatching(
          /^refused: localhost resolves to non-public address (127\.0\.0\.1|::1)$/,
        ),
      }),
    ]);
    const next = new Date(deliveries[0].next_attempt_at).getTime() - Date.now();
    expect(next).toBeGreaterThan(55_000);
    expect(next).toBeLessThanOrEqual(60_000);
  });
});

describe('GET /v1/events/{id}', () => {
  it('returns the account’s own event as delivered, and 404 to other accounts', async () => {
    const acc = await t.account();
    const other = await t.account();
    const event = await t.ctx.db.transaction().execute((trx) =>
      emitEvent(trx, t.ctx.clock, {
        accountId: acc.id,
        livemode: true,
        type: 'booking.created',
        data: { booking: sampleBooking({ id: 'booking_01jxk9c2e1d3f5g7h9j1k3m5n1' }) },
      }),
    );
    const res = await t.call('GET', `/v1/events/${event.id}`, { token: acc.key });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ event });
    expect((await t.call('GET', `/v1/events/${event.id}`, { token: other.key })).status).toBe(404);
  });
});

describe('OpenAPI document', () => {
  it('describes every webhook route with its responses', async () => {
    const doc = await (await t.call('GET', '/v1/openapi.json')).json();
    const expected: [string, string, string][] = [
      ['/v1/webhooks', 'post', '201'],
      ['/v1/webhooks', 'get', '200'],
      ['/v1/webhooks/{id}', 'get', '200'],
      ['/v1/webhooks/{id}', 'patch', '200'],
      ['/v1/webhooks/{id}', 'delete', '204'],
      ['/v1/webhooks/{id}/rotate-secret', 'post', '200'],
      ['/v1/webhooks/{id}/test', 'post', '202'],
      ['/v1/webhooks/{id}/deliveries', 'get', '200'],
      ['/v1/webhooks/{id}/deliveries/{delivery_id}/retry', 'post', '202'],
      ['/v1/events/{id}', 'get', '200'],
    ];
    for (const [path, method, status] of expected) {
      expect(doc.paths[path]?.[method]?.responses?.[status], `${method} ${path}`).toBeDefined();
    }
    const created = inlineComponents(
      doc.paths['/v1/webhooks'].post.responses['201'].content['application/json'].schema,
      doc.components.schemas,
    ) as { properties: Record<string, unknown> };
    expect(Object.keys(created.properties).sort()).toEqual([
      'created_at',
      'description',
      'events',
      'id',
      'livemode',
      'secret',
      'url',
    ]);
  });
});
