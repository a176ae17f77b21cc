/**
 * HTTP availability benchmark: `GET /v1/availability/slots` over 30 days (also as another business
 * allowed by a consent) and `GET /v1/availability/next`
 * with a warm busy-time cache (the host's calendar is an ICS feed of 1,000 busy blocks a month served by this
 * process, connected through the API and read once; requests are then answered by the real calendar busy
 * source from its in-memory copy of the cache), each beside a baseline route that sends a precomputed
 * answer of the same size from memory through the same app (auth, rate limit, request hooks), i.e. the
 * cost of sending the answer at all. 50 connections; req/s, p50, p99.
 *
 * The server runs in a child process (this file again, with KAIROS_BENCH_CHILD=1) with its own
 * embedded PostgreSQL in a temporary directory, so that autocannon does not share its event loop.
 * Run alone with `node --import tsx bench/availability.ts`. BENCH_SECONDS (default 9) is the measured
 * time per route, split into rounds that alternate with the baseline; BENCH_PROF=1 writes a CPU profile
 * of the server process to $TMPDIR/kairos-bench-prof; BENCH_ONLY=<text> runs only the rows whose name
 * contains it.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import {
  busyFeed,
  feedRuntime,
  forkBenchChild,
  type LoadResult as Load,
  load,
  median,
  type Row,
  serveOnTempStore,
} from './lib.js';
import { DAY, MINUTE } from '../src/lib/time.js';

/** One benchmark result row. */
export type BenchRow = Row;

const CHILD_ENV = 'KAIROS_BENCH_CHILD';
const ZONE = 'America/New_York';
/** Busy blocks in 30 days. */
const BUSY_COUNT = 1000;
/** How far the windows of the new questions move (slots and next): 2,000 quarter hours. */
const NEW_QUESTIONS_DAYS = 21;
const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const ROUNDS = 3;
/** Each slots row's share of its memory baseline's req/s (same run) that it should reach. */
const TARGETS = { remembered: 50, newQuestion: 40, consent: 40 };

/** What the server process tells the load process. */
interface Ready {
  url: string;
  token: string;
  /** Another account's key, allowed to read the host by a consent (the network module's access rule). */
  consentToken: string;
  paths: { slots: string; slotsBaseline: string; next: string; nextBaseline: string };
  bytes: { slots: number; next: number };
  slotCount: number;
  /** The server process, whose CPU time each run reads (/proc). */
  pid: number;
}

/**
 * Child process, on an ephemeral embedded store: app, data, baseline routes; reports Ready over IPC
 * and serves until told to stop.
 */
