import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import { type Config, loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/app.js';
import { type AppContext, createContext } from '../../src/context.js';
import { Notifier } from '../../src/db/notify.js';
import { createPool } from '../../src/db/store.js';
import type { DB } from '../../src/db/types.js';
import type { Plan } from '../../src/modules/api-keys/service.js';
import { type Clock, systemClock } from '../../src/platform/clock.js';
import { createTestDatabase, type TestDatabase } from './db.js';

// biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON bodies and assert on their shape
export type Json = any;

/** A fetch Response whose json() is typed for assertions. */
export interface TestResponse extends Response {
  json(): Promise<Json>;
}

/** GET a URL and parse its JSON body. */
export async function getJson(url: string, init?: RequestInit): Promise<Json> {
  return (await fetch(url, init)).json();
}

export interface TestApp {
  url: string;
  ctx: AppContext;
  database: TestDatabase;
  masterKey: string;
  /** Creates an account (enterprise with a high limit unless told otherwise) and returns its first key. */
  account(opts?: {
    name?: string;
    plan?: Plan;
    rateLimit?: number | null;
  }): Promise<{ id: string; key: string; keyId: string }>;
  /** fetch against the app with an optional bearer token; JSON bodies are encoded. */
  call(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  clock?: Clock;
  env?: Record<string, string>;
  /** Start the job runner (LISTEN/NOTIFY wake-ups) as `serve` does. */
  workers?: boolean;
  /** Reuse a database (e.g. a second app on the same database). */
  database?: TestDatabase;
  masterKey?: string;
}

/** The real app on a real socket (127.0.0.1, random port) over a fresh database. */
export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const database = opts.database ?? (await createTestDatabase());
  const masterKey = opts.masterKey ?? randomBytes(32).toString('base64');
  const config: Config = {
    ...loadConfig({
      DATABASE_URL: database.url,
      KAIROS_MASTER_KEY: masterKey,
      LOG_LEVEL: 'silent',
      ...opts.env,
    }),
    port: 0,
  };
  const pool = createPool(database.url, 10);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  const notifier = new Notifier(database.url);
  await notifier.start();
  const clock = opts.clock ?? systemClock;
  const ctx = createContext({ config, db, pool, masterKey, clock, notifier, log: { error: () => {} } });
  await ctx.auth.listen(notifier);
  const app = await buildApp(ctx);
  if (opts.workers) await ctx.jobs.start(notifier);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  ctx.config.baseUrl = address;

  return {
    url: address,
    ctx,
    database,
    masterKey,
    async account(a = {}) {
      const plan = a.plan ?? 'enterprise';
      const out = await ctx.services.accounts.createAccount({
        name: a.name ?? 'Test account',
        plan,
        rateLimitPerHour:
          plan === 'enterprise' ? (a.rateLimit === undefined ? 1_000_000 : a.rateLimit) : null,
      });
      return { id: out.account.id, key: out.api_key.key, keyId: out.api_key.id };
    },
    call(method, path, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let body: string | undefined;
      if (o.body !== undefined) {
        body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      return fetch(`${address}${path}`, { method, headers, body }) as Promise<TestResponse>;
    },
    async close() {
      await app.close();
      await ctx.jobs.stop();
      await ctx.usage.close();
      await notifier.close();
      await db.destroy();
      if (!opts.database) await database.drop();
    },
  };
}
