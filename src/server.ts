import pino from 'pino';
import type { Config } from './config.js';
import { openStore } from './db/store.js';
import { type Runtime, startRuntime } from './runtime.js';

/** How long a signalled shutdown may take before the process exits 1 anyway. */
export const SHUTDOWN_BOUND_MS = 30_000;

/**
 * The most bytes one write to a pipe may hold and still never interleave with another process's
 * writes to the same pipe (PIPE_BUF on Linux).
 */
const PIPE_BUF = 4096;

export interface ServerOptions {
  /**
   * One of the processes of `kairos serve --processes N` (src/cluster.ts). The primary has migrated
   * the store and announces the URL once, so this process does neither; and since the processes share
   * one stdout, each log write holds whole lines and stays within PIPE_BUF.
   */
  worker?: boolean;
}

/** `kairos serve`: the runtime with the HTTP app listening and, unless turned off, the workers. */
export async function startServer(config: Config, opts: ServerOptions = {}): Promise<Runtime> {
  // Buffered, asynchronous log writes: a synchronous write per request line costs ~20% of throughput.
  // Lines are handed over as bytes: in its text mode SonicBoom measures the whole pending chunk (up
  // to maxWrite) on every line, flattening a growing string each time (docs/performance.md,
  // "The log line's real cost").
  const destination = pino.destination(
    opts.worker
      ? { dest: 1, sync: false, minLength: PIPE_BUF / 2, maxWrite: PIPE_BUF, contentMode: 'buffer' }
      : { dest: 1, sync: false, minLength: 4096, contentMode: 'buffer' },
  );
  // In buffer mode `write` takes a Buffer; the package's types declare only the text mode's string.
  const lines = { write: (line: string) => destination.write(Buffer.from(line) as unknown as string) };
  const log = pino({ level: config.logLevel, base: { pid: process.pid } }, lines);
  const flushLogs = setInterval(() => destination.flush(), 250);
  flushLogs.unref();
  const runtime = opts.worker
    ? await startWorkerRuntime(config, log)
    : await startRuntime({ config, log, httpLogger: log, listen: true });
  if (!opts.worker)
    log.info(
      {
        url: runtime.url,
        docs: `${runtime.url}/docs`,
        store: runtime.store?.embedded ? 'embedded' : 'external',
      },
      'Kairos is listening',
    );
  const close = runtime.close;
  runtime.close = async () => {
    await close();
    log.info('shutdown complete');
    clearInterval(flushLogs);
    destination.flushSync();
  };
  return runtime;
}

/** A worker's runtime: on the store the primary opened and migrated, closed with the runtime. */
async function startWorkerRuntime(config: Config, log: pino.Logger): Promise<Runtime> {
  const store = await openStore(config, log, { migrate: false });
  let runtime: Runtime;
  try {
    runtime = await startRuntime({ config, log, httpLogger: log, listen: true, store });
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
  const close = runtime.close;
  runtime.close = async () => {
    await close();
    await store.close();
  };
  return runtime;
}

export function installSignalHandlers(
  running: Pick<Runtime, 'close'>,
  log: { info(msg: string): void },
  signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'],
): void {
  let signalled = false;
  const onSignal = (signal: string) => {
    if (signalled) {
      process.exit(1);
    }
    signalled = true;
    log.info(`${signal} received: shutting down`);
    const force = setTimeout(() => process.exit(1), SHUTDOWN_BOUND_MS);
    force.unref();
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  for (const signal of signals) process.on(signal, () => onSignal(signal));
}
