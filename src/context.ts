import type pg from 'pg';
import type { Config } from './config.js';
import type { Notifier } from './db/notify.js';
import type { Db, Store } from './db/store.js';
import { JobRunner } from './jobs/runner.js';
import { AccountService } from './modules/accounts/service.js';
import type { BusySource } from './modules/availability/busy-source.js';
import { ApiKeyService } from './modules/api-keys/service.js';
import { principalDirectory } from './modules/calendars/principals.js';
import { CalendarService } from './modules/calendars/service.js';
import { PrincipalService } from './modules/principals/service.js';
import { WebhookDeliverer } from './modules/webhooks/delivery.js';
import { WebhookService } from './modules/webhooks/service.js';
import { Authenticator, CredentialCache } from './platform/auth.js';
import { type Clock, systemClock } from './platform/clock.js';
import { IdempotencyStore } from './platform/idempotency.js';
import { type DerivedKeys, deriveKeys } from './platform/keys.js';
import { Metrics } from './platform/metrics.js';
import { RateLimiter } from './platform/rate-limit.js';
import { UsageRecorder } from './platform/usage.js';

/** Everything a request or a job needs, built once per process. */
export interface AppContext {
  config: Config;
  db: Db;
  pool: pg.Pool;
  clock: Clock;
  keys: DerivedKeys;
  limiter: RateLimiter;
  usage: UsageRecorder;
  auth: Authenticator;
  idempotency: IdempotencyStore;
  jobs: JobRunner;
  metrics: Metrics;
  notifier: Notifier | null;
  /** Where availability reads busy time (calendars, bookings); modules register theirs. */
  busySources: BusySource[];
  services: {
    apiKeys: ApiKeyService;
    accounts: AccountService;
    webhooks: WebhookService;
    principals: PrincipalService;
    calendars: CalendarService;
  };
}

export interface ContextDeps {
  config: Config;
  db: Db;
  pool: pg.Pool;
  masterKey: string;
  clock: Clock;
  notifier?: Notifier | null;
  log: { error(obj: object, msg: string): void };
}

/** The context of a process running on an opened store, on the system clock. */
export function contextForStore(
  config: Config,
  store: Store,
  log: ContextDeps['log'],
  notifier: Notifier | null = null,
): AppContext {
  return createContext({
    config,
    db: store.db,
    pool: store.pool,
    masterKey: store.masterKey,
    clock: systemClock,
    notifier,
    log,
  });
}

export function createContext(deps: ContextDeps): AppContext {
  const { config, db, clock } = deps;
  const keys = deriveKeys(deps.masterKey);
  const credentials = new CredentialCache(clock);
  const apiKeys = new ApiKeyService(db, clock, keys.apiKeyPepper, credentials);
  const accounts = new AccountService(db, clock, apiKeys, keys.jwtKey, config.sessionTtlSeconds, credentials);
  const outboundPolicy = { allowPrivateNetwork: config.allowPrivateNetwork };
  const webhooks = new WebhookService(db, clock, keys.encryptionKey, outboundPolicy);
  const principals = new PrincipalService(db, clock);
  const calendars = new CalendarService({
    db,
    clock,
    config,
    keys,
    directory: principalDirectory(db, () => ctx.services),
    log: deps.log,
  });
  const ctx: AppContext = {
    config,
    db,
    pool: deps.pool,
    clock,
    keys,
    limiter: new RateLimiter(db, clock),
    usage: new UsageRecorder(db, clock, (err) => deps.log.error({ err }, 'usage flush failed')),
    auth: new Authenticator(apiKeys, accounts, clock, keys.jwtKey, credentials),
    idempotency: new IdempotencyStore(db, clock, keys.encryptionKey),
    jobs: new JobRunner(db, clock, deps.log),
    metrics: new Metrics(deps.pool),
    notifier: deps.notifier ?? null,
    busySources: [],
    services: { apiKeys, accounts, webhooks, principals, calendars },
  };
  ctx.busySources.push(calendars.busySource);
  principals.useCalendarStatus(calendars);
  calendars.register(ctx.jobs);
  ctx.jobs.every('idempotency-cleanup', 15 * 60_000, () => ctx.idempotency.cleanup());
  ctx.jobs.every('rate-limit-cleanup', 15 * 60_000, () => RateLimiter.cleanup(db, clock));
  new WebhookDeliverer(
    db,
    clock,
    keys.encryptionKey,
    {
      retryScheduleMs: config.webhookRetryScheduleMs,
      timeoutMs: config.webhookTimeoutMs,
      policy: outboundPolicy,
    },
    deps.log,
  ).register(ctx.jobs);
  return ctx;
}
