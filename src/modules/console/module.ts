import cluster from 'node:cluster';
import { defineModule } from '../module.js';
import type { ConsoleApi, ConsoleNeeds } from './api.js';
import { consoleRoutes } from './routes.js';
import { ConsoleService } from './service.js';

/**
 * The console (README.md, Console): the account's key management interface and everything an
 * operator does by hand, a client of the API served under `/console`. On start with no account the
 * server logs a one-time setup link.
 */
export const consoleModule = defineModule<ConsoleNeeds>()({
  name: 'console',
  needs: ['accounts'],
  create({ platform, needs, events }) {
    const service = new ConsoleService(platform.db, platform.clock, needs, platform.keys.linkKey);
    const api: ConsoleApi = { setupLink: () => service.setupLink() };
    // The platform's log is typed for errors only; the runtime's has `info` (src/runtime.ts RuntimeLog).
    const log = platform.log as { info?: (obj: object, msg: string) => void };
    return {
      api,
      routes: (app) =>
        consoleRoutes(
          app,
          service,
          () => platform.config.baseUrl,
          () => platform.clock.nowMs(),
          [...events.keys()].sort(),
        ),
      // Runs once the process starts serving: the one moment to tell the operator how to get in.
      listen: [
        async () => {
          // `serve --processes N` starts this in every worker: the first one alone makes and logs the link.
          if (cluster.isWorker && cluster.worker?.id !== 1) return;
          const link = await service.setupLink();
          if (link === null) return;
          const url = `${platform.config.baseUrl.replace(/\/$/, '')}${link}`;
          log.info?.(
            { setup_link: url },
            `No account yet: open ${url} to create the first one (single use, 24 hours)`,
          );
        },
      ],
    };
  },
});
