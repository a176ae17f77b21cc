import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { type AppContext, contextForStore } from './context.js';
import { Notifier } from './db/notify.js';
import { openStore, type Store } from './db/store.js';

/** How long in-flight requests get to finish after SIGTERM before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

export interface Running {
  app: FastifyInstance;
  ctx: AppContext;
  store: Store;
  url: string;
  close(): Promise<void>;
}

/** start: store → migrations → app → workers → listen. */
export async function startServer(config: Config): Promise<Running> {
  // Buffered, asynchronous log writes: a synchronous write per request line costs ~20% of throughput.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const log = pino({ level: config.logLevel, base: { pid: process.pid } }, destination);
  const flushLogs = setInterval(() => destination.flush(), 250);
  flushLogs.unref();
  const store = await openStore(config, log);
  const notifier = new Notifier(store.url, (err) =>
    log.warn({ err }, 'LISTEN connection lost; reconnecting'),
  );
  await notifier.start();
  const ctx = contextForStore(config, store, log, notifier);
  await ctx.auth.listen(notifier);
  const app = await buildApp(ctx, { logger: log });
  ctx.usage.start();
  if (config.workers) await ctx.jobs.start(notifier);
  const url = await app.listen({ port: config.port, host: config.host });
  log.info(
    { url, docs: `${url}/docs`, store: store.embedded ? 'embedded' : 'external' },
    'Kairos is listening',
  );

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      // Stop accepting and wait for in-flight requests. Keep-alive connections that go idle meanwhile
      // are closed as they do; whatever is still open after the grace period is cut.
      const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
      const cut = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await app.close();
      clearInterval(sweep);
      clearTimeout(cut);
      await ctx.jobs.stop();
      await ctx.usage.close();
      await notifier.close();
      await store.close(); // stops the embedded server if this process started it
      log.info('shutdown complete');
      clearInterval(flushLogs);
      destination.flushSync();
    })();
    return closing;
  };
  return { app, ctx, store, url, close };
}

export function installSignalHandlers(running: Running, log: { info(msg: string): void }): void {
  let signalled = false;
  const onSignal = (signal: string) => {
    if (signalled) {
      process.exit(1);
    }
    signalled = true;
    log.info(`${signal} received: shutting down`);
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}
