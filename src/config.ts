import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { DAY } from './lib/time.js';

/** Typed configuration. This module is the only reader of process.env. */

/** Named prepared statements per database connection unless DATABASE_PREPARED_STATEMENTS says otherwise. */
export const DEFAULT_PREPARED_STATEMENTS = 200;

/** The most processes `kairos serve --processes` (KAIROS_PROCESSES) runs on one machine. */
export const MAX_PROCESSES = 64;

export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  databaseUrl: string | null;
  /**
   * Where the LISTEN connection goes when DATABASE_URL is a pooler in transaction mode, which cannot
   * keep a LISTEN (docs/operations.md, Poolers); null: DATABASE_URL.
   */
  databaseListenUrl: string | null;
  /** Base64 32-byte master secret; derived keys protect API keys, sessions and secrets at rest. */
  masterKey: string | null;
  logLevel: string;
  databasePoolMax: number;
  /** Named prepared statements per connection (db/prepared.ts); 0: none. */
  databasePreparedStatements: number;
  trustProxy: boolean;
  sessionTtlSeconds: number;
  anonymousRateLimitPerHour: number;
  allowPrivateNetwork: boolean;
  webhookRetryScheduleMs: number[];
  webhookTimeoutMs: number;
  smtpUrl: string | null;
  /** The From: of every mail Kairos sends (mail module). */
  mailFrom: string;
  /** How long freed time is held for a waitlist entry before it passes on (bookings module). */
  waitlistHoldMinutes: number;
  /** How long a calendar provider's busy answer counts as fresh (calendars module, busy-cache.ts). */
  busyCacheTtlSeconds: number;
  /** Time limit of one request to a calendar provider (Google, Microsoft, CalDAV, ICS). */
  providerTimeoutMs: number;
  providers: {
    google: {
      clientId: string;
      clientSecret: string;
      authorizeUrl: string;
      tokenUrl: string;
      /** Where tokens are revoked when a Google connection is removed. */
      revokeUrl: string;
      apiUrl: string;
    };
    microsoft: {
      clientId: string;
      clientSecret: string;
      authorizeUrl: string;
      tokenUrl: string;
      graphUrl: string;
    };
  };
  /** Stripe (payments module); paid bookings are off without a secret key. */
  stripe: {
    secretKey: string | null;
    webhookSecret: string | null;
    /** The secret of a separate Connect endpoint, when Stripe signs Connect events with their own. */
    connectWebhookSecret: string | null;
    /**
     * Test mode's Stripe key (docs/api.md#test-mode): test-mode payments use it and never the live key;
     * without it a priced test link answers 422 `payments_not_configured`.
     */
    testSecretKey: string | null;
    /** The secret Stripe signs test-mode events with (the test endpoint's): they act on test mode only. */
    testWebhookSecret: string | null;
    /** Where the `stripe` package sends its requests (a local emulator in tests). */
    apiUrl: string;
    /** How long a paid booking's time is held for its payment (Checkout's minimum is 30 min). */
    holdMinutes: number;
    /** Platform fee on a connected account's payments, in basis points of the amount. */
    platformFeeBps: number;
  };
  /** Run background workers in this process (webhook deliveries, reapers, cleanup). */
  workers: boolean;
  /** `kairos serve`: processes sharing the port on this machine (src/cluster.ts); 1: this one alone. */
  processes: number;
  /**
   * Started by npm (`npm start`, `npm run kairos -- serve`: npm sets `npm_lifecycle_event`): `serve`
   * stops, as on SIGTERM, once the process that started it is gone. npm passes its SIGTERM or SIGINT to
   * the shell it runs the script in, not to the server under that shell.
   */
  stopWithParent: boolean;
  /** How the server writes its log: `json` (one object a line) or `pretty` (lines for people). */
  logFormat: 'json' | 'pretty';
  /**
   * How long operational rows are kept before the purges delete them, in milliseconds
   * (docs/operations.md, Retention). Business records (bookings, proposals, consents, accounts) are
   * never purged.
   */
  retention: RetentionConfig;
}

