/**
 * Starts the real PgBouncer (Debian package `pgbouncer`) in transaction mode in front of a test
 * PostgreSQL server, as docs/operations.md's reference deployment has it: 127.0.0.1 on a free port,
 * every database passed through under its own name, the server login from an auth file. PgBouncer
 * refuses to run as root, so under root it runs as the `postgres` user.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/db/embedded.js';
import { waitUntil } from './promises.js';

export const PGBOUNCER_INSTALL_HINT =
  'PgBouncer is required for the pooler tests but was not found. Install it with ' +
  '`sudo apt-get install -y pgbouncer` (Debian/Ubuntu), or set PGBOUNCER_BIN to its path.';

export interface PgBouncer {
  /** `url` with PgBouncer's host and port in place of the server's (same user, password, database). */
  through(url: string): string;
  stop(): Promise<void>;
}

function findPgBouncer(): string | null {
  if (process.env.PGBOUNCER_BIN) return process.env.PGBOUNCER_BIN;
  for (const candidate of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']) {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // not there
    }
  }
  return null;
}

let warned = false;

/**
 * Whether the pooler tests can run. Without PgBouncer (a fresh clone with only `npm ci`) they are
 * skipped with one line saying why; with KAIROS_REQUIRE_PGBOUNCER=1 (set by `.ci/run`, which installs
 * it) its absence fails instead, so CI always runs them.
 */
export function pgBouncerAvailable(): boolean {
  if (findPgBouncer()) return true;
  if (process.env.KAIROS_REQUIRE_PGBOUNCER === '1') throw new Error(PGBOUNCER_INSTALL_HINT);
  if (!warned) {
    warned = true;
    console.warn(`skipping the tests through PgBouncer: ${PGBOUNCER_INSTALL_HINT}`);
  }
  return false;
}

/** PgBouncer in transaction mode in front of the server `serverUrl` names (its host, port and login). */
export async function startPgBouncer(serverUrl: string): Promise<PgBouncer> {
  const bin = findPgBouncer();
  if (!bin) throw new Error(PGBOUNCER_INSTALL_HINT);
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username);
  const password = decodeURIComponent(server.password);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'kairos-pgbouncer-'));
  chmodSync(dir, 0o755);
  const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
  writeFileSync(join(dir, 'users.txt'), `${quote(user)} ${quote(password)}\n`, { mode: 0o644 });
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // Clients are the tests' own processes on loopback; PgBouncer logs in to the server with the
      // password in the auth file.
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      // As many server connections as the two processes' pools hold (2 × DATABASE_POOL_MAX 10), and
      // no more: fewer starved a booking race (a transaction that waits for a second pooled
      // connection holds its own), more took the shared test server (max_connections 100 on the
      // machine's) past its limit with other files running. A client that cannot get one within 20 s
      // is refused instead of waiting on.
      'default_pool_size = 20',
      'max_db_connections = 20',
      'query_wait_timeout = 20',
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child = spawn(
    asRoot ? 'runuser' : bin,
    asRoot ? ['-u', 'postgres', '--', bin, join(dir, 'pgbouncer.ini')] : [join(dir, 'pgbouncer.ini')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (c) => (out += c));
  child.stderr?.on('data', (c) => (out += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Listening once a connection is accepted.
  const listening = async () => {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}: ${out}`);
    return new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
  };
  await waitUntil('pgbouncer to listen', listening, 10_000, 50).catch((err: Error) => {
    throw child.exitCode !== null ? err : new Error(`${err.message}: ${out}`);
  });
  return {
    through(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM'); // runuser passes it on; PgBouncer then exits at once
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
