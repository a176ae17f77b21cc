/**
 * One runtime for every process: `serve`, the CLI, the test helpers and the benches. Start order:
 * store → notifier → platform → modules → LISTEN subscriptions → app → workers → HTTP listen; stop
 * runs the reverse (docs/architecture.md#modules).
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type pg from 'pg';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { Notifier } from './db/notify.js';
import { type Db, openStore, type Store } from './db/store.js';
import { JobRunner } from './jobs/runner.js';
import { type AnyModule, composeModules, type ModuleApis } from './modules/index.js';
import type { EventCatalogue, Platform } from './modules/module.js';
import { Authenticator, CredentialCache } from './platform/auth.js';
import { type Clock, systemClock } from './platform/clock.js';
import { IdempotencyStore } from './platform/idempotency.js';
import { type DerivedKeys, deriveKeys } from './platform/keys.js';
import { Metrics } from './platform/metrics.js';
import { RateLimiter } from './platform/rate-limit.js';
import { TestClocks } from './platform/test-clocks.js';
import { UsageRecorder } from './platform/usage.js';

/** How long in-flight requests get to finish on stop before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

export interface RuntimeLog {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object, msg: string): void;
  /** Where a start spends its time, phase by phase (LOG_LEVEL=debug). */
  debug?(obj: object, msg: string): void;
}

/** A store someone else opened and closes (tests: a database per file). */
export interface OpenedStore {
  db: Db;
  pool: pg.Pool;
  url: string;
  /** Where the LISTEN connection goes, when not `url` (a pooler in transaction mode in between). */
  listenUrl?: string;
  masterKey: string;
}

export interface RuntimeOptions {
  config: Config;
  log: RuntimeLog;
  /** The request logger of the HTTP app (none: silent). */
  httpLogger?: FastifyBaseLogger;
  /** Use this store instead of opening the configured one (and leave closing it to the caller). */
  store?: OpenedStore;
  clock?: Clock;
  /** LISTEN/NOTIFY: cross-process cache invalidation and job wake-ups (default true). */
  notifier?: boolean;
  /** Build the HTTP app (default true); `listen` also binds it to config.host:config.port. */
  http?: boolean;
  listen?: boolean;
  /** After listening, use the bound address as the base URL (tests on port 0). */
  baseUrlFromAddress?: boolean;
  /** Run background jobs in this process (default config.workers). */
  workers?: boolean;
  /** Flush per-key usage counters in the background (default true). */
  usage?: boolean;
  /** Modules composed after the listed ones (tests contribute to extension points this way). */
  extraModules?: readonly AnyModule[];
}

/** A running process: its platform, its modules' APIs, and (when asked for) its HTTP app. */
export interface Runtime {
  config: Config;
  db: Db;
  pool: pg.Pool;
  clock: Clock;
  keys: DerivedKeys;
  metrics: Metrics;
  usage: UsageRecorder;
  limiter: RateLimiter;
  idempotency: IdempotencyStore;
  jobs: JobRunner;
  auth: Authenticator;
  testClocks: TestClocks;
  notifier: Notifier | null;
  modules: ModuleApis;
  /** The webhook events the modules declare, by type (the document's `webhooks`). */
  events: EventCatalogue;
  /** Null when started with `http: false`. */
  app: FastifyInstance | null;
  /** The listening address, when listening. */
  url: string | null;
  /** The embedded or external store, when this runtime opened it. */
  store: Store | null;
  close(): Promise<void>;
}

export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const phase = startPhases(opts.log);
  const opened = opts.store ? null : await openStore(opts.config, opts.log);
  phase('store open and migrated');
  const started: Started = { notifier: null, runtime: null };
  try {
    return await assemble(opts, opened, started, phase);
  } catch (err) {
    // A start that fails half-way leaves nothing behind: no listener, no LISTEN connection, no
    // embedded server this process started.
    if (started.runtime) await started.runtime.close().catch(() => {});
    else {
      await started.notifier?.close().catch(() => {});
      await opened?.close().catch(() => {});
    }
    throw err;
  }
}

/** What a start has brought up so far, for the cleanup of a start that fails. */
interface Started {
  notifier: Notifier | null;
  runtime: Runtime | null;
}

