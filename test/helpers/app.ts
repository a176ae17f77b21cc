import { randomBytes } from 'node:crypto';
import { type Config, loadConfig } from '../../src/config.js';
import { createDb, createPool } from '../../src/db/store.js';
import type { Plan } from '../../src/modules/api-keys/api.js';
import type { AnyModule } from '../../src/modules/index.js';
import type { Clock } from '../../src/platform/clock.js';
import { type Runtime, startRuntime } from '../../src/runtime.js';
import { eventMismatches } from './event-check.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { responseCheckModule } from './openapi-check.js';

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
  /** The running process: its platform and `modules` (every module's API). */
  ctx: Runtime;
  database: TestDatabase;
  masterKey: string;
  /** Creates an account (enterprise with a high limit unless told otherwise) and returns its first key. */
  account(opts?: {
    name?: string;
    plan?: Plan;
    rateLimit?: number | null;
  }): Promise<{ id: string; key: string; keyId: string }>;
  /** The `data` of the account's events of one type, as stored, oldest first. */
  events(accountId: string, type: string): Promise<Json[]>;
  /** fetch against the app with an optional bearer token; JSON bodies are encoded. */
  call(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

/** TestApp's `call` against any base URL (e.g. a spawned `kairos serve` process). */
export function serverAt(base: string): Pick<TestApp, 'call'> {
  return {
    call(method, path, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let body: string | undefined;
      if (o.body !== undefined) {
        body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      return fetch(`${base}${path}`, { method, headers, body }) as Promise<TestResponse>;
    },
  };
}

export interface TestAppOptions {
  clock?: Clock;
  env?: Record<string, string>;
  /** Start the job runner (LISTEN/NOTIFY wake-ups) as `serve` does. */
  workers?: boolean;
  /** Reuse a database (e.g. a second app on the same database). */
  database?: TestDatabase;
  masterKey?: string;
  /** Modules composed after the real ones: tests contribute busy sources or access grants this way. */
  modules?: readonly AnyModule[];
  /**
   * Check every answer against the OpenAPI document (default true; test/helpers/openapi-check.ts).
   * Off only for an app whose answers are meant to break the contract (fault injection).
   */
  checkResponses?: boolean;
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
    host: '127.0.0.1',
  };
  const pool = createPool(database.url, 10);
  const db = createDb(pool);
  const ctx = await startRuntime({
    config,
    log: { info: () => {}, warn: () => {}, error: () => {} },
    store: { db, pool, url: database.url, masterKey },
    clock: opts.clock,
    workers: opts.workers ?? false,
    usage: false,
    listen: true,
    baseUrlFromAddress: true,
    extraModules: [
      ...(opts.modules ?? []),
      ...(opts.checkResponses === false ? [] : [responseCheckModule()]),
    ],
  });
  const address = ctx.url as string;

  return {
    url: address,
    ctx,
    database,
    masterKey,
    async account(a = {}) {
      const plan = a.plan ?? 'enterprise';
      const out = await ctx.modules.accounts.createAccount({
        name: a.name ?? 'Test account',
        plan,
        rateLimitPerHour:
          plan === 'enterprise' ? (a.rateLimit === undefined ? 1_000_000 : a.rateLimit) : null,
      });
      return { id: out.account.id, key: out.api_key.key, keyId: out.api_key.id };
    },
    async events(accountId, type) {
      const rows = await db
        .selectFrom('events')
        .select(['data'])
        .where('account_id', '=', accountId)
        .where('type', '=', type)
        .orderBy('created_at')
        .execute();
      return rows.map((r) => r.data);
    },
    call: serverAt(address).call,
    async close() {
      // Every event the file's tests made must match its declared payload schema.
      const mismatches = await eventMismatches(db, ctx.events).catch((err) => [String(err)]);
      await ctx.close();
      await db.destroy();
      if (!opts.database) await database.drop();
      if (mismatches.length > 0) {
        throw new Error(`events outside their schemas:\n${mismatches.slice(0, 5).join('\n')}`);
      }
    },
  };
}
