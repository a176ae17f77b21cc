/**
 * A change of an account's plan or hourly limit (`kairos accounts update`) travels like a revocation
 * (docs/design.md#credentials): the process that made it drops the account's cached
 * credentials before it answers, and every other process when the NOTIFY arrives (milliseconds), so
 * the next request anywhere is metered with the new limit — not up to a minute later.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { waitUntil } from '../../../test/helpers/promises.js';

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await startTestApp();
  // A second server on the same database: its own credential cache and its own LISTEN connection.
  b = await startTestApp({ database: a.database, masterKey: a.masterKey });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

async function limitSeenBy(app: TestApp, token: string): Promise<string | null> {
  const res = await app.call('GET', '/v1/me', { token });
  expect(res.status).toBe(200);
  return res.headers.get('x-ratelimit-limit');
}

/**
 * The limit `app` answers with, asked until it is `want` or `withinMs` has passed: a bound of real
 * time, well under the cache's own minute, so only the NOTIFY can make it. The last answer is
 * returned either way, for the caller's assertion to show.
 */
async function settlesOn(
  app: TestApp,
  token: string,
  want: string,
  withinMs: number,
): Promise<string | null> {
  let seen: string | null = null;
  const settled = async () => {
    seen = await limitSeenBy(app, token);
    return seen === want;
  };
  await waitUntil(`the limit ${want}`, settled, withinMs, 20).catch(() => undefined);
  return seen;
}

describe('a plan or limit change', () => {
  it('holds for the next request in the process that made it and within moments in another, for keys and sessions', async () => {
    const acc = await a.account({ plan: 'free' });
    const email = `plan-${Date.now()}@example.com`;
    await a.ctx.modules.accounts.createUser({ accountId: acc.id, email, password: 'correct horse battery' });
    const signIn = await a.call('POST', '/v1/sessions', {
      body: { email, password: 'correct horse battery' },
    });
    expect(signIn.status).toBe(201);
    const session = (await signIn.json()).session.token as string;

    // Both servers have the credentials cached with the free plan's limit.
    for (const app of [a, b]) {
      expect(await limitSeenBy(app, acc.key)).toBe('100');
      expect(await limitSeenBy(app, session)).toBe('100');
    }

    await a.ctx.modules.accounts.updateAccount(acc.id, { plan: 'premium' });
    expect(await limitSeenBy(a, acc.key)).toBe('1000');
    expect(await limitSeenBy(a, session)).toBe('1000');
    expect(await settlesOn(b, acc.key, '1000', 2_000)).toBe('1000');
    expect(await settlesOn(b, session, '1000', 2_000)).toBe('1000');

    // Changed from the other server: an enterprise plan with the account's own limit.
    await b.ctx.modules.accounts.updateAccount(acc.id, { plan: 'enterprise', rateLimitPerHour: 5_000 });
    expect(await limitSeenBy(b, acc.key)).toBe('5000');
    expect(await settlesOn(a, acc.key, '5000', 2_000)).toBe('5000');
    expect(await settlesOn(a, session, '5000', 2_000)).toBe('5000');
  });

  it('leaves other accounts’ cached credentials alone', async () => {
    const changed = await a.account({ plan: 'free' });
    const other = await a.account({ plan: 'free' });
    expect(await limitSeenBy(b, changed.key)).toBe('100');
    expect(await limitSeenBy(b, other.key)).toBe('100');
    await a.ctx.modules.accounts.updateAccount(changed.id, { plan: 'premium' });
    expect(await settlesOn(b, changed.key, '1000', 2_000)).toBe('1000');
    expect(await limitSeenBy(b, other.key)).toBe('100');
  });
});