/** Retention periods in milliseconds, read from the `KAIROS_*_RETENTION_DAYS` variables. */
export interface RetentionConfig {
  /** Events (`GET /v1/events/{id}`) once no delivery of theirs is left. */
  eventsMs: number;
  /** Finished webhook deliveries (succeeded or failed) and their attempts. */
  deliveriesMs: number;
  /** Mails no longer pending in the outbox (sent, logged, failed, skipped). */
  mailMs: number;
  /** Hourly per-key usage counters (`GET /v1/api-keys/{id}/stats`). */
  usageMs: number;
  /** Sessions after they expired or were revoked. */
  expiredMs: number;
  /** The ids of handled Stripe events (each is processed once while its id is kept). */
  stripeEventsMs: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(
      `${name} must be an integer between ${min} and ${max} (got ${JSON.stringify(raw)})`,
    );
  }
  return n;
}

function bool(env: Env, name: string, dflt: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return dflt;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got ${JSON.stringify(env[name])})`);
}

/**
 * A retention period given in days; fractions are allowed (`0.0035` is about five minutes), so short
 * runs (the soak) can watch retention work. At least one minute, at most ten years.
 */
function days(env: Env, name: string, dflt: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt * DAY;
  const n = Number(raw);
  if (!/^\s*\d+(\.\d+)?\s*$/.test(raw) || !Number.isFinite(n) || n * DAY < 60_000 || n > 3650) {
    throw new ConfigError(
      `${name} must be a number of days from 0.0007 (one minute) to 3650 (got ${JSON.stringify(raw)})`,
    );
  }
  return Math.round(n * DAY);
}

/** Parses `1m,5m,30m` (units ms, s, m, h) into milliseconds. */
export function parseDurationList(raw: string, name: string): number[] {
  return raw.split(',').map((part) => {
    const m = /^\s*(\d+)\s*(ms|s|m|h)\s*$/.exec(part);
    if (!m) throw new ConfigError(`${name}: cannot parse ${JSON.stringify(part)} (use e.g. 1m,5m,30m)`);
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    return Number(m[1]) * unit;
  });
}

function url(env: Env, name: string, dflt: string): string {
  const raw = env[name] || dflt;
  try {
    new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL (got ${JSON.stringify(raw)})`);
  }
  return raw.replace(/\/+$/, '');
}

/**
 * The key `kairos mcp --url` sends as Bearer (KAIROS_API_KEY): the stdio bridge loads no other
 * configuration, since it talks to a server and opens no store.
 */