async function serveOn(url: string): Promise<void> {
  const { runtime: ctx, close } = await feedRuntime(url);
  const app = ctx.app!;
  // Routes must exist before the app first answers; their answers are filled in from the real routes.
  let slotsBody = '';
  let nextBody = '';
  app.get(
    '/v1/bench/baseline-slots',
    { config: { access: 'private' }, schema: { hide: true } },
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(slotsBody),
  );
  app.get(
    '/v1/bench/baseline-next',
    { config: { access: 'private' }, schema: { hide: true } },
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(nextBody),
  );
  let feed: Server | null = null;
  try {
    const { account, api_key } = await ctx.modules.accounts.createAccount({
      name: 'Bench',
      plan: 'enterprise',
      rateLimitPerHour: 1_000_000_000,
    });
    const host = await ctx.modules.principals.createHost(account.id, {
      display_name: 'Bench host',
      timezone: ZONE,
    });
    const from = Math.ceil(Date.now() / DAY) * DAY;
    const to = from + 30 * DAY;
    const headers = { authorization: `Bearer ${api_key.key}` };
    // As busy after the 30 days as in them, as far as the new questions below reach (the 30 days
    // themselves as bench/bookings.ts and bench/mcp.ts build them).
    const ics = busyFeed({ start: from, end: to }, BUSY_COUNT, [
      {
        window: { start: to, end: to + NEW_QUESTIONS_DAYS * DAY },
        count: Math.round((BUSY_COUNT * NEW_QUESTIONS_DAYS) / 30),
      },
    ]);
    feed = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/calendar' }).end(ics);
    });
    await new Promise<void>((resolve) => feed?.listen(0, '127.0.0.1', resolve));
    const connected = await app.inject({
      method: 'POST',
      url: '/v1/calendars/ics',
      headers,
      payload: {
        url: `http://127.0.0.1:${(feed.address() as AddressInfo).port}/busy.ics`,
        principal_id: host.principal_id,
      },
    });
    if (connected.statusCode !== 201) throw new Error(`connecting the feed failed: ${connected.body}`);

    const q = (o: Record<string, string>) => new URLSearchParams(o).toString();
    const slots = `/v1/availability/slots?${q({
      business_id: host.principal_id,
      duration_minutes: '30',
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
    })}`;
    // `after` a fixed instant, so that every request asks the same question.
    const next = `/v1/availability/next?${q({
      business_id: host.principal_id,
      duration_minutes: '30',
      after: new Date(from).toISOString(),
    })}`;
    // Another business, allowed by a consent of the host's account: its reads pass the access rule's query.
    const reader = await ctx.modules.accounts.createAccount({
      name: 'Bench reader',
      plan: 'enterprise',
      rateLimitPerHour: 1_000_000_000,
    });
    const consent = await app.inject({
      method: 'POST',
      url: '/v1/consents',
      headers,
      payload: {
        grantee_id: reader.account.id,
        scopes: ['availability:read:freebusy'],
        principal_id: host.principal_id,
      },
    });
    if (consent.statusCode !== 201) throw new Error(`granting the consent failed: ${consent.body}`);
    slotsBody = (await app.inject({ method: 'GET', url: slots, headers })).body;
    nextBody = (await app.inject({ method: 'GET', url: next, headers })).body;
    const slotCount = (JSON.parse(slotsBody) as { slots: unknown[] }).slots.length;
    if (slotCount === 0 || !nextBody.includes('"start"')) throw new Error(`unexpected answers: ${nextBody}`);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });

    const ready: Ready = {
      url: address,
      token: api_key.key,
      consentToken: reader.api_key.key,
      paths: {
        slots,
        slotsBaseline: '/v1/bench/baseline-slots',
        next,
        nextBaseline: '/v1/bench/baseline-next',
      },
      bytes: { slots: Buffer.byteLength(slotsBody), next: Buffer.byteLength(nextBody) },
      slotCount,
      pid: process.pid,
    };
    process.send?.(ready);
    await new Promise<void>((resolve) => process.once('message', () => resolve()));
  } finally {
    await close();
    await new Promise((resolve) => (feed ? feed.close(resolve) : resolve(undefined)));
  }
}

/** CPU time (user + system, s) a process has used so far (Linux /proc; 0 elsewhere). */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return 0;
  }
}

/** A fixed path, or one made afresh for each request. */
type Target = string | (() => string);

function loadTarget(origin: string, target: Target, token: string, seconds: number): Promise<Load> {
  return load(origin + (typeof target === 'string' ? target : target()), {
    connections: CONNECTIONS,
    seconds,
    headers: { authorization: `Bearer ${token}` },
    ...(typeof target === 'string' ? {} : { nextPath: target }),
  });
}

