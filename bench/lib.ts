import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { type EmbeddedServer, startEmbedded } from '../src/db/embedded.js';
import { createDb, createPool, migrate } from '../src/db/store.js';
import type { Clock } from '../src/platform/clock.js';
import { type Runtime, startRuntime } from '../src/runtime.js';

export interface Row {
  name: string;
  value: string;
  unit: string;
}

export const REPO = join(import.meta.dirname, '..');

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Connection errors and time-outs. */
  errors: number;
  /** Answers by HTTP status, and their total. */
  byStatus: Record<string, number>;
  total: number;
}

/**
 * Drives `url` with autocannon from this process and returns throughput and latency. With `nextPath`,
 * each request asks for the path it returns instead (on the same origin); with `nextBody`, each
 * request POSTs the JSON text it returns.
 */
export async function load(
  url: string,
  opts: {
    connections?: number;
    seconds?: number;
    headers?: Record<string, string>;
    nextPath?: () => string;
    nextBody?: () => string;
  } = {},
): Promise<LoadResult> {
  const { nextPath, nextBody } = opts;
  const r = await autocannon({
    url,
    connections: opts.connections ?? 50,
    duration: opts.seconds ?? 5,
    headers: nextBody ? { ...opts.headers, 'content-type': 'application/json' } : opts.headers,
    ...(nextBody ? { method: 'POST' as const } : {}),
    ...(nextPath || nextBody
      ? {
          requests: [
            {
              setupRequest: (request: object) => ({
                ...request,
                ...(nextPath ? { path: nextPath() } : {}),
                ...(nextBody ? { body: nextBody() } : {}),
              }),
            },
          ],
        }
      : {}),
  });
  const byStatus: Record<string, number> = {};
  let total = 0;
  for (const [status, { count = 0 }] of Object.entries(r.statusCodeStats ?? {})) {
    byStatus[status] = count;
    total += count;
  }
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    byStatus,
    total,
  };
}

/** Resident memory of a process in MiB (Linux). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/**
 * User + system CPU time (ms) in the text of a Linux `/proc/<pid>/stat` (or a task's): the fields
 * after the command, where state is field 3, utime 14 and stime 15 (1-based, in clock ticks).
 */
export function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ is 100 on Linux
}

/**
 * CPU time (user + system, ms) so far of every live process named `postgres` on this machine: read
 * before and after a run, the difference is what the store's server processes spent on it (the
 * machine's own PostgreSQL, idle during a bench, adds nothing). Backends that exit in between are
 * not counted, so a run should keep its connections (pooled, as the app's are). Linux only; 0
 * elsewhere.
 */
export function postgresCpuMs(): number {
  let ms = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      ms += statCpuMs(stat);
    } catch {
      // the process ended between the listing and the read
    }
  }
  return ms;
}

/**
 * CPU time (user + system, ms) so far of this process's main thread, the one running JavaScript and
 * the event loop; process.cpuUsage() adds V8's compiler and garbage-collection threads and libuv's
 * pool. Linux only (10 ms ticks); NaN elsewhere.
 */
