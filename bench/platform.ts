import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { benchDatabase, fmt, load, REPO, type Row, rssMiB, spawnListening } from './lib.js';

/**
 * GET /v1/me with a secret key (auth + rate limit + logging + request id + metrics) beside a bare
 * Fastify route answering a body of the same size, each server in its own process, driven by autocannon
 * at 50 connections from this process. Also the server's RSS after the run.
 */
export async function benchPlatform(): Promise<Row[]> {
  const db = await benchDatabase('platform');
  const masterKey = randomBytes(32).toString('base64');
  const env = {
    DATABASE_URL: db.url,
    KAIROS_MASTER_KEY: masterKey,
    LOG_LEVEL: 'info',
    KAIROS_FROM_SOURCE: 'true',
  };
  const created = JSON.parse(
    execFileSync(
      process.execPath,
      [
        join(REPO, 'bin/kairos.js'),
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
  const key: string = created.api_key.key;
  const kairos = await spawnListening([join(REPO, 'bin/kairos.js'), 'serve'], {
    ...env,
    PORT: '0',
    LOG_LEVEL: 'info',
  });
  const headers = { authorization: `Bearer ${key}` };
  const sample = await (await fetch(`${kairos.url}/v1/me`, { headers })).text();
  const bare = await spawnListening(['--import', 'tsx', join(REPO, 'bench/bare-server.ts')], {
    BARE_BODY: sample,
  });
  try {
    await load(`${kairos.url}/v1/me`, { seconds: 2, headers }); // warm-up
    await load(`${bare.url}/bare`, { seconds: 2 });
    const me = await load(`${kairos.url}/v1/me`, { headers });
    const base = await load(`${bare.url}/bare`);
    const rss = rssMiB(kairos.child.pid!);
    if (me.non2xx > 0) throw new Error(`GET /v1/me answered ${me.non2xx} non-2xx responses`);
    return [
      { name: 'GET /v1/me (secret key), 50 conn', value: fmt(me.rps), unit: 'req/s' },
      { name: 'GET /v1/me p50 / p99', value: `${me.p50} / ${me.p99}`, unit: 'ms' },
      { name: 'bare Fastify route, same body, 50 conn', value: fmt(base.rps), unit: 'req/s' },
      { name: 'bare Fastify p50 / p99', value: `${base.p50} / ${base.p99}`, unit: 'ms' },
      { name: 'GET /v1/me throughput vs bare route', value: fmt((100 * me.rps) / base.rps, 1), unit: '%' },
      { name: 'Kairos server RSS after load', value: fmt(rss), unit: 'MiB' },
    ];
  } finally {
    kairos.child.kill('SIGTERM');
    bare.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await db.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchPlatform());
}
