/**
 * `kairos serve` on a store with no account logs one console setup link (README.md, Console), also
 * with `--processes 2` (once, not once per worker), and the link it logs is live on that server;
 * once the server has an account, a restart logs none. `/console/` leads to `/console`.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { type ServerProcess, spawnServer } from '../helpers/process.js';

let db: TestDatabase | undefined;
let server: ServerProcess | undefined;
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

describe('kairos serve with no account', () => {
  it('logs one setup link (two worker processes) that works on the server, and none once an account exists', {
    timeout: 90_000,
  }, async () => {
    db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url,
      KAIROS_MASTER_KEY: randomBytes(32).toString('base64'),
      KAIROS_BASE_URL: 'http://console.example',
    };
    server = await spawnServer(env, 45_000, ['--processes', '2']);
    const running = server;
    await expect.poll(() => running.output(), { timeout: 10_000 }).toContain('/console/setup?token=');
    // Both workers have started their modules once the primary says it listens: a second link would be there.
    expect(running.output().match(/No account yet: open/g)).toHaveLength(1);
    const links = [
      ...running.output().matchAll(/http:\/\/console\.example\/console\/setup\?token=([A-Za-z0-9_-]+)/g),
    ];
    expect(new Set(links.map((m) => m[1])).size).toBe(1);
    const token = links[0]?.[1] ?? '';
    const state = (await (await fetch(`${running.url}/console/setup/state?token=${token}`)).json()) as {
      state: string;
    };
    expect(state.state).toBe('valid');
    const slash = await fetch(`${running.url}/console/`, { redirect: 'manual' });
    expect(slash.status).toBe(308);
    expect(slash.headers.get('location')).toBe('/console');

    const done = await fetch(`${running.url}/console/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://console.example' },
      body: JSON.stringify({
        token,
        account_name: 'Served',
        email: 'owner@served.example',
        password: 'correct horse battery staple',
      }),
    });
    expect(done.status).toBe(201);
    const body = (await done.json()) as { api_key: { key: string } };
    expect(body.api_key.key).toMatch(/^svc_sk_/);
    await running.stop();

    server = await spawnServer(env, 45_000);
    const again = await fetch(`${server.url}/v1/me`, {
      headers: { authorization: `Bearer ${body.api_key.key}` },
    });
    expect(again.status).toBe(200);
    expect(server.output()).not.toContain('/console/setup?token=');
  });
});