export function mainThreadCpuMs(): number {
  try {
    return statCpuMs(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8'));
  } catch {
    return Number.NaN;
  }
}

/**
 * A throwaway embedded PostgreSQL server for a bench run, and a fresh database on it. `settings`:
 * server settings beyond the embedded store's own (as `-c name=value`).
 */
export async function benchDatabase(
  name: string,
  settings: Record<string, string> = {},
): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = join(REPO, '.test-data', `bench-${name}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const server = await startEmbedded({
    dataDir: dir,
    log: { info() {}, warn() {} },
    ephemeral: true,
    settings,
  });
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query(`CREATE DATABASE bench`);
  await client.end();
  const u = new URL(server.url);
  u.pathname = '/bench';
  return {
    url: u.toString(),
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Spawns a child that prints `{"url": …}` on its first stdout line (or a Kairos "listening" log line);
 * with BENCH_PERF, under `perf record`.
 */
export async function spawnListening(
  args: string[],
  env: Record<string, string>,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  recordPerf(child);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      // Not left running: a server that did not start in time would outlive the bench.
      child.kill('SIGKILL');
      reject(new Error(`no url from ${args.join(' ')}: ${out}`));
    }, 60_000);
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        child.stdout?.removeAllListeners('data');
        child.stdout?.resume();
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
  return { url, child };
}

/**
 * A `kairos serve` process on a fresh bench database, with an enterprise account (a limit no run
 * reaches) created through the CLI as an operator would: its secret key, the server, and `stop`.
 */
export async function serveWithAccount(
  name: string,
  settings: Record<string, string> = {},
): Promise<{
  key: string;
  server: { url: string; child: ChildProcess };
  databaseUrl: string;
  stop: () => Promise<void>;
}> {
  const db = await benchDatabase(name, settings);
  const env = {
    DATABASE_URL: db.url,
    KAIROS_MASTER_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'info',
    KAIROS_FROM_SOURCE: 'true',
  };
  const kairos = join(REPO, 'bin/kairos.js');
  const created = JSON.parse(
    execFileSync(
      process.execPath,
      [
        kairos,
        'accounts',
        'create',
        '--name',
        'Bench',
        '--plan',
        'enterprise',
        '--rate-limit',
        '100000000',
        '--json',
      ],
      { env: { ...process.env, ...env }, encoding: 'utf8' },
    ),
  );
  const server = await spawnListening([...profiling(), kairos, 'serve'], { ...env, PORT: '0' });
  return {
    key: created.api_key.key,
    server,
    databaseUrl: db.url,
    stop: async () => {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        const exited = new Promise((r) => server.child.once('exit', r));
        server.child.kill('SIGTERM');
        // Its exit (its profile written, with BENCH_PROF), or at most 10 s.
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000).unref())]);
      }
      await db.stop();
    },
  };
}

/** The median of a run's samples (the middle one, or the mean of the middle two). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * `rounds` rounds in each of which `a` and `b` run once, one after the other, `a` first in even rounds
 * and `b` first in odd ones (so neither always runs on a machine the other has just warmed or
 * loaded): each round's pair of results.
 */
export async function alternated<T>(
  rounds: number,
  a: () => Promise<T>,
  b: () => Promise<T>,
): Promise<{ a: T; b: T }[]> {
  const out: { a: T; b: T }[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      const first = await a();
      out.push({ a: first, b: await b() });
    } else {
      const first = await b();
      out.push({ a: await a(), b: first });
    }
  }
  return out;
}

/**
 * With BENCH_PROF: the flags that make a server process write a CPU profile when it exits. With
 * BENCH_PERF: those that name its JavaScript frames for Linux `perf` (a map in /tmp), which
 * `recordPerf` runs on it.
 */
export function profiling(): string[] {
  if (process.env.BENCH_PERF) return ['--perf-basic-prof', '--interpreted-frames-native-stack'];
  return process.env.BENCH_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${join(tmpdir(), 'kairos-bench-prof')}`]
    : [];
}

/**
 * With BENCH_PERF: `perf record -g` of a server process the bench started, from now until it exits,
 * into `kairos-bench-perf/perf-<pid>.data` in the system's temporary directory (the kernel's work,
 * V8's and the JavaScript frames in one profile; `perf report -i <file>`). The frames' names come
 * from V8's map, which does not follow code it moves or frees: trust them over short windows only
 * (docs/performance.md, "Where `GET /v1/me`'s last microseconds go").
 */
export function recordPerf(child: ChildProcess): void {
  if (!process.env.BENCH_PERF || child.pid === undefined) return;
  const dir = join(tmpdir(), 'kairos-bench-perf');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `perf-${child.pid}.data`);
  const perf = spawn('perf', ['record', '-F', '999', '-g', '-o', out, '-p', String(child.pid)], {
    stdio: 'ignore',
  });
  perf.once('error', (err) => console.error(`BENCH_PERF: perf did not start (${err.message})`));
}

/**
 * Forks the bench module at `moduleUrl` as its own server process (`childEnv` set, so the module runs
 * its server side; with BENCH_PROF, under --cpu-prof; with BENCH_PERF, under `perf record`) and waits
 * for the first message it sends: what it serves. `stop` asks it to stop and waits for its exit.
 */
