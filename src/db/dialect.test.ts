import type { Socket } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.js';
import { waitUntil } from '../../test/helpers/promises.js';
import { createDb, createPool, type Db } from './store.js';

const CHANNEL = 'kairos_dialect_test';

/** Runs `fn` with the notifications on CHANNEL, as a connection of its own hears them meanwhile. */
async function listening(fn: (heard: string[]) => Promise<void>): Promise<void> {
  const listener = new pg.Client({ connectionString: database.url });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(n.payload ?? ''));
  try {
    await listener.query(`LISTEN ${CHANNEL}`);
    await fn(heard);
  } finally {
    await listener.end();
  }
}

/** A notification sent straight (pg_notify, no transaction of the test's) to close what a test hears. */
const MARKER = 'marker';

/**
 * Waits until `heard` holds `n` notifications, then until a marker sent after them is heard too: a
 * listener hears notifications in commit order, so any extra one is in `heard` by then. The marker
 * itself is taken out again.
 */
async function settle(heard: string[], n: number): Promise<void> {
  await waitUntil(`${n} notifications`, () => heard.length >= n, 1_000, 10);
  await sql`SELECT pg_notify(${CHANNEL}, ${MARKER})`.execute(db);
  await waitUntil('the marker notification', () => heard.includes(MARKER), 1_000, 10);
  heard.splice(heard.indexOf(MARKER), 1);
}

const notify = (db: Db, payload: string) => sql`SELECT kairos_notify(${CHANNEL}, ${payload})`.execute(db);

let database: TestDatabase;
let pool: pg.Pool;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 1);
  db = createDb(pool);
});

afterAll(async () => {
  await db.destroy();
  await database.drop();
});

describe('the app dialect: notifications sent after commit, in the COMMIT message', () => {
  it('notes a transaction’s notifications instead of sending them, then sends each once after the commit', async () => {
    await listening(async (heard) => {
      await db.transaction().execute(async (trx) => {
        await notify(trx, 'a');
        await notify(trx, 'b');
        await notify(trx, 'a');
        // Noted in the session, not sent: the transaction holds no NOTIFY of its own at its commit.
        const { rows } = await sql<{ pending: string }>`
          SELECT current_setting('kairos.pending_notify') AS pending`.execute(trx);
        expect(rows[0]!.pending.split('\x1e').filter(Boolean)).toEqual([
          `${CHANNEL}\x1fa`,
          `${CHANNEL}\x1fb`,
        ]);
      });
      await settle(heard, 2);
      expect(heard).toEqual(['a', 'b']);
      // Nothing is left noted on the connection for the next transaction.
      const { rows } = await sql<{ pending: string }>`
        SELECT current_setting('kairos.pending_notify') AS pending`.execute(db);
      expect(rows[0]!.pending).toBe('');
    });
  });

  it('sends nothing for a transaction rolled back, nor for a savepoint rolled back', async () => {
    await listening(async (heard) => {
      await expect(
        db.transaction().execute(async (trx) => {
          await notify(trx, 'lost');
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      await db.transaction().execute(async (trx) => {
        await sql`SAVEPOINT s`.execute(trx);
        await notify(trx, 'undone');
        await sql`ROLLBACK TO SAVEPOINT s`.execute(trx);
        await notify(trx, 'kept');
      });
      await settle(heard, 1);
      expect(heard).toEqual(['kept']);
    });
  });

  it('notifies at once from a statement outside a transaction', async () => {
    await listening(async (heard) => {
      await notify(db, 'alone');
      await settle(heard, 1);
      expect(heard).toEqual(['alone']);
    });
  });

  it('still sends the notifications of a process that dies right after sending its COMMIT', async () => {
    await sql`CREATE TABLE dialect_test_rows (n int)`.execute(db);
    // The pool's one connection dies as soon as the COMMIT message has left it, as a killed process's
    // would: the rest of the transaction's work (the answer, any statement after) never happens.
    const client = await pool.connect();
    const stream = (client as unknown as { connection: { stream: Socket } }).connection.stream;
    const write = stream.write.bind(stream) as (chunk: Buffer, cb?: () => void) => boolean;
    stream.write = ((chunk: Buffer, cb?: () => void) =>
      write(chunk, () => {
        cb?.();
        if (chunk.toString('latin1').includes('COMMIT')) stream.destroy();
      })) as typeof stream.write;
    client.release();
    await listening(async (heard) => {
      await expect(
        db.transaction().execute(async (trx) => {
          await sql`INSERT INTO dialect_test_rows VALUES (1)`.execute(trx);
          await notify(trx, 'committed');
        }),
      ).rejects.toThrow();
      await settle(heard, 1);
      expect(heard).toEqual(['committed']);
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM dialect_test_rows`.execute(db);
      expect(rows[0]!.n).toBe(1); // the COMMIT happened
    });
  });

  it('notifies at once a payload holding its separators, which it could not note', async () => {
    await listening(async (heard) => {
      await db.transaction().execute(async (trx) => {
        await notify(trx, 'x\x1ey');
        await notify(trx, 'noted');
      });
      await settle(heard, 2);
      expect(heard.sort()).toEqual(['noted', 'x\x1ey']);
    });
  });
});
