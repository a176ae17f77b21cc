import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { FakeClock } from './clock.js';
import { RateLimiter } from './rate-limit.js';

const clock = new FakeClock('2026-06-01T12:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => {
  await t.close();
});

/** Tokens granted so far in the subject's current window, as the store has them. */
async function consumed(subject: string): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('rate_limit_windows')
    .select('consumed')
    .where('subject', '=', subject)
    .executeTakeFirstOrThrow();
  return row.consumed;
}

/** Takes `n` tokens one after the other; every one must be allowed. */
async function take(limiter: RateLimiter, subject: string, limit: number, n: number): Promise<void> {
  for (let i = 0; i < n; i++) expect((await limiter.take(subject, limit)).allowed).toBe(true);
}

describe('rate limit leases', () => {
  it('double while each lease is spent within a second, up to 1,600 tokens', async () => {
    const limiter = new RateLimiter(t.ctx.db, clock);
    await take(limiter, 'busy', 1_000_000, 1);
    expect(await consumed('busy')).toBe(100);
    // Each lease is spent at once (the clock stands still): 200, 400, 800, 1,600, then 1,600 again.
    const after: number[] = [];
    for (const n of [100, 200, 400, 800, 1600, 1600]) {
      await take(limiter, 'busy', 1_000_000, n);
      after.push(await consumed('busy'));
    }
    expect(after).toEqual([300, 700, 1500, 3100, 4700, 6300]);
  });

  it('stay at 100 tokens for a subject that spends a lease in more than a second', async () => {
    const limiter = new RateLimiter(t.ctx.db, clock);
    await take(limiter, 'steady', 1_000_000, 1);
    for (let lease = 0; lease < 3; lease++) {
      clock.advance(1500);
      await take(limiter, 'steady', 1_000_000, 100);
    }
    expect(await consumed('steady')).toBe(400);
  });

  it('never grant past the limit however large they have grown', async () => {
    const limiter = new RateLimiter(t.ctx.db, clock);
    const limit = 20_000;
    // Spent at once: the leases grow to 1,600, then shrink to 1/16 of what is left, then to one.
    await take(limiter, 'capped', limit, limit);
    expect(await consumed('capped')).toBe(limit);
    expect((await limiter.take('capped', limit)).allowed).toBe(false);
    // A second process sees the window spent too.
    expect((await new RateLimiter(t.ctx.db, clock).take('capped', limit)).allowed).toBe(false);
  });
});
