/**
 * Methods a path does not take, whatever they are (docs/api.md#errors): 405 problem+json with `Allow`,
 * decided before any body is read, so that Fastify's body rules for a method (QUERY must carry a
 * Content-Type) or an unparseable body never turn it into a 400 or 415; and the rate-limit headers on
 * every /v1 answer, the Stripe webhook's included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { type RawAnswer, rawRequest } from '../../test/helpers/raw.js';

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await startTestApp();
  key = (await t.account()).key;
});
afterAll(() => t.close());

function expectRateLimitHeaders(res: RawAnswer) {
  expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
  expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  expect(res.headers['x-ratelimit-reset']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
}

function expectProblem(res: RawAnswer, status: number, slug: string) {
  expect(res.status, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const p = JSON.parse(res.body);
  expect(p).toMatchObject({ type: `${t.url}/errors/${slug}`, status });
  expect(p.request_id).toMatch(/^req_/);
  expect(p.request_id).toBe(res.headers['x-request-id']);
  return p;
}

describe('a method the path does not take', () => {
  const auth = () => ({ authorization: `Bearer ${key}` });

  it('QUERY, PROPFIND and SEARCH are 405 with Allow (not a 400 about Content-Type), with or without a body', async () => {
    const cases: { method: string; headers?: Record<string, string>; body?: string }[] = [
      { method: 'QUERY' },
      { method: 'QUERY', headers: { 'content-type': 'application/json' }, body: '{}' },
      { method: 'QUERY', headers: { 'content-type': 'text/plain' }, body: 'select *' },
      { method: 'QUERY', body: 'no content type' },
      { method: 'PROPFIND' },
      { method: 'PROPFIND', headers: { 'content-type': 'application/xml' }, body: '<propfind/>' },
      { method: 'SEARCH', body: 'x' },
    ];
    for (const c of cases) {
      const res = await rawRequest(t.url, c.method, '/v1/api-keys', {
        headers: { ...auth(), ...(c.headers ?? {}) },
        ...(c.body !== undefined ? { body: c.body } : {}),
      });
      const p = expectProblem(res, 405, 'method-not-allowed');
      expect(p.detail).toContain(c.method);
      expect(res.headers.allow, `${c.method} ${JSON.stringify(c.headers)}`).toBe('GET, POST');
      expectRateLimitHeaders(res);
    }
    const booking = await rawRequest(t.url, 'QUERY', '/v1/bookings/booking_01jxkb7c8d9e0f1g2h3j4k5m6n', {
      headers: auth(),
    });
    expectProblem(booking, 405, 'method-not-allowed');
    expect(booking.headers.allow).toBe('GET, PATCH, DELETE');
  });

  it('a path that is a route of its own takes only its own methods, not those of a sibling with a parameter', async () => {
    // PATCH /v1/calendars/{id} and DELETE /v1/network/{connected_id} would match these paths.
    const cases: [string, string, string][] = [
      ['PATCH', '/v1/calendars/ics', 'POST'],
      ['DELETE', '/v1/calendars/ics', 'POST'],
      ['DELETE', '/v1/network/invitations', 'GET, POST'],
      ['OPTIONS', '/v1/network/invitations', 'GET, POST'],
    ];
    for (const [method, path, allow] of cases) {
      const body =
        method === 'PATCH'
          ? { headers: { ...auth(), 'content-type': 'application/json' }, body: '{}' }
          : { headers: auth() };
      const res = await rawRequest(t.url, method, path, body);
      expectProblem(res, 405, 'method-not-allowed');
      expect(res.headers.allow, `${method} ${path}`).toBe(allow);
    }
    // The sibling with the parameter still answers its own paths.
    const calendar = await rawRequest(t.url, 'PATCH', '/v1/calendars/cal_01jxkb7c8d9e0f1g2h3j4k5m6n', {
      headers: { ...auth(), 'content-type': 'application/json' },
      body: '{"selected":true}',
    });
    expect(calendar.status, calendar.body).toBe(404);
  });

  it('is 404 on an unknown path and 401 without a credential, as other methods are', async () => {
    expectProblem(
      await rawRequest(t.url, 'QUERY', '/v1/nothing-here', { headers: auth() }),
      404,
      'not-found',
    );
    const anonymous = await rawRequest(t.url, 'QUERY', '/v1/api-keys');
    expectProblem(anonymous, 401, 'unauthorized');
    expectRateLimitHeaders(anonymous);
  });
});

describe('rate-limit headers', () => {
  it('are on the Stripe webhook’s answer too, here its 404 without Stripe', async () => {
    const res = await rawRequest(t.url, 'POST', '/v1/payments/stripe/webhook', {
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: '{"id":"evt_1"}',
    });
    expect(expectProblem(res, 404, 'not-found').code).toBe('payments_not_configured');
    expectRateLimitHeaders(res);
  });
});
