import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.js';
import { type PgBouncer, pgBouncerAvailable, startPgBouncer } from '../../test/helpers/pgbouncer.js';
import { generateMasterKey, loadConfig } from '../config.js';
import { openStore } from './store.js';

const quiet = { info: () => {}, warn: () => {} };

/** Advisory locks held on `url`'s database, by any session. */
async function advisoryLocks(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
       WHERE l.locktype = 'advisory' AND d.datname = current_database()`,
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

describe.runIf(pgBouncerAvailable())('migrations behind PgBouncer in transaction mode', () => {
  let database: TestDatabase;
  let bouncer: PgBouncer;
  beforeAll(async () => {
    database = await createTestDatabase();
    bouncer = await startPgBouncer(database.url);
  });
  afterAll(async () => {
    await bouncer?.stop();
    await database?.drop();
  });

  it('starts that run at once leave the migration lock held by no server connection, so the next start does not wait', async () => {
    const config = loadConfig({
      DATABASE_URL: bouncer.through(database.url),
      DATABASE_LISTEN_URL: database.url,
      DATABASE_PREPARED_STATEMENTS: '0',
      KAIROS_MASTER_KEY: generateMasterKey(),
    });
    for (let round = 0; round < 3; round++) {
      const stores = await Promise.all(Array.from({ length: 6 }, () => openStore(config, quiet)));
      await Promise.all(stores.map((s) => s.close()));
      // PgBouncer keeps its server connections open: a lock one of them still held would stay.
      expect(await advisoryLocks(database.url)).toBe(0);
    }
    const began = Date.now();
    const direct = await openStore(
      loadConfig({ DATABASE_URL: database.url, KAIROS_MASTER_KEY: generateMasterKey() }),
      quiet,
    );
    await direct.close();
    expect(Date.now() - began).toBeLessThan(5_000);
  }, 30_000);
});
