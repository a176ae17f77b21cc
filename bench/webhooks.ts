/**
 * Webhook delivery benchmark, three targets in one run:
 *
 * 1. Burst (`kairos serve` on a bench database, bench/lib.ts serveWithAccount, workers on): one
 *    subscription to `booking.created` at a local receiver in this process; first bookings one at a
 *    time (POST /v1/bookings, each waiting for its delivery): the time from the booking's commit (as
 *    the store recorded it, `track_commit_timestamp`) to the receiver having read the request,
 *    p50/p99 beside the 20 ms target. Then 20 s of bookings at full load (50 connections, a distinct
 *    slot of one of 50 hosts each, as bench/bookings.ts drives them): the booking rate, the
 *    deliveries received during the burst, and the time from the burst's end until the last of its
 *    deliveries arrived (target ≤ 10 s).
 * 2. Capacity (in this process, its own embedded store, durable as `kairos serve` opens it): a
 *    backlog of events for ONE endpoint (and for 8), drained by one process's workers: deliveries/s,
 *    and its ratio to the burst's booking rate (target ≥ 1.5×).
 *
 *   node --import tsx bench/webhooks.ts [--database-url postgres://…] [--events N]
 *
 * BENCH_BURST_SECONDS: the burst's length (default 20). Without a database URL (or
 * BENCH_DATABASE_URL) the capacity part starts its own embedded PostgreSQL in a temporary directory
 * and removes it afterwards; with one, it migrates that database and works in a new account.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type Receiver, startReceiver } from '../test/helpers/receiver.js';
import { loadConfig } from '../src/config.js';
import { emitEvent } from '../src/modules/webhooks/events.js';
import { WebhookService } from '../src/modules/webhooks/service.js';
import { closeOutboundDispatchers } from '../src/platform/outbound.js';
import { type Runtime, startRuntime } from '../src/runtime.js';
import { sampleBooking } from '../test/helpers/events.js';
import { load, serveWithAccount } from './lib.js';
import { DAY } from '../src/lib/time.js';

export interface BenchResult {
  name: string;
  value: string;
  unit: string;
}

const HOSTS = 50;
const CONNECTIONS = 50;
/** Target ratios and times (docs/performance.md#webhook-deliveries). */
const TARGET_RATIO = 1.5;
const TARGET_DRAIN_S = 10;
const TARGET_IDLE_P99_MS = 20;

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

interface Harness {
  ctx: Runtime;
  notifier: NonNullable<Runtime['notifier']>;
  receiver: Receiver;
  close(): Promise<void>;
}

