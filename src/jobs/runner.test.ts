/**
 * Jobs a handler enqueues already claimed by its own process (JobRunner.holdSlot, startClaimed): the
 * slots they take, who runs them, and what happens to them when that process stops or dies first.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.js';
import { createDb, createPool, type Db } from '../db/store.js';
import { FakeClock } from '../platform/clock.js';
import { type Job, JobRunner } from './runner.js';
import { waitUntil } from '../../test/helpers/promises.js';

const quiet = { warn: () => {}, error: () => {} };
const QUEUE = 'held-test';

let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDb(createPool(database.url, 4));
});
afterAll(async () => {
  await db.destroy();
  await database.drop();
});

/** Inserts jobs of QUEUE claimed as holdSlot's answer says (or unclaimed with `claim` null); their ids. */
async function insertJobs(
  payloads: object[],
  claim: { workerId: string; lockedUntil: Date } | null,
  now: Date,
): Promise<Job[]> {
  const rows = await db
    .insertInto('jobs')
    .values(
      payloads.map((p) => ({
        queue: QUEUE,
        payload: JSON.stringify(p),
        run_at: now,
        attempts: claim ? 1 : 0,
        created_at: now,
        locked_by: claim?.workerId ?? null,
        locked_until: claim?.lockedUntil ?? null,
      })),
    )
    .returning(['id', 'payload'])
    .execute();
  return rows.map((r) => ({ id: String(r.id), queue: QUEUE, payload: r.payload, attempts: 1 }));
}

async function jobsLeft(): Promise<{ locked_by: string | null; attempts: number }[]> {
  return db.selectFrom('jobs').select(['locked_by', 'attempts']).where('queue', '=', QUEUE).execute();
}

/** A runner of QUEUE (3 at once, 2 per `p`) recording which payloads it ran. */
function runnerOf(clock: FakeClock, ran: unknown[], leaseMs = 10_000): JobRunner {
  const runner = new JobRunner(db, clock, quiet);
  runner.register(
    QUEUE,
    async (job) => {
      ran.push(job.payload);
    },
    { concurrency: 3, leaseMs, partition: { key: 'p', concurrency: 2 } },
  );
  return runner;
}

describe('jobs enqueued already claimed by their own process', () => {
  it('holds at most the queue’s and each partition’s free slots; a released slot is free again', async () => {
    const clock = new FakeClock('2026-06-01T12:00:00Z');
    const runner = runnerOf(clock, []);
    await runner.start(null);
    try {
      expect(runner.holdSlot(QUEUE, { p: 'a' })).toEqual({
        workerId: expect.any(String),
        lockedUntil: new Date('2026-06-01T12:00:10Z'),
      });
      expect(runner.holdSlot(QUEUE, { p: 'a' })).not.toBeNull();
      // Partition a is full (2); the queue has one slot left, which b takes.
      expect(runner.holdSlot(QUEUE, { p: 'a' })).toBeNull();
      expect(runner.holdSlot(QUEUE, { p: 'b' })).not.toBeNull();
      expect(runner.holdSlot(QUEUE, { p: 'c' })).toBeNull();
      runner.releaseSlot(QUEUE, { p: 'a' });
      expect(runner.holdSlot(QUEUE, { p: 'c' })).not.toBeNull();
      // A queue this process does not run has no slot to hold.
      expect(runner.holdSlot('not-registered', { p: 'a' })).toBeNull();
    } finally {
      await runner.stop();
    }
    // Nor does a stopped runner.
    expect(runner.holdSlot(QUEUE, { p: 'z' })).toBeNull();
  });

  it('runs its claimed jobs without claiming them; another runner cannot take them meanwhile', async () => {
    const clock = new FakeClock('2026-06-01T12:00:00Z');
    const ranA: unknown[] = [];
    const ranB: unknown[] = [];
    const a = runnerOf(clock, ranA);
    const b = runnerOf(clock, ranB);
    await a.start(null);
    try {
      const slot = a.holdSlot(QUEUE, { p: 'x' })!;
      const jobs = await insertJobs([{ p: 'x', n: 1 }], slot, clock.now());
      // B looks for due work before A starts its job: the claimed job is not B's to take.
      await b.drain();
      expect(ranB).toEqual([]);
      await a.startClaimed(QUEUE, jobs);
      await a.drain();
      expect(ranA).toEqual([{ p: 'x', n: 1 }]);
      expect(await jobsLeft()).toEqual([]);
    } finally {
      await a.stop();
    }
  });

  it('a runner that stopped before starting them hands them back at once, and another runs them', async () => {
    const clock = new FakeClock('2026-06-01T12:00:00Z');
    const ranA: unknown[] = [];
    const ranB: unknown[] = [];
    const a = runnerOf(clock, ranA);
    const b = runnerOf(clock, ranB);
    await a.start(null);
    const slot = a.holdSlot(QUEUE, { p: 'y' })!;
    const jobs = await insertJobs([{ p: 'y', n: 2 }], slot, clock.now());
    await a.stop();
    await a.startClaimed(QUEUE, jobs);
    expect(ranA).toEqual([]);
    // Unclaimed, and the claim it never used not counted.
    expect(await jobsLeft()).toEqual([{ locked_by: null, attempts: 0 }]);
    await b.drain();
    expect(ranB).toEqual([{ p: 'y', n: 2 }]);
    expect(await jobsLeft()).toEqual([]);
  });

  it('a job whose process died before starting it runs elsewhere once its lease lapses', async () => {
    const clock = new FakeClock('2026-06-01T12:00:00Z');
    const ranB: unknown[] = [];
    const b = runnerOf(clock, ranB);
    // Claimed by a process that is gone: its lease (10 s) is all that holds the job.
    await insertJobs(
      [{ p: 'z', n: 3 }],
      { workerId: 'gone:1:dead', lockedUntil: new Date(clock.nowMs() + 10_000) },
      clock.now(),
    );
    await b.drain();
    expect(ranB).toEqual([]);
    clock.advance(10_001);
    await b.drain();
    expect(ranB).toEqual([{ p: 'z', n: 3 }]);
    const left = await sql<{ n: string }>`SELECT count(*) AS n FROM jobs WHERE queue = ${QUEUE}`.execute(db);
    expect(Number(left.rows[0]!.n)).toBe(0);
  });
});

