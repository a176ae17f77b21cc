import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.js';
import { createPool } from './store.js';
import type { DB } from './types.js';

/** The statements this connection has prepared, as PostgreSQL lists them. */
async function preparedOn(client: pg.PoolClient): Promise<string[]> {
  const { rows } = await client.query<{ statement: string }>(
    'SELECT statement FROM pg_prepared_statements ORDER BY prepare_time, name',
  );
  return rows.map((r) => r.statement);
}

/** Runs `use` on one connection of a fresh pool that names up to `limit` statements. */
async function onConnection(limit: number, use: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const pool = createPool(database.url, 1, limit);
  try {
    const client = await pool.connect();
    try {
      await use(client);
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}

let database: TestDatabase;

describe('named prepared statements (db/prepared.ts)', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('prepares a parameterised statement on its second use on a connection, and answers as before', async () => {
    await onConnection(10, async (client) => {
      const text = 'SELECT $1::int + 1 AS n';
      expect((await client.query(text, [1])).rows).toEqual([{ n: 2 }]);
      expect(await preparedOn(client)).toEqual([]);
      expect((await client.query(text, [2])).rows).toEqual([{ n: 3 }]);
      expect((await client.query(text, [3])).rows).toEqual([{ n: 4 }]);
      expect(await preparedOn(client)).toEqual([text]);
    });
  });

  it('names at most the limit per connection, and leaves texts without parameters (several statements) alone', async () => {
    await onConnection(2, async (client) => {
      for (let i = 0; i < 5; i++) {
        for (let k = 0; k < 2; k++) await client.query(`SELECT $1::int + ${i} AS n`, [k]);
      }
      await client.query('SELECT 1; SELECT 2');
      await client.query('SELECT 1; SELECT 2');
      expect(await preparedOn(client)).toEqual(['SELECT $1::int + 0 AS n', 'SELECT $1::int + 1 AS n']);
      // Beyond the limit a statement still runs, unnamed.
      expect((await client.query('SELECT $1::int + 4 AS n', [1])).rows).toEqual([{ n: 5 }]);
    });
  });

  it('a statement that fails to prepare fails alone; the connection and its other statements go on', async () => {
    await onConnection(10, async (client) => {
      const bad = 'SELECT $1::int FROM no_such_table';
      for (let i = 0; i < 3; i++)
        await expect(client.query(bad, [1])).rejects.toMatchObject({ code: '42P01' });
      const good = 'SELECT $1::text AS s';
      for (const s of ['a', 'b', 'c']) expect((await client.query(good, [s])).rows).toEqual([{ s }]);
      expect(await preparedOn(client)).toEqual([good]);
    });
  });

  it('Kysely queries through the pool use them, inside and outside transactions, rolled back or not', async () => {
    const pool = createPool(database.url, 1, 10);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    try {
      const read = () =>
        db
          .selectFrom('accounts')
          .select('id')
          .where('id', '=', '00000000-0000-0000-0000-000000000000')
          .execute();
      for (let i = 0; i < 3; i++) expect(await read()).toEqual([]);
      await db
        .transaction()
        .execute(async (trx) => {
          expect(
            await trx
              .selectFrom('accounts')
              .select('id')
              .where('id', '=', '00000000-0000-0000-0000-000000000000')
              .execute(),
          ).toEqual([]);
          throw new Error('roll back');
        })
        .catch(() => {});
      // A statement prepared in a rolled-back transaction stays prepared: the next use binds it.
      for (let i = 0; i < 2; i++) expect(await read()).toEqual([]);
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_prepared_statements`.execute(db);
      expect(Number(rows[0]!.n)).toBe(1);
    } finally {
      await db.destroy();
    }
  });

  it('an ON CONFLICT arbiter on a partial index takes its predicate as a literal: a parameter fails once the plan is generic', async () => {
    await onConnection(10, async (client) => {
      await client.query('CREATE TEMP TABLE pairs (a int, status text)');
      await client.query("CREATE UNIQUE INDEX ON pairs (a) WHERE status = 'on'");
      const literal = "INSERT INTO pairs VALUES ($1, 'on') ON CONFLICT (a) WHERE status = 'on' DO NOTHING";
      for (let i = 0; i < 8; i++) await client.query(literal, [i % 2]);
      expect((await client.query('SELECT count(*)::int AS n FROM pairs')).rows).toEqual([{ n: 2 }]);
      // The hazard db/prepared.ts names: PostgreSQL's sixth execution tries a generic plan, which
      // cannot prove `status = $2` matches the index.
      const parameter = 'INSERT INTO pairs VALUES ($1, $2) ON CONFLICT (a) WHERE status = $2 DO NOTHING';
      let failed: unknown = null;
      for (let i = 0; i < 8 && !failed; i++)
        await client.query(parameter, [i % 2, 'on']).catch((e) => (failed = e));
      expect(failed).toMatchObject({ code: '42P10' });
    });
  });

  it('0 turns it off', async () => {
    await onConnection(0, async (client) => {
      for (let i = 0; i < 3; i++) await client.query('SELECT $1::int AS n', [i]);
      expect(await preparedOn(client)).toEqual([]);
    });
  });
});
