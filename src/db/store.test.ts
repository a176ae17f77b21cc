import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.js';
import { type PgBouncer, pgBouncerAvailable, startPgBouncer } from '../../test/helpers/pgbouncer.js';
import { generateMasterKey, loadConfig } from '../config.js';
import { afterTransaction, createDb, createPool, type Db, openStore, withTransaction } from './store.js';

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

describe('withTransaction: what runs once its transaction has ended (afterTransaction)', () => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(createPool(database.url, 2));
    await sql`CREATE TABLE after_tx (n int)`.execute(db);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  /** The rows of after_tx, read outside any transaction. */
  const committedRows = async () => (await sql<{ n: number }>`SELECT n FROM after_tx`.execute(db)).rows;

  it('runs `committed` after the COMMIT (its writes visible to others), `abandoned` after a rollback', async () => {
    const seen: string[] = [];
    let visibleAtCommitted: unknown;
    await withTransaction(db, async (trx) => {
      await sql`INSERT INTO after_tx VALUES (1)`.execute(trx);
      expect(
        afterTransaction(trx, {
          committed: () => {
            seen.push('committed');
            visibleAtCommitted = committedRows();
          },
          abandoned: () => seen.push('abandoned'),
        }),
      ).toBe(true);
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual(['committed']);
    expect(await visibleAtCommitted).toEqual([{ n: 1 }]);

    await expect(
      withTransaction(db, async (trx) => {
        await sql`INSERT INTO after_tx VALUES (2)`.execute(trx);
        afterTransaction(trx, {
          committed: () => seen.push('committed'),
          abandoned: () => seen.push('abandoned'),
        });
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(seen).toEqual(['committed', 'abandoned']);
    expect(await committedRows()).toEqual([{ n: 1 }]);
  });

  it('answers false, registering nothing, for a transaction begun otherwise', async () => {
    let ran = false;
    await db.transaction().execute(async (trx) => {
      expect(afterTransaction(trx, { committed: () => (ran = true), abandoned: () => (ran = true) })).toBe(
        false,
      );
    });
    expect(ran).toBe(false);
  });
});
