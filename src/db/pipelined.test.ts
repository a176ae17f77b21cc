import { Kysely, sql } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.js';
import { finalWrite, PipelinedPostgresDialect } from './pipelined.js';
import { createPool } from './store.js';

interface T {
  items: { id: number; note: string };
}

let database: TestDatabase;
let pool: pg.Pool;
let db: Kysely<T>;
/** What each pooled connection was asked and answered, in order ('>' issued, '<' answered). */
let wire: string[] = [];

const word = (text: string) => text.trim().split(/\s+/)[0]!.toLowerCase();

const insert = (id: number, note = 'x') =>
  sql`INSERT INTO items (id, note) VALUES (${id}, ${note})`.compile(db);
const ids = async () =>
  (await sql<{ id: number }>`SELECT id FROM items ORDER BY id`.execute(db)).rows.map((r) => r.id);

describe('pipelined transactions (db/pipelined.ts)', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = createPool(database.url, 2);
    pool.on('connect', (client) => {
      const query = client.query as (...args: unknown[]) => Promise<unknown>;
      (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
        wire.push(`>${word(text)}`);
        const answer = query.apply(client, args);
        answer.then(
          () => wire.push(`<${word(text)}`),
          () => wire.push(`<${word(text)}!`),
        );
        return answer;
      };
    });
    db = new Kysely<T>({ dialect: new PipelinedPostgresDialect({ pool }) });
    await sql`CREATE TABLE items (id int PRIMARY KEY, note text NOT NULL)`.execute(db);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });
  beforeEach(async () => {
    await sql`TRUNCATE items`.execute(db);
    wire = [];
  });

  it('writes the first statement behind BEGIN before BEGIN is answered, and the rest as before', async () => {
    await db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(1));
      await trx.executeQuery(insert(2));
    });
    expect(wire).toEqual([
      '>begin',
      '>insert',
      '<begin',
      '<insert',
      '>insert',
      '<insert',
      '>commit',
      '<commit',
    ]);
    expect(await ids()).toEqual([1, 2]);
  });

  it('sends COMMIT behind the final write before it is answered, and the transaction commits once', async () => {
    const txids = await db.transaction().execute(async (trx) => {
      const first = await sql<{ t: string }>`SELECT txid_current()::text AS t`.execute(trx);
      await trx.executeQuery(insert(1));
      await trx.executeQuery(finalWrite(insert(2)));
      return first.rows[0]!.t;
    });
    expect(wire.slice(-4)).toEqual(['>insert', '>commit', '<insert', '<commit']);
    expect(await ids()).toEqual([1, 2]);
    // Both writes were one transaction: the one txid_current() named.
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM items WHERE xmin::text = ${txids}`.execute(db);
    expect(rows[0]!.n).toBe(2);
  });

  it('a final write that fails rolls the whole transaction back, and its error is what the transaction throws', async () => {
    await db.executeQuery(insert(2));
    const failed = db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(1));
      await trx.executeQuery(finalWrite(insert(2))); // 23505: 2 exists
    });
    await expect(failed).rejects.toMatchObject({ code: '23505' });
    expect(await ids()).toEqual([2]);
    // The connection goes on: the next transaction on it commits.
    await db.transaction().execute(async (trx) => {
      await trx.executeQuery(finalWrite(insert(3)));
    });
    expect(await ids()).toEqual([2, 3]);
  });

  it('a caller that swallows its final write’s error still gets a failed transaction, with nothing written', async () => {
    await db.executeQuery(insert(2));
    const swallowed = db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(1));
      await trx.executeQuery(finalWrite(insert(2))).catch(() => {});
      return 'done';
    });
    await expect(swallowed).rejects.toThrow('the transaction was rolled back: its final write failed');
    expect(await ids()).toEqual([2]);
  });

  it('refuses a statement after the final write: it would run outside the transaction', async () => {
    const after = db.transaction().execute(async (trx) => {
      await trx.executeQuery(finalWrite(insert(1)));
      await trx.executeQuery(insert(2));
    });
    await expect(after).rejects.toThrow('a statement was issued after its transaction’s final write');
    // The final write's transaction had committed; nothing ran after it.
    expect(await ids()).toEqual([1]);
  });

  it('outside a transaction a final write is an ordinary statement: no COMMIT goes with it', async () => {
    await db.executeQuery(finalWrite(insert(1)));
    expect(wire).toEqual(['>insert', '<insert']);
    await db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(2));
    });
    expect(await ids()).toEqual([1, 2]);
  });

  it('a transaction that fails before its first statement rolls back behind its unanswered BEGIN', async () => {
    const failed = db.transaction().execute(async () => {
      throw new Error('before any statement');
    });
    await expect(failed).rejects.toThrow('before any statement');
    expect(wire).toEqual(['>begin', '>rollback', '<begin', '<rollback']);
    await db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(1));
    });
    expect(await ids()).toEqual([1]);
  });

  it('a statement of the transaction that fails rolls it back as before', async () => {
    const failed = db.transaction().execute(async (trx) => {
      await trx.executeQuery(insert(1));
      await trx.executeQuery(insert(1));
    });
    await expect(failed).rejects.toMatchObject({ code: '23505' });
    expect(wire.slice(-2)).toEqual(['>rollback', '<rollback']);
    expect(await ids()).toEqual([]);
  });

  it('a connection lost in its first statement fails the transaction, and the pool goes on without it', async () => {
    const failed = db.transaction().execute(async (trx) => {
      await sql`SELECT pg_terminate_backend(pg_backend_pid())`.execute(trx);
    });
    await expect(failed).rejects.toBeTruthy();
    // The pool drops the dead client: the next transactions run on live ones.
    for (let i = 1; i <= 3; i++) {
      await db.transaction().execute(async (trx) => {
        await trx.executeQuery(finalWrite(insert(i)));
      });
    }
    expect(await ids()).toEqual([1, 2, 3]);
  });
});
