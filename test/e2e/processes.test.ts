import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, processAlive } from '../../src/db/embedded.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { CLI, REPO, type ServerProcess, spawnServer } from '../helpers/process.js';
import { waitUntil } from '../helpers/promises.js';

/** `kairos serve --processes 2`: one primary, two worker processes sharing one port. */

/** The worker processes of a primary, from the process list (its other children: PostgreSQL, esbuild). */
function workersOf(primary: number): { pid: number; args: string }[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(primary)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is no such process
  }
  return out
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && m[2]!.includes(`${CLI} serve`))
    .map((m) => ({ pid: Number(m[1]), args: m[2]! }));
}

interface Answer {
  status: number;
  body: string;
}

/**
 * One request on a connection of its own (no keep-alive: the primary hands each new connection to
 * the next worker). With `hold`, the body is sent only once the worker has the request (its 100
 * Continue) and `hold` resolves: a request in flight for as long as the test wants.
 */
function request(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; hold?: (received: () => void) => Promise<void> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = http.request(`${base}${path}`, {
      method,
      agent: false,
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(body !== undefined
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
          : {}),
        ...(opts.hold ? { expect: '100-continue' } : {}),
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    if (opts.hold) {
      const hold = opts.hold;
      req.once('continue', () => {
        void hold(() => {}).then(() => req.end(body));
      });
      req.flushHeaders();
    } else req.end(body);
  });
}

describe('kairos serve --processes 2 on an external store', () => {
  let t: TestApp;
  let s: ServerProcess;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp();
    s = await spawnServer({ DATABASE_URL: t.database.url, KAIROS_MASTER_KEY: t.masterKey }, 45_000, [
      '--processes',
      '2',
    ]);
    key = (await t.account()).key;
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await t?.close();
  });

  it('runs two worker processes that share the port and answer 200 concurrent requests', async () => {
    const workers = workersOf(s.child.pid!);
    expect(workers).toHaveLength(2);
    // The store's URL and master key reach the workers through the environment, not argv.
    for (const w of workers) expect(w.args).not.toMatch(/postgres:|KAIROS_MASTER_KEY/);
    expect(s.output().match(/Kairos is listening/g)).toHaveLength(1);

    const answers = await Promise.all(
      Array.from({ length: 200 }, () => request(s.url, 'GET', '/v1/me', { token: key })),
    );
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    // Both answered: every request line is logged with the pid of the worker that answered it.
    const servedBy = () =>
      new Set(
        [...s.output().matchAll(/"pid":(\d+),"request_id":"[^"]+","method":"GET","route":"\/v1\/me"/g)].map(
          (m) => Number(m[1]),
        ),
      );
    await waitUntil('request logs from both workers', () => servedBy().size === 2, 5000);
    expect([...servedBy()].sort()).toEqual(workers.map((w) => w.pid).sort());
  });

  it('replaces a worker killed with SIGKILL while the other keeps answering', async () => {
    const [victim, survivor] = workersOf(s.child.pid!);
    process.kill(victim!.pid, 'SIGKILL');
    await waitUntil('the primary to notice', () => s.output().includes('exited unexpectedly'), 15_000);
    // While the replacement starts, every request is answered (by the survivor).
    const during = await Promise.all(
      Array.from({ length: 50 }, () => request(s.url, 'GET', '/v1/me', { token: key })),
    );
    expect(during.filter((a) => a.status !== 200)).toEqual([]);
    await waitUntil('the replacement', () => s.output().includes('replacement worker process ready'), 30_000);
    const now = workersOf(s.child.pid!).map((w) => w.pid);
    expect(now).toHaveLength(2);
    expect(now).toContain(survivor!.pid);
    expect(now).not.toContain(victim!.pid);
    const after = await Promise.all(
      Array.from({ length: 50 }, () => request(s.url, 'GET', '/v1/me', { token: key })),
    );
    expect(after.filter((a) => a.status !== 200)).toEqual([]);
  }, 45_000);

  it('on SIGTERM answers the requests in flight, then exits 0 with every worker gone', async () => {
    const workers = workersOf(s.child.pid!).map((w) => w.pid);
    let sigterm!: () => void;
    const signalled = new Promise<void>((resolve) => (sigterm = resolve));
    let received = 0;
    // Ten requests that each worker has begun (headers in, body not yet sent) when SIGTERM arrives.
    const inflight = Array.from({ length: 10 }, (_, i) =>
      request(s.url, 'POST', '/v1/api-keys', {
        token: key,
        body: { name: `in-flight ${i}` },
        hold: async () => {
          received++;
          await signalled;
          // Still in flight a while after the signal (real time): the drain has to wait for it.
          await new Promise((resolve) => setTimeout(resolve, 300));
        },
      }),
    );
    await waitUntil('the workers to hold every request', () => received === 10, 15_000);
    const exited = s.stop('SIGTERM');
    sigterm();
    const answers = await Promise.all(inflight);
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
    expect(await exited).toBe(0);
    for (const pid of workers) expect(processAlive(pid)).toBe(false);
    expect(s.output().match(/"msg":"shutdown complete"/g)?.length).toBe(3); // two workers, the primary
    expect(s.output()).not.toMatch(/"status":5\d\d/);
  });
});

