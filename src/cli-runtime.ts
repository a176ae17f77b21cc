/**
 * The store-backed CLI commands' runtime (`kairos accounts …`, `users …`, `keys …`, `mail …`,
 * `migrate`): the store and only the modules those commands use, loaded on demand. No HTTP app, no
 * LISTEN connection, no workers — and none of the code behind them: loading the whole application
 * (Fastify, the MCP server, Stripe, the asset bundler, every module) was most of a command's time
 * (docs/performance.md, "The CLI's start").
 */
import type { Config } from './config.js';
import { openStore, type Store } from './db/store.js';
import { JobRunner } from './jobs/runner.js';
import type { AccountsApi } from './modules/accounts/api.js';
import type { ApiKeysApi } from './modules/api-keys/api.js';
import type { MailApi } from './modules/mail/api.js';
import { compose, type ModuleDefinition, type Platform } from './modules/module.js';
import { CredentialCache } from './platform/auth.js';
import { systemClock } from './platform/clock.js';
import { deriveKeys } from './platform/keys.js';
import { Metrics } from './platform/metrics.js';
import { TestClocks } from './platform/test-clocks.js';
import { UsageRecorder } from './platform/usage.js';
import type { RuntimeLog } from './runtime.js';

/** The APIs of the modules the CLI uses, by module name (as the runtime's `modules`). */
export interface CliModules {
  principals: unknown;
  apiKeys: ApiKeysApi;
  accounts: AccountsApi;
  mail: MailApi;
}

export interface CliRuntime {
  modules: CliModules;
  close(): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: any module, whatever it needs (checked as it is composed)
type AnyDefinition = ModuleDefinition<string, any, unknown>;

/** The modules the CLI composes, in the order of src/modules/index.ts's MODULES. */
const LOADERS: readonly (() => Promise<AnyDefinition>)[] = [
  async () => (await import('./modules/principals/module.js')).principalsModule,
  async () => (await import('./modules/api-keys/module.js')).apiKeysModule,
  async () => (await import('./modules/accounts/module.js')).accountsModule,
  async () => (await import('./modules/mail/module.js')).mailModule,
];

/** Opens the configured store (migrating it, as every start does) and composes the CLI's modules. */
export async function startCliRuntime(config: Config, log: RuntimeLog): Promise<CliRuntime> {
  const [store, definitions] = await Promise.all([
    openStore(config, log),
    Promise.all(LOADERS.map((load) => load())),
  ]);
  try {
    return assemble(config, log, store, definitions);
  } catch (err) {
    await store.close();
    throw err;
  }
}

function assemble(
  config: Config,
  log: RuntimeLog,
  store: Store,
  definitions: readonly AnyDefinition[],
): CliRuntime {
  const clock = systemClock;
  const jobs = new JobRunner(store.db, clock, log); // never started: jobs are only enqueued
  const usage = new UsageRecorder(store.db, clock, (err) => log.error({ err }, 'usage flush failed'));
  const platform: Platform = {
    config,
    db: store.db,
    clock,
    keys: deriveKeys(store.masterKey),
    metrics: new Metrics(store.pool),
    usage,
    jobs,
    revocations: new CredentialCache(clock),
    testClocks: new TestClocks(store.db, clock),
    log,
  };
  const { apis, built } = compose(platform, definitions);
  return {
    modules: apis as unknown as CliModules,
    async close() {
      for (const { parts } of built) await parts.close?.().catch(() => {});
      await usage.close();
      await store.close(); // stops the embedded server if this process started it
    },
  };
}
