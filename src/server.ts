import pino from 'pino';
import type { Config } from './config.js';
import { type Runtime, startRuntime } from './runtime.js';

/** `kairos serve`: the runtime with the HTTP app listening and, unless turned off, the workers. */
export async function startServer(config: Config): Promise<Runtime> {
  // Buffered, asynchronous log writes: a synchronous write per request line costs ~20% of throughput.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const log = pino({ level: config.logLevel, base: { pid: process.pid } }, destination);
  const flushLogs = setInterval(() => destination.flush(), 250);
  flushLogs.unref();
  const runtime = await startRuntime({ config, log, httpLogger: log, listen: true });
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

export function installSignalHandlers(
  running: Pick<Runtime, 'close'>,
  log: { info(msg: string): void },
): void {
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