describe('kairos serve --processes 2 on the embedded store', () => {
  const dataDir = join(REPO, '.test-data', `processes-${process.pid}`);
  beforeAll(() => rmSync(dataDir, { recursive: true, force: true }));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts PostgreSQL once in the primary; five worker deaths within ten seconds stop everything (exit 1), PostgreSQL last', async () => {
    const s = await spawnServer({ KAIROS_DATA_DIR: dataDir }, 45_000, ['--processes', '2']);
    try {
      expect(s.output().match(/embedded PostgreSQL started/g)).toHaveLength(1);
      expect(s.output()).toMatch(/"store":"embedded","processes":2.*Kairos is listening/);
      const pidFile = join(dataDir, 'pg', 'postmaster.pid');
      const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
      expect(processAlive(postmaster)).toBe(true);
      expect(workersOf(s.child.pid!)).toHaveLength(2);
      // The workers reach the primary's PostgreSQL.
      const ready = await Promise.all(Array.from({ length: 20 }, () => request(s.url, 'GET', '/readyz')));
      expect(ready.map((a) => a.status)).toEqual(Array(20).fill(200));

      // A crash loop: every worker, and each replacement, killed as soon as it appears.
      const killed = new Set<number>();
      const exited = new Promise<number | null>((resolve) => s.child.once('exit', resolve));
      const killNext = () => {
        const next = workersOf(s.child.pid!).find((w) => !killed.has(w.pid));
        if (next) {
          killed.add(next.pid);
          process.kill(next.pid, 'SIGKILL');
        }
        return killed.size >= 5 || s.child.exitCode !== null;
      };
      await waitUntil('five workers killed, or the primary gone', killNext, 30_000, 10);
      expect(await exited).toBe(1);
      expect(s.output()).toMatch(/5 worker processes died within 10 s: stopping instead of replacing them/);
      for (const pid of killed) expect(processAlive(pid)).toBe(false);
      expect(s.output()).toContain('embedded PostgreSQL stopped');
      expect(processAlive(postmaster)).toBe(false);
      expect(existsSync(pidFile)).toBe(false);
    } finally {
      await s.stop('SIGKILL');
    }
  }, 60_000);
});

describe('npm start', () => {
  const dataDir = join(REPO, '.test-data', `npm-start-${process.pid}`);
  beforeAll(() => rmSync(dataDir, { recursive: true, force: true }));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("stops the server and its embedded PostgreSQL when npm's own process is killed (`npm start &`, then `kill $!`)", async () => {
    const port = await freePort();
    // npm runs the script through `sh -c`, and on SIGTERM signals that shell, not the server under it.
    const npm = spawn('npm', ['start'], {
      cwd: REPO,
      env: { ...process.env, PORT: String(port), KAIROS_DATA_DIR: dataDir, KAIROS_WORKERS: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout.on('data', (c) => (out += c));
    npm.stderr.on('data', (c) => (out += c));
    const pidFile = join(dataDir, 'pg', 'postmaster.pid');
    let postmaster = 0;
    let server = 0;
    try {
      await waitUntil('the server to listen', () => /Kairos is listening/.test(out), 60_000);
      expect((await request(`http://127.0.0.1:${port}`, 'GET', '/healthz')).status).toBe(200);
      postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
      expect(processAlive(postmaster)).toBe(true);
      // The server is the postmaster's parent: killed at the end if the test fails.
      server = Number(execFileSync('ps', ['-o', 'ppid=', '-p', String(postmaster)], { encoding: 'utf8' }));
      npm.kill('SIGTERM');
      const closed = () =>
        request(`http://127.0.0.1:${port}`, 'GET', '/healthz').then(
          () => false,
          () => true,
        );
      await waitUntil('the server to stop answering', closed, 15_000, 50);
      await waitUntil('the embedded PostgreSQL to stop', () => !processAlive(postmaster), 15_000);
      expect(existsSync(pidFile)).toBe(false);
      await waitUntil('the server process to exit', () => !processAlive(server), 5000);
    } finally {
      npm.kill('SIGKILL');
      if (server && processAlive(server)) process.kill(server, 'SIGKILL');
      if (postmaster && processAlive(postmaster)) process.kill(postmaster, 'SIGKILL');
    }
  }, 90_000);
});