export async function forkBenchChild<Ready>(
  moduleUrl: string,
  childEnv: string,
): Promise<{ ready: Ready; stop: () => Promise<void> }> {
  const child: ChildProcess = fork(fileURLToPath(moduleUrl), [], {
    env: { ...process.env, [childEnv]: '1' },
    execArgv: ['--import', 'tsx', ...profiling()],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  recordPerf(child);
  const stop = async () => {
    if (child.connected) child.send('stop');
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
  };
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      child.once('message', (m) => resolve(m as Ready));
      child.once('exit', (code) => reject(new Error(`bench server exited early (${code})`)));
    });
    return { ready, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** Deterministic PRNG (mulberry32), so every run measures the same data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const FIVE_MINUTES = 300_000;

/**
 * `count` busy blocks of 5–30 minutes on 5-minute starts, scattered over `window` in random order
 * (the same ones every run): the busy time of the slot and availability benchmarks.
 */
export function randomBusy(
  window: { start: number; end: number },
  count: number,
): { start: number; end: number }[] {
  const rand = prng(42);
  const steps = Math.floor((window.end - window.start) / FIVE_MINUTES);
  const busy: { start: number; end: number }[] = [];
  for (let i = 0; i < count; i++) {
    const start = window.start + Math.floor(rand() * steps) * FIVE_MINUTES;
    busy.push({ start, end: start + (1 + Math.floor(rand() * 6)) * FIVE_MINUTES });
  }
  return busy;
}

/**
 * An ICS feed of `count` random busy blocks (randomBusy) within `window`, and as many within each of
 * `more` as it says (each its own randomBusy: the blocks within `window` stay the same whatever follows).
 */
export function busyFeed(
  window: { start: number; end: number },
  count: number,
  more: { window: { start: number; end: number }; count: number }[] = [],
): string {
  const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]|\.\d{3}/g, '');
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Kairos bench//EN'];
  const blocks = [randomBusy(window, count), ...more.map((m) => randomBusy(m.window, m.count))].flat();
  for (const [i, { start, end }] of blocks.entries()) {
    lines.push('BEGIN:VEVENT', `UID:busy-${i}@bench`, 'DTSTAMP:20260101T000000Z');
    lines.push(`DTSTART:${stamp(start)}`, `DTEND:${stamp(end)}`, 'END:VEVENT');
  }
  lines.push('END:VCALENDAR', '');
  return lines.join('\r\n');
}

/**
 * For a bench's child process: runs `serve` on an embedded store in a temporary directory (ephemeral:
 * fsync and synchronous commit off, unless `durable`, as `kairos serve` opens it), removes both
 * afterwards, and exits the process (1 if `serve` failed).
 */
export async function serveOnTempStore(
  serve: (url: string) => Promise<void>,
  opts: { durable?: boolean } = {},
): Promise<never> {
  const base = mkdtempSync(join(tmpdir(), 'kairos-bench-'));
  chmodSync(base, 0o755); // the embedded server runs as an unprivileged user when we are root
  let embedded: EmbeddedServer | null = null;
  let code = 0;
  try {
    embedded = await startEmbedded({
      dataDir: join(base, 'data'),
      log: { info: () => {}, warn: (o: object | string) => console.warn(o) },
      ephemeral: !opts.durable,
    });
    await serve(embedded.url);
  } catch (err) {
    console.error(err);
    code = 1;
  } finally {
    await embedded?.stop().catch(() => {});
    rmSync(base, { recursive: true, force: true });
  }
  process.exit(code);
}

/**
 * The runtime over the (migrated) store at `url`, without workers, reading an ICS feed on loopback
 * whose busy time is not refreshed during the run (on `opts.clock`, else the system's); `close`
 * closes it and its pool.
 */
export async function feedRuntime(
  url: string,
  opts: { clock?: Clock } = {},
): Promise<{ runtime: Runtime; close: () => Promise<void> }> {
  const masterKey = randomBytes(32).toString('base64');
  const config = {
    ...loadConfig({
      DATABASE_URL: url,
      KAIROS_MASTER_KEY: masterKey,
      LOG_LEVEL: 'silent',
      KAIROS_ALLOW_PRIVATE_NETWORK: 'true', // the feed is served on loopback
      KAIROS_BUSY_CACHE_TTL_SECONDS: '3600', // no refresh during the run (no job runner here)
    }),
    port: 0,
  };
  const pool = createPool(url, config.databasePoolMax);
  const db = createDb(pool);
  await migrate(pool);
  const runtime = await startRuntime({
    config,
    log: { info: () => {}, warn: () => {}, error: () => {} },
    store: { db, pool, url, masterKey },
    workers: false,
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  const close = async () => {
    await runtime.close();
    await db.destroy();
  };
  return { runtime, close };
}
