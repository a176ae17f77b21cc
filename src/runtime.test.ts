import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../test/helpers/app.js';
import { waitUntil } from '../test/helpers/promises.js';
import { loadConfig } from './config.js';
import { startRuntime } from './runtime.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function connections(): Promise<number> {
  const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND query ILIKE 'LISTEN%'`.execute(t.ctx.db);
  return r.rows[0]?.n ?? 0;
}

describe('the runtime', () => {
  it('a start that fails half-way (the port is taken) leaves no LISTEN connection behind', async () => {
    const before = await connections();
    const port = Number(new URL(t.url).port);
    const config = {
      ...loadConfig({ DATABASE_URL: t.database.url, KAIROS_MASTER_KEY: t.masterKey, LOG_LEVEL: 'silent' }),
      port,
      host: '127.0.0.1',
    };
    await expect(
      startRuntime({
        config,
        log: { info() {}, warn() {}, error() {} },
        store: { db: t.ctx.db, pool: t.ctx.pool, url: t.database.url, masterKey: t.masterKey },
        workers: false,
        usage: false,
        listen: true,
      }),
    ).rejects.toThrow(/EADDRINUSE/);
    // The LISTEN connection was ended before the start failed; its server process leaves the
    // activity view as it exits, a moment later.
    await waitUntil(
      'the LISTEN connection of the failed start to be gone',
      async () => (await connections()) === before,
    );
    expect(await connections()).toBe(before);
  });
});
