/**
 * Series and seats beside a plain booking (`series-seats`; docs/design.md#series-and-seats, "Bench").
 *
 * One server child, run as bench/bookings.ts runs its durable creation server (the runtime as `kairos
 * serve` starts it: the embedded store it opens, workers on, so mails are sent as they would be; a
 * clock standing still on Monday 1 June 2026, 00:00 UTC). One account, 50 hosts for each kind below
 * (so that no kind waits on another's hosts), and five kinds of request, each a 201:
 *
 * - `booking`: `POST /v1/bookings` with the secret key, a distinct half hour of one of 50 hosts
 *   (Mon–Fri 09:00–17:00 UTC, 180 days ahead), host by host: bench/bookings.ts's requests.
 * - `series`: the same route with `recurrence: {frequency: 'weekly', count: 52}`: 52 occurrences.
 *   Its hosts work every day 00:00–24:00 UTC with `max_days_ahead` 365 (the most a schedule allows),
 *   so a series may start on any half hour of days 1–6 and its last occurrence, 357 days later, is
 *   still within the horizon; each series starts on a half hour of its own, host by host (14,400).
 * - `link booking`: `POST /v1/public/links/{slug}/bookings` of a plain (one customer a slot) link,
 *   one link a host, a distinct half hour each: the seats' route without seats.
 * - `first seat`: the same route of a seated link (capacity 50, one link a host), a slot no one has
 *   taken yet: the seat opens the slot's session (and its occupancy).
 * - `next seat`: a seat in a slot that already has seats: the slots the first seats opened, in turn
 *   (each gets a few more seats; never full).
 * The public route is anonymous; the anonymous per-IP limit is raised so that it never answers 429.
 *
 * The kinds take turns in BENCH_ROUNDS rounds (default 5) after one round not counted, the first
 * kind rotating between rounds; each turn runs ROUND_SECONDS at BENCH_CONNECTIONS (default 50), then
 * ONE_SECONDS at one connection (one request at a time: its time alone), and before each run the
 * jobs earlier runs left behind (mails, event dispatches) are done. Each round gives, for each kind,
 * its time against a booking's (at one connection: mean time of a request; at 50: the ratio of
 * rates) and its server CPU per request (its jobs included) against a booking's; the medians of the
 * rounds are what the targets are judged on: a series ≤ 10× a booking's time, a seat ≤ 1.5×.
 *
 * BENCH_SQL=1: the statements the server sent per request of each kind in the last round, by kind.
 * Run alone with `node --import tsx bench/series-seats.ts` (or `npm run bench -- series-seats`).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { WEEKDAYS } from '../src/lib/schedule.js';
import { DAY, HOUR, MINUTE } from '../src/lib/time.js';
import { FakeClock } from '../src/platform/clock.js';
import { type Runtime, startRuntime } from '../src/runtime.js';
import { fmt, type LoadResult, load, median, profiling, recordPerf, type Row } from './lib.js';

const CHILD_ENV = 'KAIROS_BENCH_SERIES_SEATS';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 8);
const ROUND_SECONDS = 3;
const ONE_SECONDS = 2;
const DRAIN_LIMIT_MS = 120_000;
/** The creation server's clock: Monday 1 June 2026, 00:00 UTC (bench/bookings.ts's). */
const NOW = Date.UTC(2026, 5, 1);
const HOSTS = 50;
const PLAIN_DAYS_AHEAD = 180;
/** The most a schedule allows (SCHEDULE_LIMITS.maxDaysAhead): a weekly series of 52 fits from days 1–6. */
const SERIES_DAYS_AHEAD = 365;
const SERIES_START_DAYS = 6;
const SERIES_COUNT = 52;
const SEAT_CAPACITY = 50;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

type Kind = 'booking' | 'series' | 'link booking' | 'first seat' | 'next seat';
const KINDS: readonly Kind[] = ['booking', 'series', 'link booking', 'first seat', 'next seat'];

interface Ready {
  url: string;
  token: string;
  plainHosts: string[];
  seriesHosts: string[];
  linkSlugs: string[];
  seatSlugs: string[];
}

/** The child's counters, cumulative since it started. */
interface Stats {
  cpuMs: number;
  queries: number;
  jobsPending: number;
  /** Statements since the last `reset`, by their first words (BENCH_SQL only). */
  queryKinds: [string, number][];
}

