import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onSendAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { AppContext } from '../context.js';
import {
  type Access,
  accessForPath,
  anonymousCaller,
  authorize,
  type Caller,
  originAllowed,
} from './auth.js';
import { AppError, TITLES, Unauthorized } from './errors.js';
import { bodyHash, REPLAYED_HEADERS, validateIdempotencyKey } from './idempotency.js';
import type { Decision } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
    idem: { scope: string; key: string } | null;
    startedAt: number;
  }
  interface FastifyContextConfig {
    /** Which credentials the route accepts; defaults by path (platform/auth.ts accessForPath). */
    access?: Access;
    /** Honour the Idempotency-Key header (every creating POST turns this on). */
    idempotent?: boolean;
  }
}

const CORS_EXPOSE =
  'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Idempotent-Replayed';
const METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

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

function toArray<T>(v: T | T[] | undefined): T[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** A problem+json body (SPEC.md 7.1). */
export function problem(
  baseUrl: string,
  requestId: string,
  status: number,
  slug: string,
  detail: string,
  extras = {},
) {
  return {
    type: `${baseUrl}/errors/${slug}`,
    title: TITLES[slug] ?? 'Error',
    status,
    detail,
    request_id: requestId,
    ...extras,
  };
}

function fieldPath(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra) parts.push(extra);
  return parts.join('.');
}

type AjvIssue = { instancePath?: string; keyword: string; message?: string; params: Record<string, unknown> };

/** Maps schema validation issues to `errors`: field (dot path) → message. */
export function validationErrors(issues: AjvIssue[], context: string | undefined): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const issue of issues) {
    let field = fieldPath(issue.instancePath ?? '');
    let message = issue.message ?? 'is invalid';
    if (issue.keyword === 'required') {
      field = fieldPath(issue.instancePath ?? '', String(issue.params.missingProperty));
      message = 'is required';
    } else if (issue.keyword === 'additionalProperties') {
      field = fieldPath(issue.instancePath ?? '', String(issue.params.additionalProperty));
      message = 'is not a known field';
    } else if (issue.keyword === 'format' && issue.params.format === 'email') {
      message = 'must be a valid e-mail address';
    } else if (issue.keyword === 'format' && issue.params.format === 'date-time') {
      message = 'must be an ISO 8601 timestamp with an offset, e.g. 2026-06-10T14:00:00Z';
    }
    if (!field) field = context === 'body' ? 'body' : (context ?? 'request');
    if (!(field in errors)) errors[field] = message;
  }
  return errors;
}

