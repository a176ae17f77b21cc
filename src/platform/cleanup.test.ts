import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { purgeInBatches } from '../db/purge.js';
import { FakeClock } from './clock.js';
import { HOUR } from '../lib/time.js';

const clock = new FakeClock('2026-06-01T12:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => {
  await t.close();
});

async function windows(starts: number[]) {
  await t.ctx.db
    .insertInto('rate_limit_windows')
    .values(
      starts.map((s, i) => ({
        subject: `subject-${i}`,
        window_start: new Date(s),
        consumed: 1,
        last_grant: 0,
      })),
    )
    .execute();
}

async function windowStarts(): Promise<number[]> {
  const rows = await t.ctx.db
    .selectFrom('rate_limit_windows')
    .select('window_start')
    .orderBy('window_start')
    .execute();
  return rows.map((r) => new Date(r.window_start).getTime());
}

describe('batched purges', () => {
  it('deletes every matching row a batch per statement, leaves the others, and stops after maxBatches', async () => {
    await t.ctx.db.deleteFrom('rate_limit_windows').execute();
    const old = clock.nowMs() - 10 * HOUR;
    await windows([old, old, old, old, old, clock.nowMs()]);
    const match = sql<boolean>`window_start < ${new Date(clock.nowMs() - HOUR)}`;

    expect(await purgeInBatches(t.ctx.db, 'rate_limit_windows', match, { batch: 2, maxBatches: 2 })).toBe(4);
    expect(await windowStarts()).toEqual([old, clock.nowMs()]);
    expect(await purgeInBatches(t.ctx.db, 'rate_limit_windows', match, { batch: 2 })).toBe(1);
    expect(await windowStarts()).toEqual([clock.nowMs()]);
  });

  it('rate-limit-cleanup deletes windows that ended over an hour ago and keeps the current and last ones', async () => {
    await t.ctx.db.deleteFrom('rate_limit_windows').execute();
    const hour = clock.nowMs() - (clock.nowMs() % HOUR);
    await windows([hour - 3 * HOUR, hour - 2 * HOUR - 1, hour - HOUR, hour]);
    await t.ctx.jobs.drain(); // the rate-limit-cleanup schedule runs
    expect(await windowStarts()).toEqual([hour - HOUR, hour]);
  });
});