type Ask = { type: 'stats' | 'reset' | 'stop' };

// ---- the server child ------------------------------------------------------------------------------

/** Counts the statements this process's pg clients send; with `withKinds`, also by text (BENCH_SQL). */
function countQueries(withKinds: boolean) {
  const texts = new Map<string, number>();
  let total = 0;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    total++;
    if (withKinds) {
      const q = args[0];
      const text = typeof q === 'string' ? q : ((q as { text?: string } | null)?.text ?? '?');
      const kind = text
        .replace(/\s+/g, ' ')
        .replace(/\$\d+(, ?\$\d+)*/g, '$…')
        .slice(0, 110);
      texts.set(kind, (texts.get(kind) ?? 0) + 1);
    }
    return original.apply(this, args);
  };
  return {
    total: () => total,
    byKind: () => [...texts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20),
    reset: () => texts.clear(),
  };
}

async function created(
  app: FastifyInstance,
  headers: Record<string, string>,
  method: 'POST' | 'PUT',
  url: string,
  payload: object,
) {
  const res = await app.inject({ method, url, headers, payload });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json() as Record<string, { principal_id: string; slug: string }>;
}

/** HOSTS hosts (UTC), each with `schedule`; their ids. */
async function hosts(
  app: FastifyInstance,
  headers: Record<string, string>,
  name: string,
  schedule: object,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < HOSTS; i++) {
    const made = await created(app, headers, 'POST', '/v1/hosts', {
      display_name: `${name} ${i}`,
      timezone: 'UTC',
    });
    const id = made.host!.principal_id;
    await created(app, headers, 'PUT', `/v1/principals/${id}/schedule`, schedule);
    ids.push(id);
  }
  return ids;
}

/** One booking link a host, half-hour slots, with `extra` (seats); their slugs. */
async function links(
  app: FastifyInstance,
  headers: Record<string, string>,
  prefix: string,
  hostIds: string[],
  extra: object,
): Promise<string[]> {
  const slugs: string[] = [];
  for (const [i, h] of hostIds.entries()) {
    const made = await created(app, headers, 'POST', '/v1/booking-links', {
      title: `${prefix} ${i}`,
      slug: `${prefix}-${i}`,
      host_ids: [h],
      durations: [30],
      ...extra,
    });
    slugs.push(made.booking_link!.slug);
  }
  return slugs;
}