async function open(databaseUrl: string | undefined): Promise<Harness> {
  const dataDir = databaseUrl ? null : mkdtempSync(join(tmpdir(), 'kairos-bench-'));
  // As root, the embedded server runs as an unprivileged user that must be able to enter the directory.
  if (dataDir) chmodSync(dataDir, 0o711);
  const config = loadConfig({
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { KAIROS_DATA_DIR: dataDir! }),
    KAIROS_MASTER_KEY: randomBytes(32).toString('base64'),
    KAIROS_ALLOW_PRIVATE_NETWORK: 'true',
    DATABASE_POOL_MAX: '20',
    LOG_LEVEL: 'silent',
  });
  // The deliverer's queues are registered; the benchmark starts and stops the workers itself.
  const ctx = await startRuntime({ config, log: quiet, http: false, workers: false });
  const receiver = await startReceiver(() => ({ status: 200 }));
  return {
    ctx,
    notifier: ctx.notifier!,
    receiver,
    async close() {
      await ctx.close();
      await receiver.close();
      await closeOutboundDispatchers();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The webhooks module's subscription use cases (what POST /v1/webhooks runs), on the runtime's store. */
function subscriptions(ctx: Runtime): WebhookService {
  return new WebhookService(ctx, [...ctx.events.keys()]);
}

/** Emits `count` events for the account in transactions of `batch`; resolves at the last commit. */
async function emit(ctx: Runtime, accountId: string, count: number, batch: number): Promise<void> {
  for (let done = 0; done < count; done += batch) {
    const n = Math.min(batch, count - done);
    await ctx.db.transaction().execute(async (trx) => {
      for (let i = 0; i < n; i++) {
        await emitEvent(trx, ctx.clock, {
          accountId,
          livemode: true,
          type: 'booking.created',
          data: { booking: sampleBooking({ id: `booking_${String(done + i).padStart(26, '0')}` }) },
        });
      }
    });
  }
}

/** Deliveries per second: a backlog of `events` × `endpoints` deliveries, drained by one process. */
async function throughput(h: Harness, events: number, endpoints: number): Promise<number> {
  const { ctx, receiver } = h;
  const account = await ctx.modules.accounts.createAccount({ name: 'bench', plan: 'enterprise' });
  for (let i = 0; i < endpoints; i++) {
    await subscriptions(ctx).create(
      { accountId: account.account.id, principalId: account.account.id, livemode: true, clock: ctx.clock },
      { url: `${receiver.url}/${i}`, events: ['booking.created'] },
    );
  }
  await ctx.jobs.stop();
  await emit(ctx, account.account.id, events, 200);
  const before = receiver.received.length;
  const total = events * endpoints;
  const started = Date.now();
  await ctx.jobs.start(h.notifier);
  await receiver.waitFor(before + total, 300_000);
  const last = receiver.received[before + total - 1]!.at;
  return total / ((last - started) / 1000);
}

/** Commit-to-receipt times (ms) of events emitted one per transaction, `gapMs` apart. */
async function latency(h: Harness, events: number, gapMs: number): Promise<number[]> {
  const { ctx, receiver } = h;
  const account = await ctx.modules.accounts.createAccount({ name: 'bench', plan: 'enterprise' });
  await subscriptions(ctx).create(
    { accountId: account.account.id, principalId: account.account.id, livemode: true, clock: ctx.clock },
    { url: `${receiver.url}/latency`, events: ['booking.created'] },
  );
  const committed = new Map<string, number>();
  const before = receiver.received.length;
  for (let i = 0; i < events; i++) {
    const event = await ctx.db.transaction().execute((trx) =>
      emitEvent(trx, ctx.clock, {
        accountId: account.account.id,
        livemode: true,
        type: 'booking.created',
        data: { booking: sampleBooking({ notes: String(i) }) },
      }),
    );
    committed.set(event.id, Date.now());
    await sleep(gapMs);
  }
  const got = (await receiver.waitFor(before + events, 60_000)).slice(before);
  return got.map((r) => r.at - committed.get(String(r.headers['webhook-id']))!).sort((a, b) => a - b);
}

/** Start times of free half-hour slots (Mon–Fri 09:00–17:00 UTC, the default schedule) from tomorrow. */
function weekdaySlots(nowMs: number): number[] {
  const starts: number[] = [];
  for (let day = Math.floor(nowMs / DAY) * DAY + DAY; day < nowMs + 58 * DAY; day += DAY) {
    const weekday = new Date(day).getUTCDay();
    if (weekday === 0 || weekday === 6) continue;
    for (let k = 0; k < 16; k++) starts.push(day + 9 * 3_600_000 + k * 1_800_000);
  }
  return starts;
}

interface BurstResult {
  idle: number[];
  bookingsPerS: number;
  bookings: number;
  non201: number;
  deliveredInBurst: number;
  drainS: number;
}

/**
 * Bookings through the real API of a `kairos serve` process with one subscription to
 * `booking.created`: one at a time (idle latency), then `seconds` at full load (burst and drain).
 */
async function burst(seconds: number, idleCount: number): Promise<BurstResult> {
  // The receiver listens on loopback, which the outbound guard refuses unless told otherwise.
  process.env.KAIROS_ALLOW_PRIVATE_NETWORK = 'true';
  const receiver = await startReceiver(() => ({ status: 200 }));
  // The store records when each transaction committed, so the idle figure starts at the commit.
  const served = await serveWithAccount('webhooks', { track_commit_timestamp: 'on' });
  const store = new pg.Client({ connectionString: served.databaseUrl });
  await store.connect();
  try {
    const base = served.server.url;
    const headers = { authorization: `Bearer ${served.key}`, 'content-type': 'application/json' };
    const post = async (path: string, body: object) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    const hosts: string[] = [];
    for (let i = 0; i < HOSTS; i++) {
      const made = (await post('/v1/hosts', { display_name: `Host ${i}`, timezone: 'UTC' })) as {
        host: { principal_id: string };
      };
      hosts.push(made.host.principal_id);
    }
    await post('/v1/webhooks', { url: `${receiver.url}/burst`, events: ['booking.created'] });
    const starts = weekdaySlots(Date.now());
    let n = 0;
    const nextBody = () => {
      const i = n++;
      return JSON.stringify({
        principal_id: hosts[i % HOSTS],
        start_time: new Date(starts[Math.floor(i / HOSTS) % starts.length]!).toISOString(),
        customer_email: `customer${i}@example.com`,
        customer_name: `Customer ${i}`,
      });
    };
    // Idle: one booking at a time, the next once its delivery has arrived.
    const idle: number[] = [];
    for (let i = 0; i < idleCount; i++) {
      const before = receiver.received.length;
      const res = await fetch(`${base}/v1/bookings`, { method: 'POST', headers, body: nextBody() });
      if (res.status !== 201) throw new Error(`booking: ${res.status} ${await res.text()}`);
      const got = (await receiver.waitFor(before + 1, 10_000))[before]!;
      // The event row was written in the booking's transaction: its commit time is the booking's.
      const { rows } = await store.query<{ ms: number }>(
        'SELECT extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000 AS ms FROM events WHERE id = $1',
        [String(got.headers['webhook-id'])],
      );
      const committedMs = Number(rows[0]?.ms);
      if (!Number.isFinite(committedMs)) throw new Error(`no commit time for ${got.headers['webhook-id']}`);
      // The first ones warm the server up (connections, caches, the JIT).
      if (i >= 20) idle.push(got.at - committedMs);
      await sleep(10);
    }
    // Burst: full load for `seconds`, then the time until its last delivery arrived.
    const before = receiver.received.length;
    const startedAt = Date.now();
    const run = await load(`${base}/v1/bookings`, { connections: CONNECTIONS, seconds, headers, nextBody });
    const endedAt = Date.now();
    const created = run.byStatus['201'] ?? 0;
    const deliveredInBurst = receiver.received.slice(before).filter((r) => r.at <= endedAt).length;
    const all = await receiver.waitFor(before + created, 120_000);
    const last = Math.max(...all.slice(before).map((r) => r.at));
    return {
      idle: idle.sort((a, b) => a - b),
      bookingsPerS: created / ((endedAt - startedAt) / 1000),
      bookings: created,
      non201: run.total - created,
      deliveredInBurst,
      drainS: Math.max(0, last - endedAt) / 1000,
    };
  } finally {
    await store.end();
    await served.stop();
    await receiver.close();
  }
}

export async function benchWebhooks(
  opts: { databaseUrl?: string; events?: number } = {},
): Promise<BenchResult[]> {
  const events = opts.events ?? 3000;
  const b = await burst(Number(process.env.BENCH_BURST_SECONDS ?? 20), 220);
  const h = await open(opts.databaseUrl ?? process.env.BENCH_DATABASE_URL);
  let one: number;
  let eight: number;
  try {
    await h.ctx.jobs.start(h.notifier);
    await latency(h, 20, 5); // warm-up
    one = await throughput(h, events, 1);
    eight = await throughput(h, Math.ceil(events / 8), 8);
  } finally {
    await h.close();
  }
  const ratio = one / b.bookingsPerS;
  const p99 = percentile(b.idle, 99);
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  return [
    {
      name: 'bookings/s, burst at full load (50 connections)',
      value: b.bookingsPerS.toFixed(0),
      unit: 'bookings/s',
    },
    {
      name: 'bookings made in the burst (answers other than 201)',
      value: `${b.bookings} (${b.non201})`,
      unit: 'bookings',
    },
    { name: 'deliveries received during the burst', value: String(b.deliveredInBurst), unit: 'deliveries' },
    { name: 'webhook deliveries, 1 endpoint, 1 process', value: one.toFixed(0), unit: 'deliveries/s' },
    { name: 'webhook deliveries, 8 endpoints, 1 process', value: eight.toFixed(0), unit: 'deliveries/s' },
    {
      name: `1-endpoint deliveries ÷ booking rate (target ≥ ${TARGET_RATIO}×)`,
      value: `${ratio.toFixed(2)}× ${verdict(ratio >= TARGET_RATIO)}`,
      unit: 'ratio',
    },
    {
      name: `queue drained after the burst's end (target ≤ ${TARGET_DRAIN_S} s)`,
      value: `${b.drainS.toFixed(1)} ${verdict(b.drainS <= TARGET_DRAIN_S)}`,
      unit: 's',
    },
    {
      name: 'webhook commit → receipt p50 (idle, one booking at a time)',
      value: percentile(b.idle, 50).toFixed(1),
      unit: 'ms',
    },
    {
      name: `webhook commit → receipt p99 (idle; target ≤ ${TARGET_IDLE_P99_MS} ms)`,
      value: `${p99.toFixed(1)} ${verdict(p99 <= TARGET_IDLE_P99_MS)}`,
      unit: 'ms',
    },
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { 'database-url': { type: 'string' }, events: { type: 'string' } },
  });
  const results = await benchWebhooks({
    databaseUrl: values['database-url'],
    events: values.events ? Number(values.events) : undefined,
  });
  console.table(results);
}
