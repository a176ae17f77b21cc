import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import {
  alternated,
  fmt,
  load,
  median,
  profiling,
  REPO,
  type Row,
  rssMiB,
  serveWithAccount,
  spawnListening,
  statCpuMs,
} from './lib.js';

/** CPU time (user + system, s) a process has used so far (Linux /proc; 0 elsewhere). */
function cpuSeconds(pid: number): number {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8')) / 1000;
  } catch {
    return 0;
  }
}

/** What GET /v1/me should reach, as a share of the bare route's throughput in the same run. */
const TARGET_PERCENT = 60;

/** Alternated rounds (BENCH_ROUNDS, default 7) and each side's seconds in a round. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ROUND_SECONDS = 2;

/**
 * GET /v1/me with a secret key (auth + rate limit + logging + request id + metrics) beside a bare
 * Fastify route answering a body of the same size, each server in its own process, driven by autocannon
 * at 50 connections from this process, in ROUNDS alternated rounds of ROUND_SECONDS each (the first of
 * the pair alternating): each round gives a ratio of rates and of server CPU per request, and the
 * medians are the figures the target is judged on. Single runs a few seconds apart put the bare
 * route's CPU per request at 66.7 and 77.6 µs on one machine (docs/performance.md). Also the server's
 * RSS after the run.
 */
export async function benchPlatform(): Promise<Row[]> {
  const { key, server: kairos, stop } = await serveWithAccount('platform');
  const headers = { authorization: `Bearer ${key}` };
  const sample = await (await fetch(`${kairos.url}/v1/me`, { headers })).text();
  const bare = await spawnListening(['--import', 'tsx', ...profiling(), join(REPO, 'bench/bare-server.ts')], {
    BARE_BODY: sample,
  });
  try {
    await load(`${kairos.url}/v1/me`, { seconds: 2, headers }); // warm-up
    await load(`${bare.url}/bare`, { seconds: 2 });
    /** One side's run: its load and its server's CPU seconds per request. */
    const run = async (side: 'me' | 'bare') => {
      const pid = (side === 'me' ? kairos : bare).child.pid!;
      const c0 = cpuSeconds(pid);
      const r =
        side === 'me'
          ? await load(`${kairos.url}/v1/me`, { headers, seconds: ROUND_SECONDS })
          : await load(`${bare.url}/bare`, { seconds: ROUND_SECONDS });
      return { ...r, cpu: (cpuSeconds(pid) - c0) / r.total };
    };
    const rounds = (
      await alternated(
        ROUNDS,
        () => run('me'),
        () => run('bare'),
      )
    ).map(({ a, b }) => ({ me: a, base: b }));
    const of = (f: (r: (typeof rounds)[number]) => number) => median(rounds.map(f));
    const rateRatios = rounds.map((r) => (100 * r.me.rps) / r.base.rps);
    const cpuRatios = rounds.map((r) => (100 * r.base.cpu) / r.me.cpu);
    const list = (xs: number[]) => xs.map((x) => fmt(x)).join(', ');
    const me = { rps: of((r) => r.me.rps), p50: of((r) => r.me.p50), p99: of((r) => r.me.p99) };
    const base = { rps: of((r) => r.base.rps), p50: of((r) => r.base.p50), p99: of((r) => r.base.p99) };
    const meCpu = of((r) => r.me.cpu);
    const baseCpu = of((r) => r.base.cpu);
    const non2xx = rounds.reduce((n, r) => n + r.me.non2xx, 0);
    const rss = rssMiB(kairos.child.pid!);
    if (non2xx > 0) throw new Error(`GET /v1/me answered ${non2xx} non-2xx responses`);
    return [
      { name: 'GET /v1/me (secret key), 50 conn', value: fmt(me.rps), unit: 'req/s (median of the rounds)' },
      { name: 'GET /v1/me p50 / p99', value: `${me.p50} / ${me.p99}`, unit: 'ms (medians)' },
      { name: 'bare Fastify route, same body, 50 conn', value: fmt(base.rps), unit: 'req/s (median)' },
      { name: 'bare Fastify p50 / p99', value: `${base.p50} / ${base.p99}`, unit: 'ms (medians)' },
      {
        name: `GET /v1/me throughput vs bare route, median of ${ROUNDS} alternated rounds`,
        value: fmt(median(rateRatios), 1),
        unit: `% (rounds: ${list(rateRatios)}; target ≥ ${TARGET_PERCENT} %)`,
      },
      { name: 'GET /v1/me server CPU', value: fmt(meCpu * 1e6, 1), unit: 'µs per request (median)' },
      { name: 'bare Fastify server CPU', value: fmt(baseCpu * 1e6, 1), unit: 'µs per request (median)' },
      {
        // Load from other processes on the machine skews this far less than throughput.
        name: `GET /v1/me vs bare route, by server CPU per request, median of ${ROUNDS} rounds`,
        value: fmt(median(cpuRatios), 1),
        unit: `% (rounds: ${list(cpuRatios)}; target ≥ ${TARGET_PERCENT} %)`,
      },
      { name: 'Kairos server RSS after load', value: fmt(rss), unit: 'MiB' },
    ];
  } finally {
    bare.child.kill('SIGTERM');
    await stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchPlatform());
}
