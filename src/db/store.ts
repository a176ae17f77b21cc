import { Kysely, Migrator, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { type Config, ConfigError, DEFAULT_PREPARED_STATEMENTS } from '../config.js';
import { KairosDialect } from './dialect.js';
import { type EmbeddedServer, embeddedMasterKey, type Logger, startEmbedded } from './embedded.js';
import { migrations } from './migrations/index.js';
import { prepareRepeatedStatements } from './prepared.js';
import type { DB } from './types.js';

// Timestamps come back as Date; bigint counts (count(*)) as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

export type Db = Kysely<DB>;
export type Tx = Transaction<DB>;

export interface Store {
  db: Db;
  pool: pg.Pool;
  url: string;
  /** Where the LISTEN connection goes (DATABASE_LISTEN_URL, else `url`). */
  listenUrl: string;
  masterKey: string;
  embedded: EmbeddedServer | null;
  close(): Promise<void>;
}

/**
 * A pool of `max` connections; each names up to `prepared` repeated statements (db/prepared.ts; 0:
 * none).
 */
export function createPool(url: string, max: number, prepared = DEFAULT_PREPARED_STATEMENTS): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
  });
  // A client that loses its server emits 'error'; an event nobody listens to ends the process. The pool
  // listens on idle clients only, so a store restart used to kill every process that had a query in
  // flight. Every client gets a listener of its own for its whole life: the query in flight fails with
  // the error (the caller answers 503, src/db/unavailable.ts), and the pool drops the dead client when
  // it is released instead of handing it out again.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  prepareRepeatedStatements(pool, prepared);
  return pool;
}

/** The app's Kysely over `pool`: notifications of a transaction are sent after its commit (db/dialect.ts). */
export function createDb(pool: pg.Pool): Db {
  return new Kysely<DB>({ dialect: new KairosDialect({ pool }) });
}

/** Opens the store the config names: an external server (DATABASE_URL) or the embedded one. */
export async function openStore(
  config: Config,
  log: Logger,
  opts: { migrate?: boolean } = {},
): Promise<Store> {
  let embedded: EmbeddedServer | null = null;
  let url: string;
  let masterKey: string;
  if (config.databaseUrl) {
    url = config.databaseUrl;
    if (!config.masterKey) {
      throw new ConfigError(
        'KAIROS_MASTER_KEY is required with DATABASE_URL (every process of a deployment shares it): ' +
          'generate one with `openssl rand -base64 32`',
      );
    }
    masterKey = config.masterKey;
  } else {
    embedded = await startEmbedded({ dataDir: config.dataDir, log });
    url = embedded.url;
    masterKey = config.masterKey ?? embeddedMasterKey(config.dataDir);
  }
  const pool = createPool(url, config.databasePoolMax, config.databasePreparedStatements);
  const db = createDb(pool);
  const store: Store = {
    db,
    pool,
    url,
    listenUrl: config.databaseListenUrl ?? url,
    masterKey,
    embedded,
    async close() {
      await db.destroy();
      if (embedded?.owned) await embedded.stop();
    },
  };
  try {
    if (opts.migrate !== false)
      await (store.listenUrl === url ? migrate(pool) : migrateDirect(store.listenUrl));
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

/**
 * Runs pending migrations. Safe when several processes start at once: Kysely's PostgreSQL adapter
 * takes a session-level advisory lock (`pg_advisory_lock`) around the whole run, on one connection,
 * and releases it with `pg_advisory_unlock` on the same connection. `pool` must therefore reach the
 * server itself, not a pooler in transaction mode (see migrateDirect). The migrations run on the plain
 * dialect: the app's calls `kairos_flush_notify()` with every COMMIT, which exists only from 0019 on.
 * The pool stays open (the caller owns it).
 */
export async function migrate(pool: pg.Pool): Promise<string[]> {
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Runs the migrations over a connection of its own to `directUrl` (DATABASE_LISTEN_URL: the server
 * itself, when DATABASE_URL names a pooler). Through a pooler in transaction mode the migrator's lock
 * and its release can be sent over two different server connections: the release then does nothing,
 * the pooler keeps the connection that holds the lock open, and every later start waits for it (up
 * to Kysely's lock timeout, an hour).
 */
async function migrateDirect(directUrl: string): Promise<void> {
  const direct = createPool(directUrl, 1, 0);
  try {
    await migrate(direct);
  } finally {
    await direct.end();
  }
}

/** One use case = one transaction. */
export function withTransaction<T>(db: Db, fn: (trx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(fn);
}
