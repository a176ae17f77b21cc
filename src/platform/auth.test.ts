import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';

let t: TestApp;
let secret: string;
let locked: string;
beforeAll(async () => {
  t = await startTestApp();
  const acc = await t.account();
  secret = acc.key;
  const mk = async (body: object) =>
    (await (await t.call('POST', '/v1/api-keys', { token: secret, body })).json()).api_key.key as string;
  locked = await mk({ name: 'locked widget', key_type: 'publishable', allowed_domains: ['example.com'] });
});
afterAll(() => t.close());

describe('publishable keys (docs/api.md#credentials)', () => {
  it('rejects origins outside allowed_domains and admits the domain and its subdomains, with CORS', async () => {
    const path = '/v1/public/links/intro-call';
    const evil = await t.call('GET', path, { token: locked, headers: { origin: 'https://evil.com' } });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    const lookalike = await t.call('GET', path, {
      token: locked,
      headers: { origin: 'https://notexample.com' },
    });
    expect(lookalike.status).toBe(403);
    for (const origin of ['https://example.com', 'https://book.example.com']) {
      const ok = await t.call('GET', path, { token: locked, headers: { origin } });
      expect(ok.status).not.toBe(403);
      expect(ok.headers.get('access-control-allow-origin')).toBe(origin);
    }
    const preflight = await t.call('OPTIONS', path, {
      headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Idempotency-Key');
  });

  it('sends no CORS headers outside the public surface', async () => {
    const res = await t.call('GET', '/v1/me', { token: secret, headers: { origin: 'https://example.com' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('authentication (docs/api.md#credentials)', () => {
  const bad: [string, Record<string, string>][] = [
    ['not bearer', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['empty bearer', { authorization: 'Bearer ' }],
    ['unknown secret key', { authorization: `Bearer svc_sk_live_${'A'.repeat(43)}` }],
    ['unknown publishable key', { authorization: `Bearer svc_pk_live_${'A'.repeat(43)}` }],
    ['random token', { authorization: 'Bearer hello' }],
    ['garbage JWT', { authorization: 'Bearer aaa.bbb.ccc' }],
  ];
  it.each(bad)('%s credential → 401 "Missing or invalid API key"', async (_name, headers) => {
    const res = await t.call('GET', '/v1/me', { headers });
    expect(res.status).toBe(401);
    const p = await res.json();
    expect(p).toMatchObject({
      type: `${t.url}/errors/unauthorized`,
      title: 'Unauthorized',
      status: 401,
      detail: 'Missing or invalid API key',
    });
    expect(p.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('rejects a JWT signed with another key and an expired session token', async () => {
    const forged = await new SignJWT({ sid: '00000000-0000-0000-0000-000000000000', acc: 'x' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setIssuer('kairos')
      .setExpirationTime('1h')
      .sign(Buffer.alloc(32, 7));
    expect((await t.call('GET', '/v1/me', { token: forged })).status).toBe(401);
    const expired = await new SignJWT({ sid: '00000000-0000-0000-0000-000000000000', acc: 'x' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setIssuer('kairos')
      .setExpirationTime(Math.floor(Date.now() / 1000) - 10)
      .sign(t.ctx.keys.jwtKey);
    expect((await t.call('GET', '/v1/me', { token: expired })).status).toBe(401);
  });

  it('gives anonymous visitors a per-IP rate limit on the public surface', async () => {
    const res = await t.call('GET', '/v1/public/links/x');
    expect(res.headers.get('x-ratelimit-limit')).toBe(String(t.ctx.config.anonymousRateLimitPerHour));
  });
});
