import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, type Json, startTestApp, type TestApp, type TestResponse } from '../../test/helpers/app.js';
import { clearOfHourBoundary } from '../../test/helpers/windows.js';

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  key = (await t.account()).key;
});
afterAll(() => t.close());

async function expectProblem(res: TestResponse | Response, status: number, slug: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const p = await (res as TestResponse).json();
  expect(p).toMatchObject({ type: `${t.url}/errors/${slug}`, status });
  expect(typeof p.title).toBe('string');
  expect(typeof p.detail).toBe('string');
  expect(p.request_id).toMatch(/^req_[0-9a-z]{26}$/);
  expect(p.request_id).toBe(res.headers.get('x-request-id'));
  expect(JSON.stringify(p)).not.toMatch(/at .*\.(ts|js):\d+/);
  return p;
}

describe('errors are problem+json (docs/api.md#errors)', () => {
  it('unknown route → 404 not-found', async () => {
    await expectProblem(await t.call('GET', '/v1/nothing-here', { token: key }), 404, 'not-found');
    await expectProblem(await t.call('GET', '/nothing-here.txt'), 404, 'not-found');
  });

  it('known path, wrong method → 405 with Allow', async () => {
    const res = await t.call('PUT', '/v1/api-keys', { token: key, body: {} });
    await expectProblem(res, 405, 'method-not-allowed');
    expect(res.headers.get('allow')).toBe('GET, POST');
  });

  it('malformed JSON → 400 with errors.body', async () => {
    const p = await expectProblem(
      await t.call('POST', '/v1/api-keys', { token: key, body: '{"name":' }),
      400,
      'validation-error',
    );
    expect(p.errors).toEqual({ body: 'is not valid JSON' });
  });

  it('a body that is not JSON → 415', async () => {
    const res = await t.call('POST', '/v1/api-keys', {
      token: key,
      body: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    await expectProblem(res, 415, 'unsupported-media-type');
    const plain = await t.call('POST', '/v1/api-keys', {
      token: key,
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    await expectProblem(plain, 415, 'unsupported-media-type');
  });

  it('a body over 1 MiB → 413', async () => {
    const body = JSON.stringify({ name: 'x', description: 'y'.repeat(1024 * 1024) });
    await expectProblem(await t.call('POST', '/v1/api-keys', { token: key, body }), 413, 'payload-too-large');
  });

  it('schema failures name every offending field with a dot path', async () => {
    const res = await t.call('POST', '/v1/api-keys', {
      token: key,
      body: { name: 5, key_type: 'root', allowed_domains: ['ok.com', 7] },
    });
    const p = await expectProblem(res, 400, 'validation-error');
    expect(Object.keys(p.errors).sort()).toEqual(['allowed_domains.1', 'key_type', 'name']);
    const q = await expectProblem(
      await t.call('GET', '/v1/api-keys?limit=1000', { token: key }),
      400,
      'validation-error',
    );
    expect(q.errors).toHaveProperty('limit');
  });

  it('serves a human page for every error type URI', async () => {
    const res = await fetch(`${t.url}/errors/validation-error`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const text = await res.text();
    expect(text).toContain('Validation Error');
    // Backticks in the descriptions are shown as code, not literally.
    expect(text).toContain('<code>errors</code>');
    expect(text).not.toContain('`');
    await expectProblem(await fetch(`${t.url}/errors/no-such-thing`), 404, 'not-found');
  });

  it('lists every error type at /errors, each linking to its page', async () => {
    const res = await fetch(`${t.url}/errors`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const text = await res.text();
    for (const slug of ['validation-error', 'unauthorized', 'not-found', 'gone', 'rate-limit-exceeded']) {
      expect(text).toContain(`href="/errors/${slug}"`);
    }
    expect(text).not.toContain('`');
  });
});

describe('operations', () => {
  it('healthz and readyz answer', async () => {
    expect(await (await fetch(`${t.url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${t.url}/readyz`)).json()).toEqual({ status: 'ready' });
  });

  it('metrics count requests by route and status and show the pool', async () => {
    await t.call('GET', '/v1/me', { token: key });
    const text = await (await fetch(`${t.url}/metrics`)).text();
    expect(text).toMatch(/kairos_http_requests_total\{method="GET",route="\/v1\/me",status="200"\} \d+/);
    expect(text).toContain('kairos_http_request_duration_seconds_bucket');
    expect(text).toMatch(/kairos_db_pool_total \d+/);
  });

  it('metrics write each request series as a cumulative histogram whose count is the counter', async () => {
    for (let i = 0; i < 3; i++) await t.call('GET', '/v1/me', { token: key });
    const text = await (await fetch(`${t.url}/metrics`)).text();
    const series = 'method="GET",route="/v1/me",status="200"';
    const value = (line: RegExp) => Number(line.exec(text)?.[1]);
    const count = value(new RegExp(`^kairos_http_requests_total\\{${series}\\} (\\d+)$`, 'm'));
    expect(count).toBeGreaterThanOrEqual(3);
    const buckets = [
      ...text.matchAll(/^kairos_http_request_duration_seconds_bucket\{le="([^"]+)",(.*)\} (\d+)$/gm),
    ]
      .filter((m) => m[2] === series)
      .map((m) => ({ le: m[1], n: Number(m[3]) }));
    expect(buckets.map((b) => b.le)).toEqual([
      ...['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10'],
      '+Inf',
    ]);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.n).toBeGreaterThanOrEqual(buckets[i - 1]!.n);
    expect(buckets.at(-1)!.n).toBe(count);
    expect(value(new RegExp(`^kairos_http_request_duration_seconds_count\\{${series}\\} (\\d+)$`, 'm'))).toBe(
      count,
    );
    expect(
      value(new RegExp(`^kairos_http_request_duration_seconds_sum\\{${series}\\} ([\\d.e-]+)$`, 'm')),
    ).toBeGreaterThan(0);
    for (const type of [
      'kairos_http_requests_total counter',
      'kairos_http_request_duration_seconds histogram',
    ]) {
      expect(text.split(`# TYPE ${type}`).length).toBe(2);
    }
  });

  it('publishes an OpenAPI 3.1 document where every route has schemas and problem responses', async () => {
    const doc = await getJson(`${t.url}/v1/openapi.json`);
    expect(doc.openapi).toBe('3.1.0');
    const ops = Object.entries(
      doc.paths as Record<
        string,
        Record<string, { responses: Record<string, unknown>; security?: unknown[] }>
      >,
    ).flatMap(([path, methods]) => Object.entries(methods).map(([m, op]) => ({ path, m, op })));
    expect(ops.length).toBeGreaterThanOrEqual(8);
    for (const { path, m, op } of ops) {
      // An operation that takes no credential refuses none (src/platform/openapi.test.ts checks `security`).
      const anonymous = op.security !== undefined && op.security.length === 0;
      expect(Object.keys(op.responses), `${m} ${path}`).toEqual(
        expect.arrayContaining(anonymous ? ['400', '429', '500'] : ['400', '401', '429', '500']),
      );
      expect(
        Object.keys(op.responses).some((c) => c.startsWith('2')),
        `${m} ${path}`,
      ).toBe(true);
    }
    expect(
      doc.paths['/v1/api-keys'].post.parameters?.some((p: { name: string }) => p.name === 'idempotency-key'),
    ).toBe(true);
  });

  // docs/design.md#openapi: what every route must give the document (the lint checks it too).
  it('gives every operation an operationId, a known tag, described answers and examples', async () => {
    const doc = await getJson(`${t.url}/v1/openapi.json`);
    const tags = new Set((doc.tags as { name: string }[]).map((tag) => tag.name));
    const grouped = new Set((doc['x-tagGroups'] as { tags: string[] }[]).flatMap((g) => g.tags));
    const ids = new Set<string>();
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(methods)) {
        const at = `${method.toUpperCase()} ${path}`;
        if (typeof op.operationId !== 'string' || !/^[a-z][A-Za-z0-9]+$/.test(op.operationId))
          missing.push(`${at}: operationId (camelCase)`);
        else if (ids.has(op.operationId)) missing.push(`${at}: operationId ${op.operationId} is not unique`);
        ids.add(op.operationId);
        if (!op.summary) missing.push(`${at}: summary`);
        if (!op.tags?.length || !op.tags.every((tag: string) => tags.has(tag) && grouped.has(tag)))
          missing.push(`${at}: a tag listed in tags and x-tagGroups (platform/openapi.ts)`);
        for (const [status, res] of Object.entries(op.responses as Record<string, Json>)) {
          if (!res.description || res.description === 'Default Response')
            missing.push(`${at} ${status}: description`);
          if (/^2/.test(status)) {
            for (const [type, media] of Object.entries((res.content ?? {}) as Record<string, Json>))
              if (media.example === undefined) missing.push(`${at} ${status} ${type}: example`);
          }
        }
        if (!Object.keys(op.responses).some((s) => /^2/.test(s))) missing.push(`${at}: a 2xx response`);
        for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Json>))
          if (media.example === undefined) missing.push(`${at} request ${type}: example`);
        for (const p of (op.parameters ?? []) as Json[])
          if (p.in === 'query' && p.required && p.schema?.default !== undefined)
            missing.push(`${at}: query parameter ${p.name} has a default, so it is not required`);
      }
    }
    expect(missing).toEqual([]);
    expect(ids.has('createBooking') && ids.has('listHosts') && ids.has('cancelBooking')).toBe(true);
    const slots = doc.paths['/v1/availability/slots'].get.parameters as Json[];
    expect(slots.find((p) => p.name === 'group_by_day')).toMatchObject({ required: false });
    expect(slots.find((p) => p.name === 'from')).toMatchObject({ required: true });
  });

  it('serves the API reference at /docs from the installed renderer, under a nonce-based CSP', async () => {
    const page = await fetch(`${t.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('<title>Kairos API reference</title>');
    expect(html).toContain('/v1/openapi.json');
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/); // nothing from elsewhere (no CDN)
    const csp = page.headers.get('content-security-policy') ?? '';
    const nonce = /script-src 'self' 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    // Every inline script carries this response's nonce; the renderer comes from this server.
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1] ?? '');
    for (const attrs of scripts)
      expect(attrs.includes(`nonce="${nonce}"`) || /src="\/docs\//.test(attrs)).toBe(true);
    const src = /<script src="([^"]+)"/.exec(html)?.[1];
    const bundle = await fetch(`${t.url}${src}`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    // Another request, another nonce.
    const again = (await fetch(`${t.url}/docs`)).headers.get('content-security-policy');
    expect(again).not.toBe(csp);
  });

  it('sends X-Request-Id and the rate-limit headers on every response, errors included', async () => {
    for (const res of [
      await t.call('GET', '/v1/me', { token: key }),
      await t.call('GET', '/v1/nope', { token: key }),
      await t.call('GET', '/v1/me'),
    ]) {
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
      expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });
});

describe('the hourly limit', () => {
  it('answers 429 with Retry-After and says how the operator raises it', async () => {
    await clearOfHourBoundary();
    const acc = await t.account({ plan: 'free' });
    let last: Response | undefined;
    for (let i = 0; i < 101; i++)
      last = await fetch(`${t.url}/v1/me`, { headers: { authorization: `Bearer ${acc.key}` } });
    expect(last!.status).toBe(429);
    expect(last!.headers.get('retry-after')).toBeTruthy();
    const problem = (await last!.json()) as { type: string; detail: string };
    expect(problem.type).toMatch(/\/errors\/rate-limit-exceeded$/);
    expect(problem.detail).toContain('kairos accounts update');
  });
});