/** Logs, at debug level, each phase of a start with the milliseconds since the start began. */
function startPhases(log: RuntimeLog): (name: string) => void {
  const began = performance.now();
  return (name) => log.debug?.({ phase: name, ms: Math.round(performance.now() - began) }, 'start phase');
}

async function assemble(
  opts: RuntimeOptions,
  opened: Store | null,
  started: Started,
  phase: (name: string) => void,
): Promise<Runtime> {
  const { config, log } = opts;
  const store: OpenedStore = opts.store ?? (opened as Store);
  const clock = opts.clock ?? systemClock;

  let notifier: Notifier | null = null;
  if (opts.notifier !== false) {
    notifier = new Notifier(store.listenUrl ?? store.url, (err) =>
      log.warn({ err }, 'LISTEN connection lost; reconnecting'),
    );
    started.notifier = notifier;
    await notifier.start();
    phase('LISTEN connection open');
  }

  // The platform.
  const keys = deriveKeys(store.masterKey);
  const credentials = new CredentialCache(clock);
  const metrics = new Metrics(store.pool);
  const usage = new UsageRecorder(store.db, clock, (err) => log.error({ err }, 'usage flush failed'));
  const jobs = new JobRunner(store.db, clock, log);
  const testClocks = new TestClocks(store.db, clock);
  const platform: Platform = {
    config,
    db: store.db,
    clock,
    keys,
    metrics,
    usage,
    jobs,
    revocations: credentials,
    testClocks,
    log,
  };
  const limiter = new RateLimiter(store.db, clock);
  const idempotency = new IdempotencyStore(store.db, clock, keys.encryptionKey);
  jobs.every('idempotency-cleanup', 15 * 60_000, () => idempotency.cleanup());
  jobs.every('rate-limit-cleanup', 15 * 60_000, () => RateLimiter.cleanup(store.db, clock));

  // The modules, and what they contribute to the platform.
  const { apis, built, events } = composeModules(platform, opts.extraModules);
  for (const { parts } of built) {
    for (const j of parts.jobs ?? []) jobs.register(j.queue, j.handler, j.options);
    for (const s of parts.schedules ?? []) jobs.every(s.name, s.everyMs, s.run);
  }
  const auth = new Authenticator(
    built.flatMap(({ parts }) => parts.credentials ?? []),
    credentials,
    clock,
  );

  // Caches that other processes invalidate are used once their LISTEN subscriptions are in place.
  if (notifier) {
    await credentials.listen(notifier);
    for (const { parts } of built) for (const listen of parts.listen ?? []) await listen(notifier);
  }
  phase('modules composed');

  const runtime: Runtime = {
    config,
    db: store.db,
    pool: store.pool,
    clock,
    keys,
    metrics,
    usage,
    limiter,
    idempotency,
    jobs,
    auth,
    testClocks,
    notifier,
    modules: apis,
    events,
    app: null,
    url: null,
    store: opened,
    close: async () => {},
  };

  let closing: Promise<void> | null = null;
  runtime.close = () => {
    closing ??= (async () => {
      const app = runtime.app;
      if (app) {
        // Stop accepting and wait for in-flight requests. Keep-alive connections that go idle
        // meanwhile are closed as they do; whatever is still open after the grace period is cut.
        const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
        const cut = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        await app.close();
        clearInterval(sweep);
        clearTimeout(cut);
      }
      await jobs.stop();
      for (const { parts } of built) await parts.close?.().catch(() => {});
      await usage.close();
      await notifier?.close();
      await opened?.close(); // stops the embedded server if this process started it
    })();
    return closing;
  };
  started.runtime = runtime;

  if (opts.http !== false) {
    runtime.app = await buildApp(
      runtime,
      built.flatMap(({ parts }) => (parts.routes ? [parts.routes] : [])),
      { logger: opts.httpLogger },
    );
    phase('HTTP app built');
  }
  if (opts.usage !== false) usage.start();
  if (opts.workers ?? config.workers) {
    await jobs.start(notifier);
    phase('workers started');
  }
  if (runtime.app && opts.listen) {
    runtime.url = await runtime.app.listen({ port: config.port, host: config.host });
    phase('bound');
    if (opts.baseUrlFromAddress) config.baseUrl = runtime.url;
  }

  return runtime;
}
