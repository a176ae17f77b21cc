import pino from 'pino';
import type { Config } from './config.js';
import { openStore } from './db/store.js';
import { prettyLine } from './platform/pretty-log.js';
import { type Runtime, startRuntime } from './runtime.js';

/** How long a signalled shutdown may take before the process exits 1 anyway. */
export const SHUTDOWN_BOUND_MS = 30_000;

/**
 * The most bytes one write to a pipe may hold and still never interleave with another process's
 * writes to the same pipe (PIPE_BUF on Linux).
 */
const PIPE_BUF = 4096;

/**
 * The bytes of log lines one write holds in a single-process server. An asynchronous write costs the
 * process ~55–70 µs of CPU whatever its size up to 16 KiB (the hand-over to libuv's thread pool and
 * back), so at ~150 bytes a line a batch of 4 KiB costs ~2 µs a request and one of 16 KiB ~0.6
 * (docs/performance.md, "The access line written directly").
 */
const LOG_BATCH = 16_384;

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
  const {
    log,
    flush: flushLines,
    close: closeLog,
  } = openLog(config.logLevel, opts.worker === true, config.logFormat);
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
  flushLines();
  const close = runtime.close;
  runtime.close = async () => {
    await close();
    log.info('shutdown complete');
    closeLog();
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

/**
 * The server's log on standard output: buffered, asynchronous writes (a synchronous write per request
 * line costs ~20% of throughput). Lines are gathered as text and handed over as one Buffer per batch
 * of whole lines (within PIPE_BUF bytes for a worker), so a line costs no Buffer of its own
 * (docs/performance.md, "The access line written directly"). What is pending leaves every 250 ms, at
 * `flush` and `close`, and when the process exits, an uncaught error's exit included, so the lines
 * before a crash are not lost with it. With `format` `pretty`, each line is rewritten for people
 * (src/platform/pretty-log.ts) before it is gathered.
 */
export function openLog(
  level: string,
  worker: boolean,
  format: 'json' | 'pretty' = 'json',
): { log: pino.Logger; flush(): void; close(): void } {
  const destination = pino.destination(
    worker
      ? { dest: 1, sync: false, minLength: 0, maxWrite: PIPE_BUF, contentMode: 'buffer' }
      : { dest: 1, sync: false, minLength: 0, contentMode: 'buffer' },
  );
  const lines = batchedLines(
    // In buffer mode `write` takes a Buffer; the package's types declare only the text mode's string.
    (bytes) => destination.write(bytes as unknown as string),
    worker ? PIPE_BUF : LOG_BATCH,
  );
  const stream = format === 'pretty' ? { write: (line: string) => lines.write(prettyLine(line)) } : lines;
  const log = pino({ level, base: { pid: process.pid } }, stream);
  const timer = setInterval(() => {
    lines.flush();
    destination.flush();
  }, 250);
  timer.unref();
  const flushNow = () => {
    lines.flush();
    try {
      destination.flushSync();
    } catch {
      // Not open yet (the process ends before its first turn), or standard output is gone.
    }
  };
  process.once('exit', flushNow);
  return {
    log,
    flush: () => lines.flush(),
    close: () => {
      clearInterval(timer);
      process.removeListener('exit', flushNow);
      flushNow();
    },
  };
}

/**
 * Log lines gathered as text and handed to `write` as one Buffer of whole lines once they reach
 * `limit` bytes (or at `flush`): a batch never exceeds `limit` unless a single line does, and then
 * that line goes alone.
 */
export function batchedLines(
  write: (bytes: Buffer) => void,
  limit: number,
): { write(line: string): void; flush(): void } {
  let pending = '';
  let pendingBytes = 0;
  const flush = () => {
    if (pendingBytes === 0) return;
    const bytes = Buffer.from(pending);
    pending = '';
    pendingBytes = 0;
    write(bytes);
  };
  return {
    write(line) {
      const n = Buffer.byteLength(line);
      if (pendingBytes + n > limit) flush();
      pending += line;
      pendingBytes += n;
      if (pendingBytes >= limit) flush();
    },
    flush,
  };
}
