/**
 * The OpenAPI document of the whole app, built without a database: every module composed and its routes
 * registered as `serve` does, over a pool that never connects (nothing queries it while the document is
 * built). `npm run check:openapi` lints what this returns (scripts/openapi.ts writes it to a file).
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from './config.js';
import { createDb, createPool } from './db/store.js';
import { startRuntime } from './runtime.js';

/** A URL nothing listens on: the pool is created, never used. */
const OFFLINE_DATABASE_URL = 'postgres://offline.invalid/kairos';

export async function openApiDocument(env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const masterKey = randomBytes(32).toString('base64');
  const config = loadConfig({
    DATABASE_URL: OFFLINE_DATABASE_URL,
    KAIROS_MASTER_KEY: masterKey,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const pool = createPool(OFFLINE_DATABASE_URL, 1);
  const db = createDb(pool);
  const quiet = { info: () => {}, warn: () => {}, error: () => {} };
  const runtime = await startRuntime({
    config,
    log: quiet,
    store: { db, pool, url: OFFLINE_DATABASE_URL, masterKey },
    notifier: false,
    workers: false,
    usage: false,
  });
  try {
    const app = runtime.app!;
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await runtime.close();
    await db.destroy();
  }
}