/** Starts the server process, loads each route (warm-up, then measured), and returns the rows. */
export async function benchAvailability(): Promise<BenchRow[]> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 9);
  const { ready, stop } = await forkBenchChild<Ready>(import.meta.url, CHILD_ENV);
  try {
    const rows: BenchRow[] = [];
    /**
     * Route and baseline take turns (ROUNDS short runs each, medians reported), so that load from
     * other processes on the machine falls on both alike instead of skewing their ratio.
     */
    const only = process.env.BENCH_ONLY;
    const compare = async (
      label: string,
      target: Target,
      baseline: string,
      size: string,
      goal: number | null,
      token: string = ready.token,
    ) => {
      if (only && !label.includes(only)) return;
      await loadTarget(ready.url, target, token, WARMUP_SECONDS);
      await loadTarget(ready.url, baseline, ready.token, WARMUP_SECONDS);
      const runs: { route: Load; baseline: Load; routeCpu: number; baselineCpu: number }[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const c0 = cpuSeconds(ready.pid);
        const route = await loadTarget(ready.url, target, token, seconds / ROUNDS);
        const c1 = cpuSeconds(ready.pid);
        const baseRun = await loadTarget(ready.url, baseline, ready.token, seconds / ROUNDS);
        const c2 = cpuSeconds(ready.pid);
        for (const [name, r] of [
          [label, route],
          [`${label} baseline`, baseRun],
        ] as const) {
          if (r.non2xx > 0 || r.errors > 0) {
            throw new Error(`${name}: ${r.non2xx} non-2xx answers and ${r.errors} errors`);
          }
        }
        runs.push({
          route,
          baseline: baseRun,
          routeCpu: (c1 - c0) / route.total,
          baselineCpu: (c2 - c1) / baseRun.total,
        });
      }
      for (const [name, pick] of [
        [label, (x: (typeof runs)[number]) => x.route],
        [`${label} baseline`, (x: (typeof runs)[number]) => x.baseline],
      ] as const) {
        const loads = runs.map(pick);
        rows.push(
          { name: `http.${name} req/s`, value: median(loads.map((r) => r.rps)).toFixed(0), unit: 'req/s' },
          { name: `http.${name} p50`, value: String(median(loads.map((r) => r.p50))), unit: 'ms' },
          { name: `http.${name} p99`, value: String(median(loads.map((r) => r.p99))), unit: 'ms' },
        );
      }
      const routeCpu = median(runs.map((x) => x.routeCpu));
      const baselineCpu = median(runs.map((x) => x.baselineCpu));
      rows.push(
        { name: `http.${label} server CPU`, value: (routeCpu * 1e6).toFixed(0), unit: 'µs per request' },
        {
          name: `http.${label} baseline server CPU`,
          value: (baselineCpu * 1e6).toFixed(0),
          unit: 'µs per request',
        },
      );
      const ratio = median(runs.map((x) => x.route.rps / x.baseline.rps));
      rows.push({
        name: `http.${label} vs baseline`,
        value: (100 * ratio).toFixed(0),
        unit: `% of req/s (${size}, ${CONNECTIONS} conn)${goal === null ? '' : `; target ≥ ${goal} %`}`,
      });
      // The same comparison by the server's CPU time per request, which load from other processes on
      // the machine skews far less than throughput.
      rows.push({
        name: `http.${label} vs baseline, by server CPU`,
        value: (100 * median(runs.map((x) => x.baselineCpu / x.routeCpu))).toFixed(0),
        unit: `% (baseline's CPU per request / the route's)${goal === null ? '' : `; target ≥ ${goal} %`}`,
      });
    };
    await compare(
      'availability.slots 30d',
      ready.paths.slots,
      ready.paths.slotsBaseline,
      `${ready.slotCount} slots, ${ready.bytes.slots} B`,
      TARGETS.remembered,
    );
    await compare(
      'availability.next',
      ready.paths.next,
      ready.paths.nextBaseline,
      `${ready.bytes.next} B`,
      null,
    );
    // Another business reading the host under a consent: one access query per request (nothing cached,
    // so a revocation holds at once), the answer itself remembered as for the owner.
    await compare(
      'availability.slots 30d, read under a consent',
      ready.paths.slots,
      ready.paths.slotsBaseline,
      `${ready.slotCount} slots + consent`,
      TARGETS.consent,
      ready.consentToken,
    );
    // The same routes when every request asks something new: the cost of an answer not remembered.
    // Paths are made up front, so that the load generator spends its CPU on sending them.
    // Slots: 40,000 windows, each with a slot range of its own (start moved by quarter hours over ~3
    // weeks, end shortened by quarter hours over ~5 hours: the grid's steps, so no two share an answer),
    // in a scattered order, more than the answers admitted are remembered by (memo.ts).
    const newRanges = (path: string) => {
      const count = 40_000;
      const paths = Array.from({ length: count }, (_, i) => {
        const j = (i * 7919) % count;
        const url = new URL(path, ready.url);
        const from = Date.parse(url.searchParams.get('from')!) + (j % 2000) * 15 * MINUTE;
        const to =
          Date.parse(url.searchParams.get('to')!) +
          (j % 2000) * 15 * MINUTE -
          Math.floor(j / 2000) * 15 * MINUTE;
        url.searchParams.set('from', new Date(from).toISOString());
        url.searchParams.set('to', new Date(to).toISOString());
        return url.pathname + url.search;
      });
      let n = 0;
      return () => paths[n++ % paths.length]!;
    };
    // Next: the instant moves a minute each time.
    const shifted = (path: string) => {
      const paths = Array.from({ length: 20_000 }, (_, i) => {
        const url = new URL(path, ready.url);
        const minutes = (i * 7919) % 20_000;
        url.searchParams.set(
          'after',
          new Date(Date.parse(url.searchParams.get('after')!) + minutes * MINUTE).toISOString(),
        );
        return url.pathname + url.search;
      });
      let n = 0;
      return () => paths[n++ % paths.length]!;
    };
    await compare(
      'availability.slots 30d, a new question each time',
      newRanges(ready.paths.slots),
      ready.paths.slotsBaseline,
      `~${ready.slotCount} slots, ~${ready.bytes.slots} B`,
      TARGETS.newQuestion,
    );
    await compare(
      'availability.next, a new question each time',
      shifted(ready.paths.next),
      ready.paths.nextBaseline,
      `${ready.bytes.next} B`,
      null,
    );
    return rows;
  } finally {
    await stop();
  }
}

if (process.env[CHILD_ENV] === '1') {
  await serveOnTempStore(serveOn);
} else if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await benchAvailability());
}
