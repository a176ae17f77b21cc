import { randomBytes } from 'node:crypto';
import { type QueryExecutorProvider, sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import type { Notifier } from '../../src/db/notify.js';
import { waitUntil } from './promises.js';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export function databaseUrl(adminUrl: string, database: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

/** A fresh, migrated database of its own (a clone of the run's template); dropped by `drop()`. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminDatabaseUrl');
  const template = inject('templateDatabase');
  const name = `kairos_t_${randomBytes(6).toString('hex')}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  return {
    url: databaseUrl(adminUrl, name),
    drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * Resolves once at least `count` sessions on `db`'s database wait for a lock (a row locked by a
 * transaction the test holds open, say): how a test knows a statement is blocked, not just started.
 * A session waiting for a row waits on the holder's transaction id, a lock with no database of its
 * own, hence the join on the session.
 */
export async function waitForLockWaiter(db: QueryExecutorProvider, what: string, count = 1): Promise<void> {
  await waitUntil(`${what} (waiting for a lock)`, async () => {
    const { rows } = await sql<{ n: number }>`
      SELECT count(DISTINCT l.pid)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE NOT l.granted AND a.datname = current_database()`.execute(db);
    return rows[0]!.n >= count;
  });
}

/** Markers sent and not heard yet, by the notifier that listens for them. */
const markers = new WeakMap<Notifier, Set<string>>();

/**
 * Resolves once `notifier` (a process's LISTEN connection, `ctx.notifier`) has heard every
 * notification committed before the call: a marker sent now through `db` comes after them, since a
 * listener hears notifications in the order their transactions committed (PostgreSQL's NOTIFY), and
 * handlers run as each arrives. The positive signal before asserting that no notification came, or
 * that one has had its effect.
 */
export async function notificationsHeard(
  notifier: Notifier | null,
  db: QueryExecutorProvider,
): Promise<void> {
  if (!notifier) throw new Error('this app listens for no notifications');
  let pending = markers.get(notifier);
  if (!pending) {
    const unheard = new Set<string>();
    markers.set(notifier, unheard);
    await notifier.listen('kairos_test_marker', (marker) => unheard.delete(marker));
    pending = unheard;
  }
  const marker = randomBytes(8).toString('hex');
  pending.add(marker);
  await sql`SELECT pg_notify('kairos_test_marker', ${marker})`.execute(db);
  const unheard = pending;
  await waitUntil('the marker notification', () => !unheard.has(marker), 10_000, 5);
}
