import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Access, anonymousCaller, authorize, type Caller, originAllowed } from './auth.js';
import type { Clock } from './clock.js';
import { isInnerDispatch } from './dispatch.js';
import { AppError, Unauthorized } from './errors.js';
import type { Decision } from './rate-limit.js';

const CORS_EXPOSE =
  'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Idempotent-Replayed';

/** ISO strings of window ends, computed once per window rather than once per request. */
let lastIsoMs = -1;
let lastIso = '';
function isoOf(ms: number): string {
  if (ms !== lastIsoMs) {
    lastIsoMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** What the gate needs: credential resolution, the rate limiter and the clock (ports, not modules). */
export interface GateDeps {
  /** `baseUrl`: Kairos's own address; its pages (the embed's iframe) call the API from its origin. */
  config: { anonymousRateLimitPerHour: number; baseUrl?: string };
  auth: {
    cached(token: string): Caller | undefined;
    authenticate(token: string): Promise<Caller>;
  };
  limiter: {
    takeCached(subject: string, limit: number): Decision | null;
    take(subject: string, limit: number): Promise<Decision>;
  };
  clock: Clock;
  /** Test keys' clocks (platform/test-clocks.ts): read once per test-mode request, never in live mode. */
  testClocks: { clockFor(accountId: string): Promise<Clock> };
}

/**
 * The access gate: authenticates, rate-limits and authorizes a request for the access rule the caller
 * hands it (the matched route's declared `config.access`). Returns a promise only when it must wait
 * for the database; throws (or rejects with) the AppError to answer with.
 */
export function createGate(deps: GateDeps) {
  const { config, auth, clock } = deps;
  // A request dispatched in-process by one already counted (platform/dispatch.ts) takes no token.
  const unmetered = (limit: number): Decision => ({ allowed: true, limit, remaining: limit, resetAt: 0 });
  const meter = (request: FastifyRequest) =>
    isInnerDispatch(request)
      ? {
          takeCached: (_s: string, limit: number) => unmetered(limit),
          take: async (_s: string, limit: number) => unmetered(limit),
        }
      : deps.limiter;

  // The origin of KAIROS_BASE_URL (read when asked: a test server learns its address after start).
  let ownFor: string | undefined;
  let own: string | null = null;
  const ownOrigin = (): string | null => {
    if (config.baseUrl !== ownFor) {
      ownFor = config.baseUrl;
      try {
        own = config.baseUrl ? new URL(config.baseUrl).origin : null;
      } catch {
        own = null;
      }
    }
    return own;
  };

  /** Rate-limit headers, the CORS answer and the final 429/401/403 decision, once caller and tokens are known. */
  /** A test key's request runs on its account's test clock (docs/api.md#test-clock); live ones as they are. */
  function testTime(request: FastifyRequest): Promise<void> | undefined {
    const caller = request.caller;
    if (caller.livemode || caller.accountId === null) return undefined;
    return deps.testClocks.clockFor(caller.accountId).then((c) => {
      request.caller = { ...caller, clock: c };
    });
  }

  function admit(
    request: FastifyRequest,
    reply: FastifyReply,
    access: Access,
    authError: AppError | null,
    decision: Decision,
  ): void {
    reply.header('x-ratelimit-limit', String(decision.limit));
    reply.header('x-ratelimit-remaining', String(decision.remaining));
    reply.header('x-ratelimit-reset', isoOf(decision.resetAt));
    const origin = request.headers.origin;
    if (access === 'public' && origin !== undefined) {
      const allowed =
        request.caller.kind !== 'publishable' ||
        request.caller.allowedDomains.length === 0 ||
        originAllowed(origin, request.caller.allowedDomains);
      if (allowed) {
        reply.header('access-control-allow-origin', origin);
        reply.header('access-control-expose-headers', CORS_EXPOSE);
        reply.header('vary', 'Origin');
      }
    }
    if (!decision.allowed) {
      const retryAt = isoOf(decision.resetAt);
      const seconds = Math.max(1, Math.ceil((decision.resetAt - clock.nowMs()) / 1000));
      throw new AppError(
        429,
        'rate-limit-exceeded',
        `Rate limit of ${decision.limit} requests per hour exceeded; retry after ${retryAt}. ` +
          (request.caller.keyId !== null || request.caller.kind === 'session'
            ? 'The operator raises an account’s limit with `kairos accounts update <account id> --plan premium|enterprise [--rate-limit N]`.'
            : 'Anonymous calls are limited per client address (KAIROS_ANON_RATE_LIMIT_PER_HOUR).'),
        { retry_after: retryAt },
        { 'retry-after': String(seconds) },
      );
    }
    if (authError) throw authError;
    // Kairos's own pages are not a foreign origin: the embed's iframe sends an embed's publishable key
    // from there, and where that iframe may be shown is the key's allowed domains (frame-ancestors).
    authorize(
      request.caller,
      access,
      request.method,
      origin === ownOrigin() ? undefined : origin,
      request.routeOptions.config?.scope,
    );
  }

  return function gate(
    request: FastifyRequest,
    reply: FastifyReply,
    access: Access,
  ): Promise<void> | undefined {
    if (access === 'unmetered') return undefined;
    const limiter = meter(request);
    const header = request.headers.authorization;
    let token: string | null = null;
    let authError: AppError | null = null;
    if (header !== undefined && access !== 'none') {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (m?.[1]) token = m[1];
      else authError = new Unauthorized();
    } else if (access === 'private' || access === 'availability') {
      authError = new Unauthorized();
    }
    // Fast path: a cached credential and a token already leased — no promise, no database.
    const cached = token === null ? undefined : auth.cached(token);
    if (token === null || cached !== undefined) {
      const caller = cached ?? anonymousCaller(request.ip, config.anonymousRateLimitPerHour, clock);
      request.caller = caller;
      const quick = limiter.takeCached(caller.rateSubject, caller.rateLimit);
      if (quick !== null) {
        admit(request, reply, access, authError, quick);
        return caller.livemode ? undefined : testTime(request);
      }
      return limiter.take(caller.rateSubject, caller.rateLimit).then((d) => {
        admit(request, reply, access, authError, d);
        return testTime(request);
      });
    }
    return auth.authenticate(token).then(
      (caller) => {
        request.caller = caller;
        return limiter.take(caller.rateSubject, caller.rateLimit).then((d) => {
          admit(request, reply, access, null, d);
          return testTime(request);
        });
      },
      (err: unknown) => {
        if (!(err instanceof AppError)) throw err;
        const anon = anonymousCaller(request.ip, config.anonymousRateLimitPerHour, clock);
        request.caller = anon;
        return limiter
          .take(anon.rateSubject, anon.rateLimit)
          .then((d) => admit(request, reply, access, err, d));
      },
    );
  };
}
