import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { startTestApp, type TestApp } from './app.js';
import { type PgBouncer, startPgBouncer } from './pgbouncer.js';

export const REPO = join(import.meta.dirname, '..', '..');
/** The `kairos` command as installed: the loader that runs the build when present, else the sources. */
export const BIN = join(REPO, 'bin', 'kairos.js');
/**
 * The `kairos` command the tests run: the run's build of the sources (test/helpers/build.ts), which
 * starts without tsx's per-module transform. `BIN` is the same CLI through its loader.
 */
export const CLI = inject('kairosEntry');

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs `kairos serve` as a separate OS process (the run's build of the sources) and waits until it
 * listens; `args` go after `serve` (e.g. `--processes 2`).
 */
export async function spawnServer(
  env: Record<string, string>,
  timeoutMs = 30_000,
  args: readonly string[] = [],
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      // Debug adds only the start's phases: a server that does not start shows the last one it passed.
      LOG_LEVEL: 'debug',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running: a server that did not start in time would outlive the test run.
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      // A JSON line (`"url":"…"` before the message) or a line for people (KAIROS_LOG_FORMAT=pretty:
      // the message, then `url=…`).
      const m =
        /"url":"(http:\/\/127\.0\.0\.1:\d+)".*Kairos is listening/.exec(out) ??
        /Kairos is listening.*\burl=(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    child,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}

/** Runs the CLI (`entry`: the run's build, or BIN) to completion. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  stdin?: string,
  entry: string = CLI,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [entry, ...args], {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.stdin.end(stdin ?? '');
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Two `kairos serve` processes sharing one fresh test database (with its in-process app `t`, for
 * accounts and direct reads), as in a horizontally scaled deployment. `stop` ends all three.
 *
 * With KAIROS_TEST_POOLER=pgbouncer (CI's PostgreSQL pass sets it) the two processes reach the
 * database through PgBouncer in transaction mode, as docs/operations.md's reference deployment does:
 * DATABASE_URL names PgBouncer, DATABASE_LISTEN_URL the server itself, and no statement is prepared by
 * name (PgBouncer before 1.21 cannot keep them).
 */
export async function startTwoServers(
  extraEnv: Record<string, string> = {},
  opts: { pooler?: 'pgbouncer' | 'none' } = {},
): Promise<{
  t: TestApp;
  a: ServerProcess;
  b: ServerProcess;
  stop(): Promise<void>;
}> {
  const t = await startTestApp();
  let bouncer: PgBouncer | null = null;
  let env: Record<string, string> = {
    ...extraEnv,
    DATABASE_URL: t.database.url,
    KAIROS_MASTER_KEY: t.masterKey,
  };
  const pooler = opts.pooler ?? (process.env.KAIROS_TEST_POOLER === 'pgbouncer' ? 'pgbouncer' : 'none');
  if (pooler === 'pgbouncer') {
    bouncer = await startPgBouncer(t.database.url);
    env = {
      ...env,
      DATABASE_URL: bouncer.through(t.database.url),
      DATABASE_LISTEN_URL: t.database.url,
      DATABASE_PREPARED_STATEMENTS: '0',
    };
  }
  let a: ServerProcess;
  let b: ServerProcess;
  try {
    [a, b] = await spawnTwo(env);
  } catch (err) {
    // A server that did not start leaves nothing running: the other one, PgBouncer, the test app.
    await bouncer?.stop();
    await t.close();
    throw err;
  }
  const stop = async () => {
    await Promise.all([a.stop(), b.stop()]);
    await bouncer?.stop();
    await t.close();
  };
  return { t, a, b, stop };
}

/**
 * Two `kairos serve` processes on `env`, started at the same moment. When one does not start, the
 * other is stopped and the first start error thrown: nothing is left running.
 */
export async function spawnTwo(env: Record<string, string>): Promise<[ServerProcess, ServerProcess]> {
  const started = await Promise.allSettled([spawnServer(env), spawnServer(env)]);
  const [a, b] = started.map((s) => (s.status === 'fulfilled' ? s.value : null));
  if (!a || !b) {
    await Promise.all([a?.stop(), b?.stop()]);
    throw (started.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason;
  }
  return [a, b];
}

/** What `startTwoServers` answers, without `stop`. */
export interface TwoServers {
  t: TestApp;
  a: ServerProcess;
  b: ServerProcess;
}

/**
 * The two-process set-up of a test file: a beforeAll that starts two servers (`startTwoServers`) and
 * hands them to `started` (which sets the file's `t`, `a`, `b`), and an afterAll that stops them.
 * `env` may be a function, called in the beforeAll, for addresses of what an earlier beforeAll started
 * (hooks run in order, afterAll in reverse: the servers stop before what was started before them).
 * `skip`: start nothing (a file whose tests are skipped on this machine).
 */
export function useTwoServers(
  started: (servers: TwoServers) => void,
  env: Record<string, string> | (() => Record<string, string>) = {},
  opts: { pooler?: 'pgbouncer' | 'none'; skip?: boolean } = {},
): void {
  let stop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    if (opts.skip) return;
    const servers = await startTwoServers(typeof env === 'function' ? env() : env, opts);
    stop = servers.stop;
    started(servers);
  }, 60_000);
  afterAll(async () => {
    await stop?.();
  });
}

/** A JSON request to a server process, with an optional bearer token (the two-process suites). */
export function callServer(
  base: string,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
}
