import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { parseRawAnswer, type RawAnswer, rawExchange, rawRequest } from '../../test/helpers/raw.js';
import { buildApp } from '../app.js';

let t: TestApp;
let key: string;
let webhookId: string;
beforeAll(async () => {
  t = await startTestApp();
  key = (await t.account()).key;
  const wh = await t.call('POST', '/v1/webhooks', {
    token: key,
    body: { url: 'https://hooks.example.com/kairos', events: ['booking.created'] },
  });
  expect(wh.status).toBe(201);
  webhookId = (await wh.json()).id;
});
afterAll(() => t.close());

const auth = () => ({ authorization: `Bearer ${key}` });

/** problem+json with request_id equal to X-Request-Id, and nothing of the framework or the database. */
function expectProblem(a: RawAnswer, status: number, slug: string): Record<string, unknown> {
  expect(a.status).toBe(status);
  expect(a.headers['content-type']).toMatch(/^application\/problem\+json/);
  const p = JSON.parse(a.body) as Record<string, unknown>;
  expect(p).toMatchObject({ type: `${t.url}/errors/${slug}`, status });
  expect(p.request_id).toMatch(/^req_[0-9a-z]{26}$/);
  expect(p.request_id).toBe(a.headers['x-request-id']);
  expect(a.body).not.toMatch(/FST_ERR|invalid input syntax|invalid byte sequence|at .*\.(ts|js):\d+/);
  return p;
}

