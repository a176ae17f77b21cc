import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.js';
import { part } from '../db/parts.js';
import { KairosDialect } from '../db/dialect.js';
import { createPool } from '../db/store.js';
import type { DB } from '../db/types.js';
import { JOBS_CHANNEL, WriteBatch } from './queries.js';

const NOW = new Date('2026-06-01T00:00:00Z');

function mailRow(id: string) {
  return {
    id,
    kind: 'test',
    subject_id: null,
    to_address: 'a@example.com',
    subject: 's',
    text_body: 't',
    html_body: 'h',
    ics: null,
    ics_method: null,
    status: 'pending' as const,
    last_error: null,
    attempts: 0,
    created_at: NOW,
  };
}

/** The payloads of NOTIFY kairos_jobs (the queues woken) seen by a connection of its own. */
async function listen(): Promise<{ woken: string[]; end: () => Promise<void> }> {
  const listener = new pg.Client({ connectionString: database.url });
  await listener.connect();
  const woken: string[] = [];
  listener.on('notification', (n) => woken.push(n.payload ?? ''));
  await listener.query(`LISTEN ${JOBS_CHANNEL}`);
  return { woken, end: () => listener.end() };
}

let database: TestDatabase;

describe('WriteBatch: rows nobody reads back and their jobs, in one statement', () => {
  let db: Kysely<DB>;
  let statements = 0;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = new Kysely<DB>({
      dialect: new KairosDialect({ pool: createPool(database.url, 2) }),
      log: () => {
        statements++;
      },
    });
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  it('sends two writes and jobs of two queues as one statement, and wakes each queue at commit', async () => {
    const { woken, end } = await listen();
    try {
      await db.transaction().execute(async (trx) => {
        const batch = new WriteBatch();
        batch.add(
          (q) => q.insertInto('mail_outbox').values(mailRow('mail_b1')),
          [{ queue: 'batch.one', payload: { n: 1 }, runAt: NOW }],
        );
        batch.add(
          (q) => q.insertInto('mail_outbox').values(mailRow('mail_b2')),
          [
            { queue: 'batch.two', payload: { n: 2 }, runAt: NOW },
            { queue: 'batch.two', payload: { n: 3 }, runAt: NOW },
          ],
        );
        statements = 0;
        await batch.run(trx);
        expect(statements).toBe(1);
        expect(woken).toEqual([]); // NOTIFY waits for the commit
        await batch.run(trx); // emptied by the first run: nothing more is sent
        expect(statements).toBe(1);
      });
      const mails = await db
        .selectFrom('mail_outbox')
        .select('id')
        .where('id', 'in', ['mail_b1', 'mail_b2'])
        .execute();
      expect(mails.map((m) => m.id).sort()).toEqual(['mail_b1', 'mail_b2']);
      const jobs = await db
        .selectFrom('jobs')
        .select(['queue', 'payload'])
        .where('queue', 'in', ['batch.one', 'batch.two'])
        .orderBy('id')
        .execute();
      expect(jobs).toEqual([
        { queue: 'batch.one', payload: { n: 1 } },
        { queue: 'batch.two', payload: { n: 2 } },
        { queue: 'batch.two', payload: { n: 3 } },
      ]);
      await expect.poll(() => [...woken].sort()).toEqual(['batch.one', 'batch.two']);
    } finally {
      await end();
    }
  });

  it('adds a conditional job only when its condition holds, and wakes only the queues that got a job', async () => {
    const { woken, end } = await listen();
    try {
      const batch = new WriteBatch();
      batch.add(
        (q) => q.insertInto('mail_outbox').values(mailRow('mail_c1')),
        [
          { queue: 'cond.yes', payload: { n: 1 }, runAt: NOW, onlyIf: part`1 = 1` },
          { queue: 'cond.no', payload: { n: 2 }, runAt: NOW, onlyIf: part`1 = 0` },
        ],
      );
      await batch.run(db);
      const jobs = await db
        .selectFrom('jobs')
        .select(['queue', 'payload', 'run_at'])
        .where('queue', 'like', 'cond.%')
        .execute();
      expect(jobs).toEqual([{ queue: 'cond.yes', payload: { n: 1 }, run_at: NOW }]);
      // A marker committed after the batch reaches the listener after any notification of the batch.
      await sql`SELECT pg_notify(${JOBS_CHANNEL}, 'marker')`.execute(db);
      await expect.poll(() => woken.at(-1)).toBe('marker');
      expect(woken).toEqual(['cond.yes', 'marker']);
    } finally {
      await end();
    }
  });

  it('adds the jobs of a write given with addThen only when that write answered a row', async () => {
    await db.insertInto('mail_outbox').values(mailRow('mail_t0')).execute();
    const batch = new WriteBatch();
    // Each insert copies the row named in its WHERE: only mail_t0 exists, so only the first writes.
    const copy = (id: string, from: string) =>
      part`INSERT INTO mail_outbox (id, kind, to_address, subject, text_body, html_body, status,
          attempts, created_at)
        SELECT ${id}, kind, to_address, subject, text_body, html_body, status, attempts, created_at
        FROM mail_outbox WHERE id = ${from}
        RETURNING id`;
    batch.addThen(copy('mail_t1', 'mail_t0'), [{ queue: 'then.yes', payload: { n: 1 }, runAt: NOW }]);
    batch.addThen(copy('mail_t2', 'mail_none'), [{ queue: 'then.no', payload: { n: 2 }, runAt: NOW }]);
    batch.add(null, [{ queue: 'then.always', payload: { n: 3 }, runAt: NOW }]);
    statements = 0;
    await batch.run(db);
    expect(statements).toBe(1);
    const mails = await db.selectFrom('mail_outbox').select('id').where('id', 'like', 'mail_t%').execute();
    expect(mails.map((m) => m.id).sort()).toEqual(['mail_t0', 'mail_t1']);
    const jobs = await db.selectFrom('jobs').select('queue').where('queue', 'like', 'then.%').execute();
    expect(jobs.map((j) => j.queue).sort()).toEqual(['then.always', 'then.yes']);
  });

  it('a failing part fails the whole statement: no row and no job of the batch is written', async () => {
    await db.insertInto('mail_outbox').values(mailRow('mail_taken')).execute();
    const batch = new WriteBatch();
    batch.add(
      (q) => q.insertInto('mail_outbox').values(mailRow('mail_fresh')),
      [{ queue: 'batch.fail', payload: {}, runAt: NOW }],
    );
    batch.add((q) => q.insertInto('mail_outbox').values(mailRow('mail_taken')));
    await expect(batch.run(db)).rejects.toMatchObject({ code: '23505' });
    expect(await db.selectFrom('mail_outbox').select('id').where('id', '=', 'mail_fresh').execute()).toEqual(
      [],
    );
    expect(await db.selectFrom('jobs').select('id').where('queue', '=', 'batch.fail').execute()).toEqual([]);
  });
});
