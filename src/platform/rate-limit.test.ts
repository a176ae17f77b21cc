/**
 * The leased rate limiter (docs/design.md, "Rate limits across processes"): limiters sharing the store
 * (processes) spend leases from memory, and the limit still holds exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { FakeClock } from './clock.js';
import { RateLimiter } from './rate-limit.js';

const clock = new FakeClock('2026-06-01T12:00:00.000Z');
let t: TestApp;
let n = 0;
const subject = () => `test-subject-${++n}`;

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => {
  await t.close();
});

/** What the gate does: the decision from memory, else the one a lease brings. */
async function takeLikeTheGate(limiter: RateLimiter, key: string, limit: number) {
  return limiter.takeCached(key, limit) ?? (await limiter.take(key, limit));
}

describe('RateLimiter', () => {
  it('grants exactly the limit across two limiters on one store, each spending leases of up to 100', async () => {
    const limit = 3000;
    const key = subject();
    const limiters = [new RateLimiter(t.ctx.db, clock), new RateLimiter(t.ctx.db, clock)];
    // Each holds a lease before they race, so that neither can spend the whole limit before the
    // other's first lease arrives (on a loaded machine the second's first statement can be that late).
    const allowed = [0, 0];
    for (const [i, limiter] of limiters.entries()) {
      expect((await takeLikeTheGate(limiter, key, limit)).allowed).toBe(true);
      allowed[i]!++;
    }
    await Promise.all(
      limiters.map(async (limiter, i) => {
        for (;;) {
          const decision = await takeLikeTheGate(limiter, key, limit);
          if (!decision.allowed) return;
          allowed[i]!++;
          if (allowed[i]! % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
        }
      }),
    );
    expect(allowed[0]! + allowed[1]!).toBe(limit);
    expect(allowed[0]).toBeGreaterThan(0);
    expect(allowed[1]).toBeGreaterThan(0);
    // Each refuses from memory afterwards, the window spent.
    for (const limiter of limiters) expect(limiter.takeCached(key, limit)).toMatchObject({ allowed: false });
  });

  it('leases one token at a time under a limit of 20: exactly 20 allowed, the 21st refused, 20 consumed', async () => {
    const limiter = new RateLimiter(t.ctx.db, clock);
    const key = subject();
    for (let i = 0; i < 20; i++) expect((await takeLikeTheGate(limiter, key, 20)).allowed).toBe(true);
    expect((await takeLikeTheGate(limiter, key, 20)).allowed).toBe(false);
    const row = await t.ctx.db
      .selectFrom('rate_limit_windows')
      .select(['consumed'])
      .where('subject', '=', key)
      .executeTakeFirstOrThrow();
    expect(row.consumed).toBe(20);
  });
});
