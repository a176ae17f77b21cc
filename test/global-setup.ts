import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { type EmbeddedServer, startEmbedded } from '../src/db/embedded.js';
import { migrate } from '../src/db/store.js';
import { buildForProcesses } from './helpers/build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    /** The `kairos` entry the tests' processes run (test/helpers/build.ts). */
    kairosEntry: string;
  }
}

const quiet = { info: () => {}, warn: (o: object | string) => console.warn(o) };

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * One PostgreSQL server per test run: the machine's (TEST_DATABASE_URL) or a throwaway embedded one.
 * A template database is migrated once; every test file clones it (test/helpers/db.ts). The sources
 * are transpiled once for the `kairos` processes the tests start (test/helpers/build.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const build = await buildForProcesses();
  project.provide('kairosEntry', build.entry);
  let embedded: EmbeddedServer | null = null;
  const dataDir = join(process.cwd(), '.test-data', `run-${process.pid}`);
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    embedded = await startEmbedded({ dataDir, log: quiet, ephemeral: true });
    adminUrl = embedded.url;
  }
  const template = `kairos_tpl_${process.pid}`;
  await admin(adminUrl, `DROP DATABASE IF EXISTS ${template}`);
  await admin(adminUrl, `CREATE DATABASE ${template}`);
  const pool = new pg.Pool({ connectionString: withDatabase(adminUrl, template), max: 1 });
  await migrate(pool);
  await pool.end();
  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);

  return async () => {
    build.remove();
    await admin(adminUrl, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => {});
    if (embedded) {
      await embedded.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  };
}