/** Cross-cutting HTTP behaviour: request ids, auth, rate limits, CORS, idempotency, errors, metrics. */
export function registerPlatform(app: FastifyInstance, ctx: AppContext): void {
  const { config, auth, limiter, usage, idempotency, metrics } = ctx;
  const router = FindMyWay();

  app.decorateRequest('caller', null as unknown as Caller);
  app.decorateRequest('idem', null);
  app.decorateRequest('startedAt', 0);

  // Idempotency (route option `idempotent`): claim before the handler, store the answer before it leaves.
  // Attached only to the routes that declare it (see onRoute), so other requests pay nothing.
  const claimIdempotency: preHandlerAsyncHookHandler = async (request, reply) => {
    const key = validateIdempotencyKey(request.headers['idempotency-key']);
    if (key === null) return;
    const c = request.caller;
    const scope = c.principalId ?? `anon:${request.routeOptions.url ?? ''}:${request.url.split('?', 1)[0]}`;
    const path = request.url.split('?', 1)[0] ?? '';
    const claim = await idempotency.claim(scope, key, request.method, path, bodyHash(request.body));
    if (claim.kind === 'replay') {
      reply.code(claim.status);
      for (const [h, v] of Object.entries(claim.headers)) reply.header(h, v);
      reply.header('idempotent-replayed', 'true');
      return reply.send(claim.body);
    }
    request.idem = { scope, key };
  };

  const storeIdempotent: onSendAsyncHookHandler = async (request, reply, payload) => {
    const idem = request.idem;
    if (!idem) return payload;
    request.idem = null;
    if (reply.statusCode >= 500 || typeof payload !== 'string') {
      await idempotency.release(idem.scope, idem.key);
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const h of REPLAYED_HEADERS) {
      const v = reply.getHeader(h);
      if (v !== undefined) headers[h] = String(v);
    }
    await idempotency.complete(idem.scope, idem.key, reply.statusCode, headers, payload);
    return payload;
  };

  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent) {
      route.preHandler = [claimIdempotency, ...toArray(route.preHandler)];
      route.onSend = [...toArray(route.onSend), storeIdempotent];
    }
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if (METHODS.includes(m as HTTPMethod)) {
        try {
          router.on(m as HTTPMethod, route.url, () => {});
        } catch {
          // same path registered twice with different constraints: the first one is enough here
        }
      }
    }
  });

  /** Rate-limit headers, the CORS answer and the final 429/401/403 decision, once caller and tokens are known. */
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
      const seconds = Math.max(1, Math.ceil((decision.resetAt - ctx.clock.nowMs()) / 1000));
      throw new AppError(
        429,
        'rate-limit-exceeded',
        `Rate limit of ${decision.limit} requests per hour exceeded; retry after ${retryAt}`,
        { retry_after: retryAt },
        { 'retry-after': String(seconds) },
      );
    }
    if (authError) throw authError;
    authorize(request.caller, access, request.method, origin);
  }

  /** Authenticates, rate-limits and authorizes; returns a promise only when it must wait for the database. */
  function gate(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    request.startedAt = performance.now();
    reply.header('x-request-id', request.id);
    const q = request.url.indexOf('?');
    const path = q === -1 ? request.url : request.url.slice(0, q);
    const access: Access = request.routeOptions.config?.access ?? accessForPath(path);
    if (access === 'none' && !path.startsWith('/v1/')) return undefined;

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
    const anonymous = () => anonymousCaller(request.ip, config.anonymousRateLimitPerHour);
    // Fast path: a cached credential and a token already leased — no promise, no database.
    const cached = token === null ? undefined : auth.cached(token);
    if (token === null || cached !== undefined) {
      const caller = cached ?? anonymous();
      request.caller = caller;
      const quick = limiter.takeCached(caller.rateSubject, caller.rateLimit);
      if (quick !== null) {
        admit(request, reply, access, authError, quick);
        return undefined;
      }
      return limiter
        .take(caller.rateSubject, caller.rateLimit)
        .then((d) => admit(request, reply, access, authError, d));
    }
    return auth.authenticate(token).then(
      (caller) => {
        request.caller = caller;
        return limiter
          .take(caller.rateSubject, caller.rateLimit)
          .then((d) => admit(request, reply, access, null, d));
      },
      (err: unknown) => {
        if (!(err instanceof AppError)) throw err;
        const anon = anonymous();
        request.caller = anon;
        return limiter
          .take(anon.rateSubject, anon.rateLimit)
          .then((d) => admit(request, reply, access, err, d));
      },
    );
  }

  app.addHook('onRequest', (request, reply, done) => {
    let pending: Promise<void> | undefined;
    try {
      pending = gate(request, reply);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (pending === undefined) done();
    else pending.then(() => done(), done);
  });

  app.addHook('onResponse', async (request, reply) => {
    const seconds = (performance.now() - request.startedAt) / 1000;
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observe(request.method, route, reply.statusCode, seconds);
    const c = request.caller;
    if (c?.keyId) usage.record(c.keyId, reply.statusCode, reply.statusCode === 429);
    request.log.info(
      {
        request_id: request.id,
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(seconds * 1000),
      },
      'request',
    );
  });

  // Preflight for the public booking surface (browsers send it without credentials).
  app.options(
    '/v1/public/*',
    { config: { access: 'none' }, schema: { hide: true } },
    async (request, reply) => {
      const origin = request.headers.origin;
      if (origin) reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
      reply
        .header('access-control-allow-methods', 'GET, POST, OPTIONS')
        .header('access-control-allow-headers', 'Authorization, Content-Type, Idempotency-Key')
        .header('access-control-max-age', '600')
        .code(204)
        .send();
    },
  );

  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '/';
    const allow = METHODS.filter((m) => router.find(m, path) !== null);
    if (allow.length > 0 && !allow.includes(request.method as HTTPMethod)) {
      reply.header('allow', allow.join(', '));
      return sendProblem(
        reply,
        request,
        405,
        'method-not-allowed',
        `${request.method} is not allowed on ${path}`,
      );
    }
    return sendProblem(reply, request, 404, 'not-found', `No route ${request.method} ${path}`);
  });

  app.setErrorHandler(async (error: FastifyError | AppError | Error, request, reply) => {
    if (error instanceof AppError) {
      for (const [h, v] of Object.entries(error.headers)) reply.header(h, v);
      return sendProblem(reply, request, error.status, error.slug, error.message, error.extras);
    }
    const fe = error as FastifyError & { validationContext?: string; code?: string };
    if (fe.validation) {
      const errors = validationErrors(fe.validation as AjvIssue[], fe.validationContext);
      const detail = `Invalid ${fe.validationContext ?? 'request'}: ${Object.entries(errors)
        .map(([f, m]) => `${f} ${m}`)
        .join('; ')}`;
      return sendProblem(reply, request, 400, 'validation-error', detail, { errors });
    }
    switch (fe.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendProblem(reply, request, 413, 'payload-too-large', 'The request body is larger than 1 MiB');
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendProblem(
          reply,
          request,
          415,
          'unsupported-media-type',
          `Content-Type ${request.headers['content-type'] ?? '(none)'} is not supported; send application/json`,
        );
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return sendProblem(reply, request, 400, 'validation-error', 'The JSON body is empty', {
          errors: { body: 'must be a JSON object' },
        });
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendProblem(
          reply,
          request,
          400,
          'validation-error',
          'Content-Length does not match the body',
          {
            errors: { body: 'has a wrong Content-Length' },
          },
        );
    }
    if (
      fe.statusCode === 400 &&
      (error instanceof SyntaxError || fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
    ) {
      return sendProblem(reply, request, 400, 'validation-error', 'The body is not valid JSON', {
        errors: { body: 'is not valid JSON' },
      });
    }
    const pgCode = (error as { code?: string }).code;
    if (pgCode === '23505' || pgCode === '23P01') {
      return sendProblem(
        reply,
        request,
        409,
        'conflict',
        'The request conflicts with the current state of the resource',
      );
    }
    if (pgCode === 'ECONNREFUSED' || pgCode === '57P01' || pgCode === '57P03' || pgCode === '53300') {
      reply.header('retry-after', '5');
      return sendProblem(
        reply,
        request,
        503,
        'service-unavailable',
        'The data store is unreachable; retry shortly',
      );
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return sendProblem(
        reply,
        request,
        fe.statusCode,
        fe.statusCode === 404 ? 'not-found' : 'validation-error',
        fe.message,
      );
    }
    request.log.error({ err: error, request_id: request.id }, 'unhandled error');
    return sendProblem(
      reply,
      request,
      500,
      'internal-error',
      'An internal error occurred; it has been logged',
    );
  });

  function sendProblem(
    reply: FastifyReply,
    request: FastifyRequest,
    status: number,
    slug: string,
    detail: string,
    extras: object = {},
  ) {
    return reply
      .code(status)
      .type('application/problem+json')
      .send(JSON.stringify(problem(config.baseUrl, request.id, status, slug, detail, extras)));
  }
}
