/**
 * Webhook delivery benchmark: deliveries per second to a local receiver that answers 200 at once,
 * and the time from the emitting transaction's commit to the receiver having the request.
 *
 *   node --import tsx bench/webhooks.ts [--database-url postgres://…] [--events N]
 *
 * Without a database URL (or BENCH_DATABASE_URL) it starts its own embedded PostgreSQL in a temporary
 * directory (durable settings, as `kairos serve` runs it) and removes it afterwards. With one, it
 * migrates that database and works in a new account of its own.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type Receiver, startReceiver } from '../test/helpers/receiver.js';
import { loadConfig } from '../src/config.js';
import { emitEvent } from '../src/modules/webhooks/events.js';
import { WebhookService } from '../src/modules/webhooks/service.js';
import { closeOutboundDispatchers } from '../src/platform/outbound.js';
import { type Runtime, startRuntime } from '../src/runtime.js';
import { sampleBooking } from '../test/helpers/events.js';

export interface BenchResult {
  name: string;
  value: string;
  unit: string;
}

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
      { accountId: account.account.id, principalId: account.account.id },
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
    { accountId: account.account.id, principalId: account.account.id },
    { url: `${receiver.url}/latency`, events: ['booking.created'] },
  );
  const committed = new Map<string, number>();
  const before = receiver.received.length;
  for (let i = 0; i < events; i++) {
    const event = await ctx.db.transaction().execute((trx) =>
      emitEvent(trx, ctx.clock, {
        accountId: account.account.id,
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

export async function benchWebhooks(
  opts: { databaseUrl?: string; events?: number } = {},
): Promise<BenchResult[]> {
  const events = opts.events ?? 2000;
  const h = await open(opts.databaseUrl ?? process.env.BENCH_DATABASE_URL);
  try {
    await h.ctx.jobs.start(h.notifier);
    await latency(h, 20, 5); // warm-up
    const one = await throughput(h, events, 1);
    const eight = await throughput(h, Math.ceil(events / 8), 8);
    const times = await latency(h, 200, 20);
    return [
      { name: 'webhook deliveries, 1 endpoint, 1 process', value: one.toFixed(0), unit: 'deliveries/s' },
      { name: 'webhook deliveries, 8 endpoints, 1 process', value: eight.toFixed(0), unit: 'deliveries/s' },
      {
        name: 'webhook commit → receipt p50 (idle, 50 events/s)',
        value: String(percentile(times, 50)),
        unit: 'ms',
      },
      {
        name: 'webhook commit → receipt p99 (idle, 50 events/s)',
        value: String(percentile(times, 99)),
        unit: 'ms',
      },
    ];
  } finally {
    await h.close();
  }
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
