import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { fmt, load, REPO, type Row, rssMiB, serveWithAccount, spawnListening, statCpuMs } from './lib.js';

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

/**
 * GET /v1/me with a secret key (auth + rate limit + logging + request id + metrics) beside a bare
 * Fastify route answering a body of the same size, each server in its own process, driven by autocannon
 * at 50 connections from this process. Also the server's RSS after the run.
 */
export async function benchPlatform(): Promise<Row[]> {
  const { key, server: kairos, stop } = await serveWithAccount('platform');
  const headers = { authorization: `Bearer ${key}` };
  const sample = await (await fetch(`${kairos.url}/v1/me`, { headers })).text();
  const bare = await spawnListening(['--import', 'tsx', join(REPO, 'bench/bare-server.ts')], {
    BARE_BODY: sample,
  });
  try {
    await load(`${kairos.url}/v1/me`, { seconds: 2, headers }); // warm-up
    await load(`${bare.url}/bare`, { seconds: 2 });
    const k0 = cpuSeconds(kairos.child.pid!);
    const me = await load(`${kairos.url}/v1/me`, { headers });
    const meCpu = (cpuSeconds(kairos.child.pid!) - k0) / me.total;
    const b0 = cpuSeconds(bare.child.pid!);
    const base = await load(`${bare.url}/bare`);
    const baseCpu = (cpuSeconds(bare.child.pid!) - b0) / base.total;
    const rss = rssMiB(kairos.child.pid!);
    if (me.non2xx > 0) throw new Error(`GET /v1/me answered ${me.non2xx} non-2xx responses`);
    return [
      { name: 'GET /v1/me (secret key), 50 conn', value: fmt(me.rps), unit: 'req/s' },
      { name: 'GET /v1/me p50 / p99', value: `${me.p50} / ${me.p99}`, unit: 'ms' },
      { name: 'bare Fastify route, same body, 50 conn', value: fmt(base.rps), unit: 'req/s' },
      { name: 'bare Fastify p50 / p99', value: `${base.p50} / ${base.p99}`, unit: 'ms' },
      {
        name: 'GET /v1/me throughput vs bare route',
        value: fmt((100 * me.rps) / base.rps, 1),
        unit: `% (target ≥ ${TARGET_PERCENT} %)`,
      },
      { name: 'GET /v1/me server CPU', value: fmt(meCpu * 1e6, 1), unit: 'µs per request' },
      { name: 'bare Fastify server CPU', value: fmt(baseCpu * 1e6, 1), unit: 'µs per request' },
      {
        // Load from other processes on the machine skews this far less than throughput.
        name: 'GET /v1/me vs bare route, by server CPU per request',
        value: fmt((100 * baseCpu) / meCpu, 1),
        unit: `% (target ≥ ${TARGET_PERCENT} %)`,
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
