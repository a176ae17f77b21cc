/**
 * The console's session over plain HTTP: an httpOnly SameSite=Strict cookie scoped to /console; a
 * cross-site form post, a request from another port and one without the CSRF proof are refused;
 * sign-out ends the session for the API too; console requests do not count against the API limit.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/app.js';
import { consoleApp } from '../helpers/console-app.js';

const { t } = consoleApp({ browser: false });
const PASSWORD = 'correct horse battery staple';

function cookieFrom(res: Response): string {
  const header = res.headers.get('set-cookie') ?? '';
  const m = /kairos_console=([^;]*)/.exec(header);
  if (!m?.[1]) throw new Error(`no console cookie in ${header}`);
  return m[1];
}

async function csrfOf(cookie: string): Promise<string> {
  const res = await fetch(`${t.url}/console/keys`, { headers: { cookie: `kairos_console=${cookie}` } });
  expect(res.status).toBe(200);
  const m = /<script type="application\/json" id="console-data">(.*?)<\/script>/s.exec(await res.text());
  return (JSON.parse(m?.[1] ?? '{}') as Json).csrf;
}

describe('console: sessions and CSRF', () => {
  let email: string;
  beforeAll(async () => {
    const acc = await t.account();
    email = `csrf-${Date.now()}@example.com`;
    await t.ctx.modules.accounts.createUser({ accountId: acc.id, email, password: PASSWORD });
  });

  async function signIn(): Promise<string> {
    const res = await fetch(`${t.url}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: t.url },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(res.status).toBe(201);
    const header = res.headers.get('set-cookie') ?? '';
    expect(header).toMatch(/HttpOnly/);
    expect(header).toMatch(/SameSite=Strict/);
    expect(header).toMatch(/Path=\/console(;|$)/);
    return cookieFrom(res);
  }

  it('refuses a cross-site form post, a request from another port and one without the CSRF proof', async () => {
    const cookie = await signIn();
    const csrf = await csrfOf(cookie);
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const keys = `${t.url}/console/api/v1/api-keys`;
    const count = async () =>
      ((await (await fetch(keys, { headers: { cookie: `kairos_console=${cookie}` } })).json()) as Json)
        .api_keys.length;
    const before = await count();

    const form = await fetch(keys, {
      method: 'POST',
      headers: {
        cookie: `kairos_console=${cookie}`,
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'http://evil.example',
        'sec-fetch-site': 'cross-site',
      },
      body: 'name=evil',
    });
    expect(form.status).toBe(403);
    expect(form.headers.get('content-type')).toMatch(/application\/problem\+json/);

    const otherPort = new URL(t.url);
    otherPort.port = String(Number(otherPort.port) + 1);
    const samesite = await fetch(keys, {
      method: 'POST',
      headers: {
        cookie: `kairos_console=${cookie}`,
        'content-type': 'application/json',
        origin: otherPort.origin,
        'sec-fetch-site': 'same-site',
        'x-csrf-token': csrf,
      },
      body: JSON.stringify({ name: 'other port' }),
    });
    expect(samesite.status).toBe(403);

    const noProof = await fetch(keys, {
      method: 'POST',
      headers: { cookie: `kairos_console=${cookie}`, 'content-type': 'application/json', origin: t.url },
      body: JSON.stringify({ name: 'no proof' }),
    });
    expect(noProof.status).toBe(403);
    const wrongProof = await fetch(keys, {
      method: 'POST',
      headers: {
        cookie: `kairos_console=${cookie}`,
        'content-type': 'application/json',
        origin: t.url,
        // One character changed (a proof's last character is 'A' one time in 16: then 'B').
        'x-csrf-token': `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`,
      },
      body: JSON.stringify({ name: 'wrong proof' }),
    });
    expect(wrongProof.status).toBe(403);
    expect(await count()).toBe(before);

    // The same request with the proof, from the console's own origin, goes through.
    const good = await fetch(keys, {
      method: 'POST',
      headers: {
        cookie: `kairos_console=${cookie}`,
        'content-type': 'application/json',
        origin: t.url,
        'sec-fetch-site': 'same-origin',
        'x-csrf-token': csrf,
      },
      body: JSON.stringify({ name: 'with proof' }),
    });
    expect(good.status).toBe(201);
    expect(await count()).toBe(before + 1);
  });

  it('ends the session everywhere on sign-out', async () => {
    const cookie = await signIn();
    const csrf = await csrfOf(cookie);
    const me = await t.call('GET', '/v1/me', { token: cookie });
    expect(me.status).toBe(200);
    const noProof = await fetch(`${t.url}/console/session`, {
      method: 'DELETE',
      headers: { cookie: `kairos_console=${cookie}`, origin: t.url },
    });
    expect(noProof.status).toBe(403);
    const out = await fetch(`${t.url}/console/session`, {
      method: 'DELETE',
      headers: { cookie: `kairos_console=${cookie}`, origin: t.url, 'x-csrf-token': csrf },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await t.call('GET', '/v1/me', { token: cookie })).status).toBe(401);
    const proxied = await fetch(`${t.url}/console/api/v1/api-keys`, {
      headers: { cookie: `kairos_console=${cookie}` },
    });
    expect(proxied.status).toBe(401);
  });

  it('does not count console requests against the account’s hourly API limit', async () => {
    const acc = await t.account({ plan: 'free' });
    const freeEmail = `free-${Date.now()}@example.com`;
    await t.ctx.modules.accounts.createUser({ accountId: acc.id, email: freeEmail, password: PASSWORD });
    const res = await fetch(`${t.url}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: t.url },
      body: JSON.stringify({ email: freeEmail, password: PASSWORD }),
    });
    const cookie = cookieFrom(res);
    for (let i = 0; i < 110; i++) {
      const r = await fetch(`${t.url}/console/api/v1/api-keys?limit=1`, {
        headers: { cookie: `kairos_console=${cookie}` },
      });
      expect(r.status, `request ${i + 1}`).toBe(200);
    }
    const direct = await t.call('GET', '/v1/me', { token: cookie });
    expect(direct.status).toBe(200);
    expect(Number(direct.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(90);
  }, 30_000);
});