/** Child: the runtime as `kairos serve` starts it on its own durable embedded store; then serves. */
async function serve(): Promise<void> {
  const queries = countQueries(Boolean(process.env.BENCH_SQL));
  const base = mkdtempSync(join(tmpdir(), 'kairos-bench-'));
  chmodSync(base, 0o755); // the embedded server runs as an unprivileged user when we are root
  let ctx: Runtime | null = null;
  let code = 0;
  try {
    const config = {
      ...loadConfig({
        KAIROS_DATA_DIR: join(base, 'data'),
        KAIROS_MASTER_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'silent',
        KAIROS_ANON_RATE_LIMIT_PER_HOUR: '100000000',
      }),
      port: 0,
    };
    ctx = await startRuntime({ config, log: quiet, clock: new FakeClock(NOW) });
    const app = ctx.app!;
    const { api_key } = await ctx.modules.accounts.createAccount({
      name: 'Bench',
      plan: 'enterprise',
      rateLimitPerHour: 1_000_000_000,
    });
    const headers = { authorization: `Bearer ${api_key.key}` };
    const plain = { max_days_ahead: PLAIN_DAYS_AHEAD };
    const everyDay = {
      max_days_ahead: SERIES_DAYS_AHEAD,
      weekly: WEEKDAYS.map((day) => ({ day, start: '00:00', end: '24:00' })),
    };
    const plainHosts = await hosts(app, headers, 'Host', plain);
    const seriesHosts = await hosts(app, headers, 'Series host', everyDay);
    const linkSlugs = await links(app, headers, 'plain', await hosts(app, headers, 'Link host', plain), {});
    const seatSlugs = await links(app, headers, 'seated', await hosts(app, headers, 'Seat host', plain), {
      seats: { capacity: SEAT_CAPACITY, show_remaining: true },
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    process.send?.({
      url,
      token: api_key.key,
      plainHosts,
      seriesHosts,
      linkSlugs,
      seatSlugs,
    } satisfies Ready);
    const db = ctx.db;
    await new Promise<void>((resolve) => {
      const onMessage = (m: Ask) => {
        if (m.type === 'stop') {
          process.off('message', onMessage);
          resolve();
          return;
        }
        if (m.type === 'reset') {
          queries.reset();
          process.send?.({});
          return;
        }
        db.selectFrom('jobs')
          .select(db.fn.countAll<string>().as('n'))
          .where('queue', 'in', ['mail.send', 'webhook-dispatch'])
          .executeTakeFirstOrThrow()
          .then((jobs) => {
            const used = process.cpuUsage();
            process.send?.({
              cpuMs: (used.user + used.system) / 1000,
              queries: queries.total(),
              jobsPending: Number(jobs.n),
              queryKinds: queries.byKind(),
            } satisfies Stats);
          }, console.error);
      };
      process.on('message', onMessage);
    });
  } catch (err) {
    console.error(err);
    code = 1;
  } finally {
    await ctx?.close().catch(() => {});
    rmSync(base, { recursive: true, force: true });
  }
  process.exit(code);
}

// ---- the load side ---------------------------------------------------------------------------------

function ask<T>(child: ChildProcess, message: Ask): Promise<T> {
  return new Promise<T>((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send(message);
  });
}

/** Start times of the half hours of Mon–Fri 09:00–17:00 UTC after NOW within PLAIN_DAYS_AHEAD. */
function weekdaySlots(): number[] {
  const starts: number[] = [];
  for (let day = NOW; day < NOW + PLAIN_DAYS_AHEAD * DAY; day += DAY) {
    const weekday = new Date(day).getUTCDay();
    if (weekday === 0 || weekday === 6) continue;
    for (let k = 0; k < 16; k++) starts.push(day + 9 * HOUR + k * 30 * MINUTE);
  }
  return starts;
}

/** What one kind's requests post, and where: a path and a body made together for each request. */
interface Requests {
  path: string;
  headers: Record<string, string>;
  next: () => { path: string; body: string };
  /** Requests made past the kind's supply of free times (they would be refused). */
  overrun: () => number;
}

/**
 * The kinds' requests. Each `next` walks its own supply host by host (then the next time); `next
 * seat` walks the (link, slot) pairs that `first seat` has handed out so far, so it must follow it.
 */
function requestsOf(ready: Ready): Record<Kind, Requests> {
  const slots = weekdaySlots();
  const customer = (kind: string, i: number) => ({
    customer_email: `${kind}${i}@example.com`,
    customer_name: `Customer ${i}`,
  });
  const secret = { authorization: `Bearer ${ready.token}` };
  const walker = (
    kind: string,
    capacity: number,
    make: (k: number, i: number) => { path: string; body: object },
  ) => {
    let n = 0;
    let over = 0;
    return {
      count: () => n,
      overrun: () => over,
      next: () => {
        const i = n++;
        if (i >= capacity) over++;
        const { path, body } = make(i % capacity, i);
        return { path, body: JSON.stringify({ ...body, ...customer(kind, i) }) };
      },
    };
  };
  const at = (ms: number) => new Date(ms).toISOString();
  const plain = walker('booking', slots.length * HOSTS, (k) => ({
    path: '/v1/bookings',
    body: { principal_id: ready.plainHosts[k % HOSTS], start_time: at(slots[Math.floor(k / HOSTS)]!) },
  }));
  const seriesSupply = SERIES_START_DAYS * 48 * HOSTS;
  const series = walker('series', seriesSupply, (k) => {
    const j = Math.floor(k / HOSTS);
    return {
      path: '/v1/bookings',
      body: {
        principal_id: ready.seriesHosts[k % HOSTS],
        start_time: at(NOW + (1 + Math.floor(j / 48)) * DAY + (j % 48) * 30 * MINUTE),
        recurrence: { frequency: 'weekly', count: SERIES_COUNT },
      },
    };
  });
  const linkPath = (slug: string) => `/v1/public/links/${slug}/bookings`;
  const onLink = (slugs: string[]) => (k: number) => ({
    path: linkPath(slugs[k % HOSTS]!),
    body: { start_time: at(slots[Math.floor(k / HOSTS)]!) },
  });
  const linkBooking = walker('link', slots.length * HOSTS, onLink(ready.linkSlugs));
  const seatFirst = walker('first', slots.length * HOSTS, onLink(ready.seatSlugs));
  // The slots the first seats opened, in turn; each gets fewer seats than SEAT_CAPACITY in a run.
  let seatN = 0;
  const seatNext = {
    overrun: () => 0,
    next: () => {
      const i = seatN++;
      const { path, body } = onLink(ready.seatSlugs)(i % Math.max(1, seatFirst.count()));
      return { path, body: JSON.stringify({ ...body, ...customer('next', i) }) };
    },
  };
  return {
    booking: { path: '/v1/bookings', headers: secret, ...plain },
    series: { path: '/v1/bookings', headers: secret, ...series },
    'link booking': { path: linkPath(ready.linkSlugs[0]!), headers: {}, ...linkBooking },
    'first seat': { path: linkPath(ready.seatSlugs[0]!), headers: {}, ...seatFirst },
    'next seat': { path: linkPath(ready.seatSlugs[0]!), headers: {}, ...seatNext },
  };
}

/**
 * Runs `requests` against the server for `seconds` at `connections`. Each request's path and body
 * are made together by `next` (lib.ts's load asks for the path first, then for the body).
 */
function run(url: string, requests: Requests, connections: number, seconds: number) {
  let body = '';
  return load(`${url}${requests.path}`, {
    connections,
    seconds,
    headers: requests.headers,
    nextPath: () => {
      const made = requests.next();
      body = made.body;
      return made.path;
    },
    nextBody: () => body,
  });
}

/** One kind's turn in a round. */
interface Turn {
  /** Requests/s at CONNECTIONS, and their p50 / p99 (ms). */
  rps: number;
  p50: number;
  p99: number;
  /** Mean time of one request alone (ms): 1,000 ÷ the rate at one connection. */
  aloneMs: number;
  /** Server CPU per request of the CONNECTIONS run, the jobs it left behind included (ms). */
  cpuMs: number;
  statements: number;
  queryKinds: [string, number][];
  /** The machine's 1-minute load average at the turn's end (other work on it shows here). */
  load: number;
}

function refusedOf(r: LoadResult): number {
  return r.total - (r.byStatus['201'] ?? 0) + r.errors;
}

export async function benchSeriesSeats(): Promise<Row[]> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, [CHILD_ENV]: '1' },
    execArgv: ['--import', 'tsx', ...profiling()],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  recordPerf(child);
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      child.once('message', (m) => resolve(m as Ready));
      child.once('exit', (code) => reject(new Error(`bench server exited early (${code})`)));
    });
    const requests = requestsOf(ready);
    const stats = () => ask<Stats>(child, { type: 'stats' });
    const drain = async () => {
      const start = performance.now();
      let s = await stats();
      while (s.jobsPending > 0 && performance.now() - start < DRAIN_LIMIT_MS) {
        await new Promise((r) => setTimeout(r, 100));
        s = await stats();
      }
      if (s.jobsPending > 0) throw new Error(`${s.jobsPending} jobs still pending after the drain limit`);
      return s;
    };
    const check = (kind: Kind, r: LoadResult) => {
      if (refusedOf(r) > 0) {
        throw new Error(`${kind}: ${refusedOf(r)} answers other than 201 (${JSON.stringify(r.byStatus)})`);
      }
    };
    const turn = async (kind: Kind): Promise<Turn> => {
      const before = await drain();
      await ask(child, { type: 'reset' });
      const many = await run(ready.url, requests[kind], CONNECTIONS, ROUND_SECONDS);
      const afterRun = await stats();
      const after = await drain();
      const one = await run(ready.url, requests[kind], 1, ONE_SECONDS);
      check(kind, many);
      check(kind, one);
      const made = many.byStatus['201'] ?? 0;
      return {
        rps: many.rps,
        p50: many.p50,
        p99: many.p99,
        aloneMs: 1000 / one.rps,
        cpuMs: (after.cpuMs - before.cpuMs) / made,
        statements: (afterRun.queries - before.queries - 1) / made, // less the stats' own count
        queryKinds: afterRun.queryKinds,
        load: loadavg()[0] ?? Number.NaN,
      };
    };
    // Warm-up, in the kinds' order (`next seat` needs the slots `first seat` opened).
    for (const kind of KINDS) {
      const r = await run(ready.url, requests[kind], CONNECTIONS, WARMUP_SECONDS);
      check(kind, r);
      await drain();
    }
    for (const kind of KINDS) await turn(kind); // one round not counted (bench/bookings.ts, alternatedRows)
    const rounds: Record<Kind, Turn>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const out = {} as Record<Kind, Turn>;
      // The first kind rotates; `next seat` walks slots the warm-up's first seats already opened.
      const order = KINDS.map((_, i) => KINDS[(i + round) % KINDS.length]!);
      for (const kind of order) out[kind] = await turn(kind);
      rounds.push(out);
    }
    for (const kind of KINDS) {
      if (requests[kind].overrun() > 0) throw new Error(`${kind}: ran out of free times`);
    }
    if (process.env.BENCH_SQL) {
      for (const kind of KINDS) {
        const last = rounds.at(-1)![kind];
        const made = last.rps * ROUND_SECONDS;
        console.log(
          `[${kind}] statements in the last round's ${CONNECTIONS}-connection run (~${fmt(made)} requests):`,
        );
        for (const [text, n] of last.queryKinds) console.log(`${String(n).padStart(8)}  ${text}`);
      }
    }
    return rowsOf(rounds);
  } finally {
    if (child.connected) child.send({ type: 'stop' } satisfies Ask);
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
  }
}