describe('a queue that reads beside its claim (claimWith)', () => {
  it("hands each claimed job what the claim's statement read of its payload", async () => {
    const clock = new FakeClock('2026-06-01T12:00:00Z');
    const queue = 'read-test';
    const seen: unknown[] = [];
    const runner = new JobRunner(db, clock, quiet);
    runner.register(
      queue,
      async (job) => {
        seen.push([(job.payload as { n: number }).n, job.read]);
      },
      { claimWith: (payload) => sql`json_build_object('twice', (${payload} ->> 'n')::int * 2)` },
    );
    await db
      .insertInto('jobs')
      .values(
        [1, 2, 3].map((n) => ({
          queue,
          payload: JSON.stringify({ n }),
          run_at: clock.now(),
          attempts: 0,
          created_at: clock.now(),
        })),
      )
      .execute();
    await runner.drain();
    expect(seen.sort()).toEqual([
      [1, { twice: 2 }],
      [2, { twice: 4 }],
      [3, { twice: 6 }],
    ]);
  });

  it('is refused on a partitioned queue, whose claim is another statement', () => {
    const runner = new JobRunner(db, new FakeClock('2026-06-01T12:00:00Z'), quiet);
    expect(() =>
      runner.register('x', async () => {}, {
        partition: { key: 'p', concurrency: 1 },
        claimWith: (payload) => payload,
      }),
    ).toThrow(/claimWith and partition/);
  });
});

describe('a job that ends claims again only when jobs may be waiting for its slot', () => {
  /** Counts the claims (`UPDATE jobs SET locked_by …`) every pg client sends until `stop()`. */
  function countClaims(): { claims: () => number; stop: () => void } {
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const original = proto.query;
    let n = 0;
    proto.query = function (this: unknown, ...args: unknown[]) {
      const first = args[0] as string | { text?: string };
      const text = typeof first === 'string' ? first : (first?.text ?? '');
      if (/UPDATE jobs SET locked_by/.test(text)) n++;
      return original.apply(this, args);
    };
    return {
      claims: () => n,
      stop: () => {
        proto.query = original;
      },
    };
  }

  it('a claim that filled the queue: the job ending claims the next, with no timer or NOTIFY', async () => {
    const clock = new FakeClock('2026-06-01T12:00:00Z');
    const queue = 'one-at-a-time';
    const ran: number[] = [];
    // No notifier, and a timer a minute away: only the ending job can start the second.
    const runner = new JobRunner(db, clock, quiet, { idleMs: 60_000 });
    runner.register(queue, async (job) => void ran.push((job.payload as { n: number }).n), {
      concurrency: 1,
    });
    await db
      .insertInto('jobs')
      .values(
        [1, 2].map((n) => ({
          queue,
          payload: JSON.stringify({ n }),
          run_at: new Date(clock.nowMs() - 1000 * n),
          attempts: 0,
          created_at: clock.now(),
        })),
      )
      .execute();
    await runner.start(null);
    try {
      await waitUntil('both jobs to run', () => ran.length === 2, 2000, 10);
      expect(ran).toEqual([2, 1]);
    } finally {
      await runner.stop();
    }
  });

  it('a job started claimed, the timer computed since the last claim: it ends without a claim', async () => {
    const clock = new FakeClock('2026-06-01T12:00:00Z');
    const ran: unknown[] = [];
    const runner = runnerOf(clock, ran);
    await runner.start(null);
    const counted = countClaims();
    try {
      // The start's pump has claimed (nothing) and computed the timer.
      await runner.drain();
      const before = counted.claims();
      const slot = runner.holdSlot(QUEUE, { p: 'w' })!;
      await runner.startClaimed(QUEUE, await insertJobs([{ p: 'w', n: 4 }], slot, clock.now()));
      await waitUntil(
        'the job to run and leave the queue',
        async () => ran.length === 1 && (await jobsLeft()).length === 0,
        2000,
        10,
      );
      await new Promise((r) => setTimeout(r, 50));
      expect(counted.claims()).toBe(before);
    } finally {
      counted.stop();
      await runner.stop();
    }
  });
});
