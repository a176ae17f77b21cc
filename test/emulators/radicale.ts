/**
 * Starts the real Radicale CalDAV server (Debian package `radicale`) for tests: 127.0.0.1, a port
 * the OS picks (read back from Radicale's "Listening on" log line, so there is no port race), a temp
 * storage folder, htpasswd auth with one plain-text user, owner-only rights.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const RADICALE_INSTALL_HINT =
  'Radicale is required for the CalDAV tests but was not found on PATH. Install it with ' +
  '`sudo apt-get install -y radicale` (Debian/Ubuntu) or `python3 -m pip install radicale`, ' +
  'or set RADICALE_BIN to its path.';

export interface RadicaleServer {
  /** Base URL, no trailing slash, e.g. http://127.0.0.1:38505 */
  url: string;
  username: string;
  password: string;
  /** Absolute URL of the user's principal/home collection (`/<username>/`). */
  homeUrl: string;
  /**
   * Stores an event; the calendar collection is created first (MKCALENDAR) when needed.
   * `calendarPath` is relative to the user's home (`work` → /<user>/work/), or absolute (`/alice/x/`).
   * Returns the calendar collection URL.
   */
  putEvent(calendarPath: string, uid: string, icsText: string): Promise<string>;
  /** Creates a calendar collection (idempotent) and returns its URL. */
  makeCalendar(calendarPath: string, displayName?: string): Promise<string>;
  stop(): Promise<void>;
}

function findRadicale(): string {
  const fromEnv = process.env.RADICALE_BIN;
  if (fromEnv) return fromEnv;
  try {
    return execFileSync('sh', ['-c', 'command -v radicale'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(RADICALE_INSTALL_HINT);
  }
}

/**
 * Whether the tests that need Radicale can run. On a machine without it (a fresh clone with only
 * `npm ci`) they are skipped, with one line saying why; with KAIROS_REQUIRE_RADICALE=1 (set by
 * `.ci/run`, which installs it) its absence is a failure instead, so CI always runs them.
 */
export function radicaleAvailable(): boolean {
  try {
    findRadicale();
    return true;
  } catch {
    if (process.env.KAIROS_REQUIRE_RADICALE === '1') throw new Error(RADICALE_INSTALL_HINT);
    if (!warned) {
      warned = true;
      console.warn(
        `skipping the CalDAV tests that need a real server: radicale not found (${RADICALE_INSTALL_HINT})`,
      );
    }
    return false;
  }
}
let warned = false;

export async function startRadicale(
  opts: { username?: string; password?: string; startTimeoutMs?: number } = {},
): Promise<RadicaleServer> {
  const bin = findRadicale();
  if (!bin) throw new Error(RADICALE_INSTALL_HINT);
  const username = opts.username ?? 'alice';
  const password = opts.password ?? 'wonderland-secret';
  const dir = mkdtempSync(join(tmpdir(), 'kairos-radicale-'));
  const users = join(dir, 'users');
  const config = join(dir, 'config');
  // Radicale 3.1 supports plain, md5 and bcrypt htpasswd entries; plain needs no hashing library.
  writeFileSync(users, `${username}:${password}\n`, { mode: 0o600 });
  writeFileSync(
    config,
    [
      '[server]',
      'hosts = 127.0.0.1:0',
      '[auth]',
      'type = htpasswd',
      `htpasswd_filename = ${users}`,
      'htpasswd_encryption = plain',
      'delay = 0',
      '[rights]',
      'type = owner_only',
      '[storage]',
      `filesystem_folder = ${join(dir, 'collections')}`,
      '[web]',
      'type = none',
      '[logging]',
      'level = info',
      'mask_passwords = True',
      '',
    ].join('\n'),
  );

  // Only our config file: the system one (/etc/radicale/config) would switch auth to remote_user.
  const child = spawn(bin, ['--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  let log = '';
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`radicale did not start within the timeout; log:\n${log}`)),
        opts.startTimeoutMs ?? 15_000,
      );
      let found: number | undefined;
      const onData = (buf: Buffer): void => {
        log += buf.toString('utf8');
        const m = /Listening on '?\[?127\.0\.0\.1\]?:(\d+)/.exec(log);
        if (m) found = Number(m[1]);
        if (found !== undefined && /Radicale server ready/.test(log)) {
          clearTimeout(timer);
          resolve(found);
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject((err as NodeJS.ErrnoException).code === 'ENOENT' ? new Error(RADICALE_INSTALL_HINT) : err);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`radicale exited with code ${code} before it was ready; log:\n${log}`));
      });
    });
  } catch (err) {
    child.kill('SIGKILL');
    process.removeListener('exit', killOnExit);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const url = `http://127.0.0.1:${port}`;
  const auth = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const made = new Set<string>();

  const collectionUrl = (calendarPath: string): string => {
    const path = calendarPath.startsWith('/') ? calendarPath : `/${username}/${calendarPath}`;
    return `${url}${path.endsWith('/') ? path : `${path}/`}`;
  };

  const makeCalendar = async (calendarPath: string, displayName?: string): Promise<string> => {
    const target = collectionUrl(calendarPath);
    if (made.has(target)) return target;
    const name = (displayName ?? calendarPath).replace(/[<&>]/g, '');
    const res = await fetch(target, {
      method: 'MKCALENDAR',
      headers: { authorization: auth, 'content-type': 'application/xml; charset=utf-8' },
      body:
        '<?xml version="1.0" encoding="utf-8"?>' +
        '<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>' +
        `<D:displayname>${name}</D:displayname>` +
        '<C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set>' +
        '</D:prop></D:set></C:mkcalendar>',
    });
    await res.body?.cancel();
    // 405/409: it already exists (created by an earlier run of this server).
    if (!res.ok && res.status !== 405 && res.status !== 409) {
      throw new Error(`MKCALENDAR ${target} answered ${res.status}`);
    }
    made.add(target);
    return target;
  };

  return {
    url,
    username,
    password,
    homeUrl: `${url}/${username}/`,
    makeCalendar,
    async putEvent(calendarPath, uid, icsText) {
      const calendar = await makeCalendar(calendarPath);
      const res = await fetch(`${calendar}${encodeURIComponent(uid)}.ics`, {
        method: 'PUT',
        headers: { authorization: auth, 'content-type': 'text/calendar; charset=utf-8' },
        body: icsText.replace(/\r?\n/g, '\r\n'),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`PUT event ${uid} answered ${res.status}: ${text}`);
      return calendar;
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