function rowsOf(rounds: Record<Kind, Turn>[]): Row[] {
  const list = (xs: number[], digits: number) => xs.map((x) => fmt(x, digits)).join(', ');
  const rows: Row[] = [];
  const each = `${rounds.length} rounds`;
  for (const kind of KINDS) {
    const of = (f: (t: Turn) => number) => median(rounds.map((r) => f(r[kind])));
    rows.push({
      name: `${kind}: ${CONNECTIONS} conn / alone`,
      value: `${fmt(of((t) => t.rps))} / ${fmt(
        of((t) => t.aloneMs),
        2,
      )}`,
      unit: `req/s / ms a request at one connection (medians of ${each}; at ${CONNECTIONS} conn p50 / p99 ${fmt(of((t) => t.p50))} / ${fmt(of((t) => t.p99))} ms; server CPU ${fmt(
        of((t) => t.cpuMs),
        2,
      )} ms a request, its jobs included; ${fmt(
        of((t) => t.statements),
        1,
      )} statements)`,
    });
  }
  const against = (kind: Kind, base: Kind, target: string) => {
    const ratio = (f: (t: Turn) => number) => rounds.map((r) => f(r[kind]) / f(r[base]));
    const alone = ratio((t) => t.aloneMs);
    const loaded = rounds.map((r) => r[base].rps / r[kind].rps);
    const cpu = ratio((t) => t.cpuMs);
    rows.push(
      {
        name: `${kind} vs ${base}, one at a time`,
        value: `${fmt(median(alone), 2)}×`,
        unit: `its time, median (rounds: ${list(alone, 2)}); target ${target}`,
      },
      {
        name: `${kind} vs ${base}, ${CONNECTIONS} conn`,
        value: `${fmt(median(loaded), 2)}×`,
        unit: `its time (the ${base}'s rate ÷ its rate), median (rounds: ${list(loaded, 2)}); target ${target}`,
      },
      {
        name: `${kind} vs ${base}, server CPU`,
        value: `${fmt(median(cpu), 2)}×`,
        unit: `a request's, its jobs included, median (rounds: ${list(cpu, 2)})`,
      },
    );
  };
  const loads = rounds.flatMap((r) => KINDS.map((k) => r[k].load));
  rows.push({
    name: 'machine load average (1 min) at the turns’ ends',
    value: fmt(median(loads), 1),
    unit: `median (${fmt(Math.min(...loads), 1)}–${fmt(Math.max(...loads), 1)}) on ${availableParallelism()} cores: above the cores, other work shared the machine and single rounds wander`,
  });
  against('series', 'booking', '≤ 10×');
  against('first seat', 'link booking', '≤ 1.5×');
  against('next seat', 'link booking', '≤ 1.5×');
  against('first seat', 'booking', '≤ 1.5×');
  against('next seat', 'booking', '≤ 1.5×');
  return rows;
}

if (process.env[CHILD_ENV]) {
  await serve();
} else if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await benchSeriesSeats());
  process.exit(0);
}
