/**
 * `kairos serve --processes N` (KAIROS_PROCESSES): N processes on one machine sharing one port, through
 * node:cluster. The primary serves nothing itself. It opens the store once — starting (or finding)
 * the embedded PostgreSQL server, and migrating — and forks the workers with the store's URL and master
 * key in their environment; each worker runs the usual server (src/server.ts) as a client of that store
 * and listens on the same port (the primary hands the connections round). The primary says "Kairos is
 * listening" once every worker is ready, replaces a worker that dies (and gives up on a crash loop),
 * turns SIGTERM/SIGINT into one SIGTERM per worker, and stops the embedded server it started once every
 * worker has exited.
 */
import cluster, { type Worker } from 'node:cluster';
import pino from 'pino';
import type { Config } from './config.js';
import { openStore } from './db/store.js';
import { prettyLine } from './platform/pretty-log.js';
import { installSignalHandlers, SHUTDOWN_BOUND_MS, startServer } from './server.js';

/** This many worker deaths within `withinMs` stop the primary (exit 1) instead of more replacements. */
export const CRASH_LOOP = { deaths: 5, withinMs: 10_000 };

/** What a worker tells the primary once it listens with its whole runtime started. */
interface ReadyMessage {
  kairos: 'ready';
  url: string;
}

function isReady(msg: unknown): msg is ReadyMessage {
  return typeof msg === 'object' && msg !== null && (msg as { kairos?: unknown }).kairos === 'ready';
}

/** True in a process that a `serve --processes N` primary forked. */
export function isServeWorker(): boolean {
  return cluster.isWorker;
}

/** A worker: the server on the primary's store; the primary's SIGTERM stops it as SIGTERM stops `serve`. */
export async function serveWorker(config: Config): Promise<void> {
  // Ctrl-C sends SIGINT to every process of the terminal's foreground group; the primary turns it into
  // one SIGTERM per worker, so a worker does not count it (a second signal would cut its drain short).
  process.on('SIGINT', () => {});
  const running = await startServer(config, { worker: true });
  installSignalHandlers(running, { info: (m) => running.app?.log.info(m) }, ['SIGTERM']);
  process.send?.({ kairos: 'ready', url: running.url ?? '' } satisfies ReadyMessage);
}

/** The primary: runs until every worker has exited, then exits the process itself (0 or 1). */
export async function servePrimary(config: Config, processes: number): Promise<void> {
  // A few lines, written at once: none is still in flight when the primary exits.
  const destination = pino.destination({ dest: 1, sync: true });
  const log = pino(
    { level: config.logLevel, base: { pid: process.pid } },
    config.logFormat === 'pretty'
      ? { write: (line: string) => destination.write(prettyLine(line)) }
      : destination,
  );
  // Starts (or finds) the embedded server and migrates, once for every worker.
  const store = await openStore(config, log);
  await store.db.destroy(); // the primary runs no queries: no pool
  const embedded = store.embedded;
  // The workers connect as clients of this store (the environment, never argv: `ps` shows argv).
  const workerEnv = { DATABASE_URL: store.url, KAIROS_MASTER_KEY: store.masterKey };

  const workers = new Map<number, Worker>();
  const ready = new Set<number>();
  const deaths: number[] = [];
  let announced = false;
  let stopping: { code: number } | null = null;
  let finishing = false;

  const fork = () => {
    const worker = cluster.fork(workerEnv);
    workers.set(worker.id, worker);
  };

  const finish = async (code: number) => {
    if (finishing) return;
    finishing = true;
    if (embedded?.owned) {
      await embedded.stop().then(
        () => log.info('embedded PostgreSQL stopped'),
        (err: unknown) => log.error({ err }, 'the embedded PostgreSQL server did not stop cleanly'),
      );
    }
    log.info({ code }, 'shutdown complete');
    process.exit(code);
  };

  let failed = false; // a worker that did not exit 0 on SIGTERM
  const stop = (code: number) => {
    if (stopping) return;
    stopping = { code };
    const force = setTimeout(() => {
      log.error(
        { workers: [...workers.values()].map((w) => w.process.pid) },
        `workers still running ${SHUTDOWN_BOUND_MS / 1000} s after SIGTERM: killing them`,
      );
      for (const w of workers.values()) w.process.kill('SIGKILL');
      void finish(1);
    }, SHUTDOWN_BOUND_MS);
    force.unref();
    for (const w of workers.values()) w.process.kill('SIGTERM');
    if (workers.size === 0) void finish(code);
  };

  cluster.on('message', (worker, msg: unknown) => {
    if (!isReady(msg) || !workers.has(worker.id)) return;
    ready.add(worker.id);
    if (announced) {
      log.info({ worker: worker.process.pid }, 'replacement worker process ready');
    } else if (ready.size >= processes) {
      announced = true;
      log.info(
        {
          url: msg.url,
          docs: `${msg.url}/docs`,
          store: embedded ? 'embedded' : 'external',
          processes,
          workers: [...workers.values()].map((w) => w.process.pid),
        },
        'Kairos is listening',
      );
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const wasReady = ready.delete(worker.id);
    workers.delete(worker.id);
    const how = { worker: worker.process.pid, code, signal };
    if (stopping) {
      // A worker that had not finished starting may end by the SIGTERM itself.
      if (code !== 0 && !(signal === 'SIGTERM' && !wasReady)) {
        failed = true;
        log.error(how, 'worker process did not exit cleanly on SIGTERM (its log is above)');
      }
      if (workers.size === 0) void finish(stopping.code !== 0 || failed ? 1 : 0);
      return;
    }
    if (!announced) {
      log.error(
        how,
        'a worker process exited while starting (its error is above): stopping. Fix the cause and start again',
      );
      stop(1);
      return;
    }
    const now = Date.now();
    deaths.push(now);
    while (deaths.length > 0 && deaths[0]! <= now - CRASH_LOOP.withinMs) deaths.shift();
    if (deaths.length >= CRASH_LOOP.deaths) {
      log.error(
        how,
        `${deaths.length} worker processes died within ${CRASH_LOOP.withinMs / 1000} s: stopping instead of ` +
          'replacing them again. Their errors are above (a worker killed by a signal, e.g. by the OOM killer, ' +
          'leaves none: see the system log); fix the cause and start again',
      );
      stop(1);
      return;
    }
    log.warn(how, 'worker process exited unexpectedly: starting a replacement');
    fork();
  });

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      // A second signal: no more waiting (as for one process). The embedded server, if left running,
      // is found and used by the next start.
      for (const w of workers.values()) w.process.kill('SIGKILL');
      process.exit(1);
    }
    signalled = true;
    log.info(`${signal} received: shutting down ${workers.size} worker processes`);
    stop(0);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));

  for (let i = 0; i < processes; i++) fork();
}
