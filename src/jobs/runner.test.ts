/**
 * The runner's claims: a dead process's job runs elsewhere once its lease lapses, a claim reads beside
 * its jobs (claimWith), and a job that ends claims again only when jobs may be waiting for its slot.
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

/** Inserts jobs of `queue` claimed by `claim`'s worker (or unclaimed with `claim` null); the jobs. */
async function insertJobs(
  payloads: object[],
  claim: { workerId: string; lockedUntil: Date } | null,
  now: Date,
  queue = QUEUE,
): Promise<Job[]> {
  const rows = await db
    .insertInto('jobs')
    .values(
      payloads.map((p) => ({
        queue,
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
  return rows.map((r) => ({ id: String(r.id), queue, payload: r.payload, attempts: 1 }));
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

describe('a claimed job', () => {
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
    await insertJobs(
      [1, 2, 3].map((n) => ({ n })),
      null,
      clock.now(),
      queue,
    );
    await runner.drain();
    expect(seen.sort()).toEqual([
      [1, { twice: 2 }],
      [2, { twice: 4 }],
      [3, { twice: 6 }],
    ]);
  });

  it('reads beside the claim of a partitioned queue too', async () => {
    const clock = new FakeClock('2026-06-01T12:00:00Z');
    const queue = 'read-partitioned';
    const seen: unknown[] = [];
    const runner = new JobRunner(db, clock, quiet);
    runner.register(queue, async (job) => void seen.push(job.read), {
      partition: { key: 'p', concurrency: 1 },
      claimWith: (payload) => sql`${payload} ->> 'p'`,
    });
    await insertJobs([{ p: 'a' }, { p: 'b' }], null, clock.now(), queue);
    await runner.drain();
    expect(seen.sort()).toEqual(['a', 'b']);
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

  it('a job whose claim was followed by the timer: it ends without a claim', async () => {
    const clock = new FakeClock('2026-06-01T12:00:00Z');
    const ran: unknown[] = [];
    // No notifier, and a timer a minute away: nothing but the ending job could claim.
    const runner = new JobRunner(db, clock, quiet, { idleMs: 60_000 });
    runner.register(QUEUE, async (job) => void ran.push(job.payload), { concurrency: 3 });
    await insertJobs([{ p: 'w', n: 4 }], null, clock.now());
    const counted = countClaims();
    try {
      // One pump claims the job (fewer than the queue's free slots) and computes the timer, before
      // the job's end (a round trip later) frees its slot.
      await runner.start(null);
      await waitUntil(
        'the job to run and leave the queue',
        async () => ran.length === 1 && (await jobsLeft()).length === 0,
        2000,
        10,
      );
      // The runner idle (the job's end and any pump it woke are over): only the first claim was made.
      await runner.settle();
      expect(counted.claims()).toBe(1);
    } finally {
      counted.stop();
      await runner.stop();
    }
  });
});
