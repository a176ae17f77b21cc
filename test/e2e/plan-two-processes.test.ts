/**
 * `kairos accounts update --plan` run as its own process while two `kairos serve` processes share the
 * database (docs/design.md#credentials): both servers meter the account's next requests with
 * the new limit within moments (the NOTIFY the CLI's change commits), not a minute later.
 */
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { callServer, runCli, type ServerProcess, useTwoServers } from '../helpers/process.js';
import { waitUntil } from '../helpers/promises.js';

let t: TestApp;
let a: ServerProcess;
let b: ServerProcess;
useTwoServers((s) => ({ t, a, b } = s));

async function limitOf(base: string, token: string): Promise<string | null> {
  const res = await callServer(base, 'GET', '/v1/me', token);
  expect(res.status).toBe(200);
  return res.headers.get('x-ratelimit-limit');
}

describe('a plan change from the CLI', () => {
  it('reaches both running servers within two seconds', async () => {
    const acc = await t.account({ plan: 'free' });
    expect(await limitOf(a.url, acc.key)).toBe('100');
    expect(await limitOf(b.url, acc.key)).toBe('100');
    const cli = await runCli(['accounts', 'update', acc.id, '--plan', 'premium', '--json'], {
      DATABASE_URL: t.database.url,
      KAIROS_MASTER_KEY: t.masterKey,
    });
    expect(cli.code, cli.stderr).toBe(0);
    const changedAt = Date.now();
    for (const server of [a, b]) {
      let seen: string | null = null;
      const changed = async () => {
        seen = await limitOf(server.url, acc.key);
        return seen === '1000';
      };
      // The two seconds are the bound under test, counted from the change for both servers.
      const left = Math.max(0, changedAt + 2_000 - Date.now());
      await waitUntil('the new limit', changed, left, 25).catch(() => undefined);
      expect(seen).toBe('1000');
    }
  }, 60_000);
});
