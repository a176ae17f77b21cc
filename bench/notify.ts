// Notifying commits on a durable store: NOTIFY inside the transaction (PostgreSQL then commits such
// transactions one at a time, each waiting for its own fsync under one lock) against the app's dialect,
// which sends a transaction's notifications after its COMMIT, in the same message (src/db/dialect.ts).
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { startEmbedded } from '../src/db/embedded.js';
import { createDb, createPool, migrate } from '../src/db/store.js';
import type { DB } from '../src/db/types.js';
import { fmt, REPO, type Row } from './lib.js';

const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_NOTIFY_SECONDS ?? 3);
const CHANNEL = 'kairos_bench_notify';

type Mode = 'none' | 'in transaction' | 'after commit';

/** CPU time the whole machine has spent so far (ms, from /proc/stat: user, nice, system, irq, softirq). */
function machineMs(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]!) * 10;
}

/**
 * CONNECTIONS loops, each a transaction of one insert and, but for `none`, one notification: commits
 * per second, and the whole machine's CPU per commit (this process, the store, the listener).
 */
async function commitsPerSecond(
  db: Kysely<DB>,
  mode: Mode,
  seconds: number,
): Promise<{ rate: number; machineUs: number }> {
  const end = performance.now() + seconds * 1000;
  let commits = 0;
  const loop = async () => {
    while (performance.now() < end) {
      await db.transaction().execute(async (trx) => {
        // One statement each, as a booking's writes and their notifications are.
        if (mode === 'none') await sql`INSERT INTO bench_commits DEFAULT VALUES`.execute(trx);
        else if (mode === 'in transaction')
          await sql`WITH i AS (INSERT INTO bench_commits DEFAULT VALUES RETURNING id)
            SELECT pg_notify(${CHANNEL}, 'x') FROM i`.execute(trx);
        else
          await sql`WITH i AS (INSERT INTO bench_commits DEFAULT VALUES RETURNING id)
            SELECT kairos_notify(${CHANNEL}, 'x') FROM i`.execute(trx);
      });
      commits++;
    }
  };
  const started = performance.now();
  const m0 = machineMs();
  await Promise.all(Array.from({ length: CONNECTIONS }, loop));
  return {
    rate: commits / ((performance.now() - started) / 1000),
    machineUs: ((machineMs() - m0) * 1000) / commits,
  };
}

export async function benchNotify(): Promise<Row[]> {
  const dir = join(REPO, '.test-data', `bench-notify-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  // Durable, as `kairos serve` runs it: fsync and synchronous_commit on.
  const server = await startEmbedded({ dataDir: dir, log: { info() {}, warn() {} } });
  const pool = createPool(server.url, CONNECTIONS);
  const listener = new pg.Client({ connectionString: server.url });
  try {
    await migrate(pool);
    const plain = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    const app = createDb(pool);
    await sql`CREATE TABLE bench_commits (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())`.execute(
      plain,
    );
    // Someone listens, as every Kairos process does: the store signals it on each notification.
    await listener.connect();
    let heard = 0;
    listener.on('notification', () => heard++);
    await listener.query(`LISTEN ${CHANNEL}`);
    const runs: [Mode, Kysely<DB>][] = [
      ['none', plain],
      ['in transaction', plain],
      ['after commit', app],
    ];
    const runsOf = new Map<Mode, { rate: number; machineUs: number }[]>();
    // Twice each, alternating: the machine's load moves between runs.
    for (let round = 0; round < 2; round++) {
      for (const [mode, db] of runs) {
        await commitsPerSecond(db, mode, 0.5); // warm-up
        const r = await commitsPerSecond(db, mode, SECONDS);
        runsOf.set(mode, [...(runsOf.get(mode) ?? []), r]);
      }
    }
    if (heard === 0) throw new Error('no notification arrived');
    /** The faster of a mode's two runs. */
    const best = (m: Mode) => (runsOf.get(m) ?? []).reduce((a, b) => (b.rate > a.rate ? b : a));
    const none = best('none');
    const inTx = best('in transaction');
    const after = best('after commit');
    const cpu = (r: { machineUs: number }) => `the whole machine's CPU ${fmt(r.machineUs)} µs a commit`;
    return [
      {
        name: `commits/s, ${CONNECTIONS} connections, durable store, an insert each, no notification`,
        value: fmt(none.rate),
        unit: `commits/s (best of 2; ${cpu(none)})`,
      },
      {
        name: 'commits/s, the same with a NOTIFY in the transaction',
        value: fmt(inTx.rate),
        unit: `commits/s (${fmt((100 * inTx.rate) / none.rate)} % of none; ${cpu(inTx)})`,
      },
      {
        name: 'commits/s, the same with the notification sent after commit (the app’s dialect)',
        value: fmt(after.rate),
        unit: `commits/s (${fmt((100 * after.rate) / none.rate)} % of none, ${fmt(after.rate / inTx.rate, 2)}× NOTIFY in the transaction; ${cpu(after)})`,
      },
    ];
  } finally {
    await listener.end().catch(() => {});
    await pool.end().catch(() => {});
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchNotify());
}