export function bridgeApiKey(env: Env = process.env): string | undefined {
  return env.KAIROS_API_KEY;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const masterKey = env.KAIROS_MASTER_KEY || null;
  if (masterKey !== null && Buffer.from(masterKey, 'base64').length < 32) {
    throw new ConfigError(
      'KAIROS_MASTER_KEY must be at least 32 bytes, base64-encoded (openssl rand -base64 32)',
    );
  }
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  }
  const databaseListenUrl = env.DATABASE_LISTEN_URL || null;
  if (
    databaseListenUrl !== null &&
    (databaseUrl === null || !/^postgres(ql)?:\/\//.test(databaseListenUrl))
  ) {
    throw new ConfigError(
      'DATABASE_LISTEN_URL must be a postgres:// URL, and is used only with DATABASE_URL',
    );
  }
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    port,
    host,
    baseUrl: url(env, 'KAIROS_BASE_URL', `http://${displayHost}:${port}`),
    dataDir: resolve(env.KAIROS_DATA_DIR || './data'),
    databaseUrl,
    databaseListenUrl,
    masterKey,
    logLevel: env.LOG_LEVEL || 'info',
    databasePoolMax: int(env, 'DATABASE_POOL_MAX', 10, 1, 500),
    databasePreparedStatements: int(
      env,
      'DATABASE_PREPARED_STATEMENTS',
      DEFAULT_PREPARED_STATEMENTS,
      0,
      10_000,
    ),
    trustProxy: bool(env, 'KAIROS_TRUST_PROXY', false),
    sessionTtlSeconds: int(env, 'KAIROS_SESSION_TTL_SECONDS', 3600, 60, 30 * 86400),
    anonymousRateLimitPerHour: int(env, 'KAIROS_ANON_RATE_LIMIT_PER_HOUR', 1000, 1, 100_000_000),
    allowPrivateNetwork: bool(env, 'KAIROS_ALLOW_PRIVATE_NETWORK', false),
    webhookRetryScheduleMs: parseDurationList(
      env.KAIROS_WEBHOOK_RETRY_SCHEDULE || '1m,5m,30m',
      'KAIROS_WEBHOOK_RETRY_SCHEDULE',
    ),
    webhookTimeoutMs: int(env, 'KAIROS_WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    smtpUrl: env.SMTP_URL || null,
    mailFrom: env.MAIL_FROM || 'Kairos <no-reply@kairos.localhost>',
    waitlistHoldMinutes: int(env, 'KAIROS_WAITLIST_HOLD_MINUTES', 15, 1, 7 * 24 * 60),
    busyCacheTtlSeconds: int(env, 'KAIROS_BUSY_CACHE_TTL_SECONDS', 300, 5, 86_400),
    providerTimeoutMs: int(env, 'KAIROS_PROVIDER_TIMEOUT_MS', 15_000, 100, 120_000),
    providers: {
      google: {
        clientId: env.GOOGLE_CLIENT_ID || '',
        clientSecret: env.GOOGLE_CLIENT_SECRET || '',
        authorizeUrl: url(env, 'GOOGLE_AUTHORIZE_URL', 'https://accounts.google.com/o/oauth2/v2/auth'),
        tokenUrl: url(env, 'GOOGLE_TOKEN_URL', 'https://oauth2.googleapis.com/token'),
        revokeUrl: url(env, 'GOOGLE_REVOKE_URL', 'https://oauth2.googleapis.com/revoke'),
        apiUrl: url(env, 'GOOGLE_CALENDAR_API_URL', 'https://www.googleapis.com/calendar/v3'),
      },
      microsoft: {
        clientId: env.MICROSOFT_CLIENT_ID || '',
        clientSecret: env.MICROSOFT_CLIENT_SECRET || '',
        authorizeUrl: url(
          env,
          'MICROSOFT_AUTHORIZE_URL',
          'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
        ),
        tokenUrl: url(
          env,
          'MICROSOFT_TOKEN_URL',
          'https://login.microsoftonline.com/common/oauth2/v2.0/token',
        ),
        graphUrl: url(env, 'MICROSOFT_GRAPH_URL', 'https://graph.microsoft.com/v1.0'),
      },
    },
    stripe: {
      secretKey: env.STRIPE_SECRET_KEY || null,
      webhookSecret: env.STRIPE_WEBHOOK_SECRET || null,
      connectWebhookSecret: env.STRIPE_CONNECT_WEBHOOK_SECRET || null,
      testSecretKey: env.STRIPE_TEST_SECRET_KEY || null,
      testWebhookSecret: env.STRIPE_TEST_WEBHOOK_SECRET || null,
      apiUrl: url(env, 'STRIPE_API_URL', 'https://api.stripe.com'),
      holdMinutes: int(env, 'KAIROS_PAYMENT_HOLD_MINUTES', 30, 30, 24 * 60),
      platformFeeBps: int(env, 'KAIROS_PLATFORM_FEE_BPS', 0, 0, 10_000),
    },
    workers: bool(env, 'KAIROS_WORKERS', true),
    processes: int(env, 'KAIROS_PROCESSES', 1, 1, MAX_PROCESSES),
    stopWithParent: Boolean(env.npm_lifecycle_event),
    logFormat: logFormat(env),
    retention: retention(env),
  };
}

/**
 * KAIROS_LOG_FORMAT: `pretty` or `json`; unset, `pretty` when standard output is a terminal (a person
 * reads it) and `json` otherwise (a log collector does).
 */
function logFormat(env: Env): 'json' | 'pretty' {
  const raw = env.KAIROS_LOG_FORMAT;
  if (raw === undefined || raw === '') return process.stdout.isTTY ? 'pretty' : 'json';
  if (raw === 'json' || raw === 'pretty') return raw;
  throw new ConfigError(`KAIROS_LOG_FORMAT must be pretty or json (got ${JSON.stringify(raw)})`);
}

function retention(env: Env): RetentionConfig {
  const eventsMs = days(env, 'KAIROS_EVENT_RETENTION_DAYS', 30);
  return {
    eventsMs,
    deliveriesMs: days(env, 'KAIROS_DELIVERY_RETENTION_DAYS', eventsMs / DAY),
    mailMs: days(env, 'KAIROS_MAIL_RETENTION_DAYS', 30),
    usageMs: days(env, 'KAIROS_USAGE_RETENTION_DAYS', 30),
    expiredMs: days(env, 'KAIROS_EXPIRED_RETENTION_DAYS', 1),
    stripeEventsMs: days(env, 'KAIROS_STRIPE_EVENT_RETENTION_DAYS', 30),
  };
}

export function generateMasterKey(): string {
  return randomBytes(32).toString('base64');
}