describe('the access gate decides from the matched route, whatever the request-target form', () => {
  const port = () => new URL(t.url).port;
  const forms = (path: string) => [
    `http://127.0.0.1:${port()}${path}`,
    `HTTP://another-host.example${path}`,
    `//${path.slice(1)}`,
    `/.${path}`,
    path.replace('/v1/', '/v1%2F'),
    path.toUpperCase(),
    `${path}/`,
  ];

  it.each([
    ['GET', '/v1/hosts'],
    ['POST', '/v1/hosts'],
    ['GET', '/v1/api-keys'],
    ['GET', '/v1/me'],
    ['GET', '/v1/webhooks'],
    ['DELETE', '/v1/sessions/current'],
    ['GET', '/v1/calendars'],
  ])(
    '%s %s without a credential is 401 in absolute-form, //, /./, %%2F, upper case and trailing slash',
    async (method, path) => {
      for (const target of forms(path)) {
        const a = await rawRequest(t.url, method, target, {
          headers: { 'content-type': 'application/json' },
          body: method === 'POST' ? '{"name":"x"}' : undefined,
        });
        expectProblem(a, 401, 'unauthorized');
      }
    },
  );

  it('every operation of the OpenAPI document answers the absolute-form target as it answers the path', async () => {
    const doc = (await (await t.call('GET', '/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const zero = '00000000-0000-0000-0000-000000000000';
    let compared = 0;
    for (const [template, ops] of Object.entries(doc.paths)) {
      const path = template.replace(/\{[^}]+\}/g, zero);
      for (const method of Object.keys(ops).map((m) => m.toUpperCase())) {
        if (method === 'HEAD' || method === 'OPTIONS') continue;
        const plain = await rawRequest(t.url, method, path);
        const absolute = await rawRequest(t.url, method, `http://127.0.0.1:${port()}${path}`);
        expect(absolute.status, `${method} ${template}`).toBe(plain.status);
        expect(absolute.status, `${method} ${template}`).toBeLessThan(500);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(30);
  });

  it('a valid credential reaches the route in absolute-form too', async () => {
    const a = await rawRequest(t.url, 'GET', `http://127.0.0.1:${port()}/v1/hosts`, { headers: auth() });
    expect(a.status).toBe(200);
    expect(a.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('the app refuses to start with a route that declares no access', async () => {
    const app = await buildApp(t.ctx);
    app.get('/v1/undeclared', async () => ({ ok: true }));
    await expect(app.ready()).rejects.toThrow(/must declare config\.access.*GET \/v1\/undeclared/);
    await app.close().catch(() => {});
  });
});

describe('U+0000 in any text is a 400 naming the field, and nothing is written', () => {
  it('host name, webhook url and description, API-key name and session e-mail', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/v1/hosts', { display_name: 'a\u0000b', timezone: 'Europe/Berlin' }, 'display_name'],
      [
        'POST',
        '/v1/webhooks',
        { url: 'https://hooks.example.com/\u0000', events: ['booking.created'] },
        'url',
      ],
      ['PATCH', `/v1/webhooks/${webhookId}`, { description: 'x\u0000' }, 'description'],
      ['POST', '/v1/api-keys', { name: 'k\u0000' }, 'name'],
      ['POST', '/v1/api-keys', { name: 'ok', description: '\u0000' }, 'description'],
      ['POST', '/v1/sessions', { email: 'a\u0000@example.com', password: 'whatever long' }, 'email'],
    ];
    const before = (await (await t.call('GET', '/v1/hosts', { token: key })).json()).hosts.length;
    for (const [method, path, body, field] of cases) {
      const a = await rawRequest(t.url, method, path, {
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const p = expectProblem(a, 400, 'validation-error');
      expect(p.errors, `${method} ${path}`).toHaveProperty([field]);
    }
    const after = (await (await t.call('GET', '/v1/hosts', { token: key })).json()).hosts.length;
    expect(after).toBe(before);
  });

  it('a nested string and an object key', async () => {
    const a = await rawRequest(t.url, 'PUT', '/v1/principals/00000000-0000-0000-0000-000000000000/schedule', {
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ note: 'x\u0000' }], 'k\u0000': 1 }),
    });
    const p = expectProblem(a, 400, 'validation-error');
    expect(p.errors).toEqual({
      'rules.0.note': 'must not contain the NUL character (U+0000)',
      'k\\u0000': 'must not contain the NUL character (U+0000)',
    });
  });

  it('a body nested deeper than 32 levels is a 400 on every route, also with an Idempotency-Key', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const a = await rawRequest(t.url, 'POST', `/v1/webhooks/${webhookId}/test`, {
      headers: { ...auth(), 'content-type': 'application/json', 'idempotency-key': 'deep-1' },
      body: deep,
    });
    expect(expectProblem(a, 400, 'validation-error').errors).toEqual({
      body: 'must not nest deeper than 32 levels',
    });
  });

  it('query filters and path parameters', async () => {
    const q = await rawRequest(t.url, 'GET', `/v1/webhooks/${webhookId}/deliveries?event_type=a%00b`, {
      headers: auth(),
    });
    expect(expectProblem(q, 400, 'validation-error').errors).toHaveProperty(['event_type']);
    const p = await rawRequest(t.url, 'GET', '/v1/hosts/a%00b', { headers: auth() });
    expect(expectProblem(p, 400, 'validation-error').errors).toHaveProperty(['id']);
  });
});

describe('forged pagination cursors are a 400 with errors.cursor', () => {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
  const forged = [
    'not-a-cursor',
    b64('2026-01-01T00:00:00.000Z|\u0000'),
    b64('2026-01-01T00:00:00.000Z|not-a-uuid'),
    b64('-271821-04-20T00:00:00.000Z|00000000-0000-0000-0000-000000000000'),
    b64('2026-13-45T00:00:00.000Z|00000000-0000-0000-0000-000000000000'),
    b64('2026-01-01|00000000-0000-0000-0000-000000000000'),
    `${b64('2026-01-01T00:00:00.000Z|00000000-0000-0000-0000-000000000000')}A`,
  ];
  it.each(['/v1/hosts', '/v1/api-keys', '/v1/webhooks', '/v1/webhooks/{id}/deliveries'])(
    '%s',
    async (path) => {
      for (const cursor of forged) {
        const target = `${path.replace('{id}', webhookId)}?cursor=${encodeURIComponent(cursor)}`;
        const a = await rawRequest(t.url, 'GET', target, { headers: auth() });
        expect(expectProblem(a, 400, 'validation-error').errors, cursor).toEqual({
          cursor: 'is not a cursor returned by this API',
        });
      }
    },
  );

  it('a cursor of another list (a webhook cursor on hosts and API keys) is refused too', async () => {
    const hook = { url: 'https://hooks.example.com/second', events: ['booking.created'] };
    expect((await t.call('POST', '/v1/webhooks', { token: key, body: hook })).status).toBe(201);
    const page = await (await t.call('GET', '/v1/webhooks?limit=1', { token: key })).json();
    const cursor = page.pagination.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    for (const path of ['/v1/hosts', '/v1/api-keys']) {
      const a = await rawRequest(t.url, 'GET', `${path}?cursor=${cursor}`, { headers: auth() });
      expect(expectProblem(a, 400, 'validation-error').errors).toEqual({
        cursor: 'is not a cursor returned by this API',
      });
    }
  });

  it('a cursor the API returned still pages', async () => {
    for (const name of ['one', 'two', 'three']) {
      expect((await t.call('POST', '/v1/hosts', { token: key, body: { display_name: name } })).status).toBe(
        201,
      );
    }
    const first = await (await t.call('GET', '/v1/hosts?limit=2', { token: key })).json();
    expect(first.pagination.has_more).toBe(true);
    const next = await t.call('GET', `/v1/hosts?limit=2&cursor=${first.pagination.next_cursor}`, {
      token: key,
    });
    expect(next.status).toBe(200);
    expect((await next.json()).hosts.length).toBeGreaterThan(0);
  });
});

describe("answers Fastify and Node's parser give are problem+json too", () => {
  it.each(['/v1/hosts/%ZZ', '/v1/hosts/%', '/v1/hosts/%C0%AE', '/v1/%E0%A4%A'])(
    'malformed percent-encoding %s → 400 bad-request with X-Request-Id and rate-limit headers',
    async (target) => {
      const a = await rawRequest(t.url, 'GET', target, { headers: auth() });
      expectProblem(a, 400, 'bad-request');
      expect(a.headers['x-ratelimit-limit']).toBeDefined();
    },
  );

  it('a malformed target without a credential under /v1/ is 401, as every private path', async () => {
    expectProblem(await rawRequest(t.url, 'GET', '/v1/hosts/%ZZ'), 401, 'unauthorized');
  });

  it('a path parameter over 100 characters → 414 uri-too-long', async () => {
    const a = await rawRequest(t.url, 'GET', `/v1/hosts/${'a'.repeat(101)}`, { headers: auth() });
    expectProblem(a, 414, 'uri-too-long');
  });

  it('headers over 16 KiB → 431 problem+json', async () => {
    const text = await rawExchange(
      t.url,
      `GET /v1/hosts HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expectProblem(parseRawAnswer(text), 431, 'header-fields-too-large');
  });

  it('CONNECT → 405, an Expect other than 100-continue → 417, no Host → 400: problem+json, not Node’s bare answers', async () => {
    const connect = await rawExchange(t.url, 'CONNECT example.invalid:443 HTTP/1.1\r\nHost: x\r\n\r\n');
    expectProblem(parseRawAnswer(connect), 405, 'method-not-allowed');
    const expectation = await rawExchange(
      t.url,
      'GET /v1/hosts HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n',
    );
    expectProblem(parseRawAnswer(expectation), 417, 'expectation-failed');
    const noHost = await rawExchange(t.url, 'GET /v1/hosts HTTP/1.1\r\nConnection: close\r\n\r\n');
    expectProblem(parseRawAnswer(noHost), 400, 'bad-request');
  });

  it('a message that is not HTTP → 400 problem+json', async () => {
    const text = await rawExchange(t.url, 'NOT HTTP AT ALL\r\n\r\n');
    expectProblem(parseRawAnswer(text), 400, 'bad-request');
  });
});

describe('a JSON content type without a body', () => {
  it('is no body, not an empty JSON document: DELETE answers as without the header, a body-less POST is a field error', async () => {
    const wh = await t.call('POST', '/v1/webhooks', {
      token: key,
      body: { url: 'https://hooks.example.com/delete-me', events: ['booking.created'] },
    });
    const id = (await wh.json()).id;
    const del = await rawRequest(t.url, 'DELETE', `/v1/webhooks/${id}`, {
      headers: { ...auth(), 'content-type': 'application/json', 'content-length': '0' },
    });
    expect(del.status).toBe(204);
    const post = await rawRequest(t.url, 'POST', '/v1/hosts', {
      headers: { ...auth(), 'content-type': 'application/json', 'content-length': '0' },
    });
    expectProblem(post, 400, 'validation-error');
  });
});
