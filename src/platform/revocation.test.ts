import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';

/**
 * Sign-out and key revocation are immediate in the process that answered them: the very next request
 * with the credential is refused, every time (other processes follow on the NOTIFY; see
 * test/e2e/two-processes.test.ts). Loops run a few at a time so the 1,000 sign-ins' scrypt work fits.
 */
let t: TestApp;
let secret: string;
const email = 'loop@example.com';
const password = 'correct horse battery';

beforeAll(async () => {
  // Sign-in is anonymous: raise the per-address limit so 1,000 sign-ins from one address are admitted.
  t = await startTestApp({ env: { KAIROS_ANON_RATE_LIMIT_PER_HOUR: '100000' } });
  const acc = await t.account();
  secret = acc.key;
  await t.ctx.modules.accounts.createUser({ accountId: acc.id, email, password });
});
afterAll(() => t.close());

/** Runs `loop(i)` for i < n with at most `width` loops under way. */
async function inParallel(n: number, width: number, loop: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await loop(next++);
    }),
  );
}

describe('revocation is immediate in the revoking process', () => {
  it('1,000 sign-in → use → sign-out → use loops: the request after sign-out is refused every time', async () => {
    let acceptedAfterSignOut = 0;
    await inParallel(1000, 4, async () => {
      const signIn = await t.call('POST', '/v1/sessions', { body: { email, password } });
      expect(signIn.status).toBe(201);
      const token = (await signIn.json()).session.token as string;
      expect((await t.call('GET', '/v1/me', { token })).status).toBe(200);
      expect((await t.call('DELETE', '/v1/sessions/current', { token })).status).toBe(204);
      const after = await t.call('GET', '/v1/me', { token });
      if (after.status !== 401) acceptedAfterSignOut++;
    });
    expect(acceptedAfterSignOut).toBe(0);
  }, 180_000);

  it('300 create → use → revoke → use loops of API keys: the request after revocation is refused every time', async () => {
    let acceptedAfterRevoke = 0;
    await inParallel(300, 4, async (i) => {
      const created = await t.call('POST', '/v1/api-keys', { token: secret, body: { name: `loop ${i}` } });
      expect(created.status).toBe(201);
      const { id, key } = (await created.json()).api_key as { id: string; key: string };
      expect((await t.call('GET', '/v1/me', { token: key })).status).toBe(200);
      expect((await t.call('DELETE', `/v1/api-keys/${id}`, { token: secret })).status).toBe(200);
      const after = await t.call('GET', '/v1/me', { token: key });
      if (after.status !== 401) acceptedAfterRevoke++;
    });
    expect(acceptedAfterRevoke).toBe(0);
  }, 120_000);
});
