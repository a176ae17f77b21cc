import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { sql } from 'kysely';
import type { Db } from './db/store.js';
import { registerApiReference } from './platform/api-reference.js';
import { type ErrorCode, PLATFORM_503, statusesOf } from './platform/errors.js';
import { createPlatform, type PlatformDeps } from './platform/http.js';
import { prefixedId } from './platform/ids.js';
import type { Metrics } from './platform/metrics.js';
import {
  declareHeaders,
  guides,
  liftComponents,
  type RouteHeaders,
  TAG_GROUPS,
  TAGS,
} from './platform/openapi.js';
import { type DeclaredEvent, webhooksDocument } from './platform/openapi-webhooks.js';
import { sendProblem } from './platform/problems.js';
import type { TypedApp } from './platform/routes.js';
import { COMPONENT, Problem } from './platform/schemas.js';
import { buildSerializer } from './platform/serializer.js';
import { isTimeZone, TIME_ZONE_FORMAT, validatorCompiler } from './platform/validation.js';

export const BODY_LIMIT = 1024 * 1024;

/** `store_unavailable` → `StoreUnavailable`. */
const pascal = (code: string) => code.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());

/** Error responses every documented route may give, added to the OpenAPI document. */
const COMMON_ERRORS: Record<string, string> = {
  '400': 'Validation error (problem+json, `errors` maps fields to messages)',
  '401': 'Missing or invalid credential',
  '403':
    'Forbidden (publishable key outside the public surface, missing scope, origin, inaccessible principal)',
  '404': 'Not found',
  '429': 'Rate limit exceeded (`retry_after`, Retry-After)',
  '500': 'Internal error',
  '503': 'Service unavailable',
};

export interface BuildOptions {
  /** A pino logger; none (silent) when omitted. */
  logger?: FastifyBaseLogger;
}

/** What the app needs from the process: the HTTP platform, the store (readiness) and the metrics. */
export interface AppDeps extends PlatformDeps {
  config: PlatformDeps['config'] & { trustProxy: boolean };
  db: Db;
  metrics: Metrics;
  /** The webhook events the modules declare: the document's top-level `webhooks`. */
  events?: ReadonlyMap<string, DeclaredEvent>;
}

/**
 * The Fastify app, without listening (tests use inject or listen on port 0): the platform's hooks,
 * the operational routes, and each module's route plugin (src/runtime.ts passes them).
 */
export async function buildApp(
  ctx: AppDeps,
  routes: readonly ((app: TypedApp) => void)[] = [],
  opts: BuildOptions = {},
): Promise<FastifyInstance> {
  const platform = createPlatform(ctx);
  const app = Fastify({
    ...platform.serverOptions,
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    bodyLimit: BODY_LIMIT,
    trustProxy: ctx.config.trustProxy,
    // One log line per request, written in onResponse (platform/http.ts), labelled with the request id.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: () => prefixedId('req'),
    // No pino child logger per request (measurable on the hot path): log lines carry request_id themselves.
    childLoggerFactory: (logger) => logger,
    // Requests that arrive while the app drains are answered by the shutdown hook below (problem+json).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ajv: {
      customOptions: { removeAdditional: false, allErrors: true, coerceTypes: 'array', useDefaults: true },
    },
    // The serializer compiles answers that hold a union with Ajv: it must know Kairos's own format.
    serializerOpts: { ajv: { formats: { [TIME_ZONE_FORMAT]: isTimeZone } } },
    // Unions of string constants and nullable fields written without Ajv (platform/serializer.ts).
    schemaController: { compilersFactory: { buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON is the only body format: anything else is 415 (text/plain would otherwise parse as a string).
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler(() => app.getSchemas()));
  app.addSchema(Problem);
  // What each documented route's config says about its answers' headers, gathered by `transform`.
  const routeHeaders = new Map<string, RouteHeaders>();
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Kairos API',
        version: '1.0.0',
        summary: 'Scheduling and booking: availability, bookings, booking links, calendars, webhooks',
        description: guides(ctx.config.baseUrl),
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      tags: TAGS.map((t) => ({ ...t })),
      // Sidebar groups (an extension both Scalar and Redocly read; fastify-swagger's types omit x- keys).
      ...{ 'x-tagGroups': TAG_GROUPS.map((g) => ({ ...g, tags: [...g.tags] })) },
      servers: [{ url: ctx.config.baseUrl }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A secret key (svc_sk_live_…), a publishable key (svc_pk_live_…) or a session token (JWT)',
          },
        },
      },
      security: [{ bearer: [] }],
      webhooks: webhooksDocument(ctx.events ?? new Map()),
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    // Named schemas become components; every answer's headers are declared (platform/openapi.ts).
    transformObject: (documents) => {
      const doc = (documents as { openapiObject: Record<string, unknown> }).openapiObject;
      return declareHeaders(liftComponents(doc), routeHeaders);
    },
    transform: ({ schema, url, route }) => {
      const s = { ...(schema ?? {}) } as Record<string, unknown>;
      for (const method of [route.method].flat()) {
        routeHeaders.set(`${method} ${url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`, {
          metered: route.config?.access !== 'unmetered',
          idempotent: route.config?.idempotent === true,
        });
      }
      // A query parameter with a default may be left out: the document must not call it required.
      const query = s.querystring as {
        properties?: Record<string, { default?: unknown }>;
        required?: string[];
      };
      if (query?.required && query.properties) {
        const properties = query.properties;
        s.querystring = {
          ...query,
          required: query.required.filter((k) => properties[k]?.default === undefined),
        };
      }
      const responses = { ...((s.response as Record<string, unknown>) ?? {}) };
      // A problem response; with codes, `code` is narrowed to them (docs/api.md, Errors: a closed set).
      const problemRef = (description: string, codes: readonly ErrorCode[] = []) => ({
        description:
          codes.length === 0
            ? description
            : `${description}. Codes: ${codes.map((c) => `\`${c}\``).join(', ')}`,
        content: {
          'application/problem+json': {
            schema:
              codes.length === 0
                ? { $ref: 'Problem#' }
                : {
                    // One component per set of codes (`ShuttingDownOrOverloadedProblem`), wherever it is answered.
                    [COMPONENT]: `${codes.map(pascal).join('Or')}Problem`,
                    allOf: [
                      { $ref: 'Problem#' },
                      { type: 'object', properties: { code: { type: 'string', enum: [...codes] } } },
                    ],
                  },
          },
        },
      });
      for (const [status, doc] of Object.entries(route.config?.problems ?? {})) {
        const { description, codes } = typeof doc === 'string' ? { description: doc, codes: [] } : doc;
        for (const c of codes) {
          // A code listed under a status it is not declared with is a mistake in the route (or the module).
          if (!statusesOf(c).includes(Number(status))) {
            throw new Error(`${route.method} ${url}: code ${c} is not declared for status ${status}`);
          }
        }
        // Every operation's 503 may carry the platform's codes (store, overload, shutdown).
        const all = status === '503' ? [...new Set([...codes, ...PLATFORM_503])] : codes;
        responses[status] ??= problemRef(description, all);
      }
      // Who may call (platform/auth.ts Access): `none` and `unmetered` look at no credential, `public`
      // takes an optional one, every other route the global bearer.
      const access = route.config?.access;
      const anonymous = access === 'none' || access === 'unmetered';
      delete s.security;
      if (anonymous) s.security = [];
      else if (access === 'public') s.security = [{}, { bearer: [] }];
      for (const [code, description] of Object.entries(COMMON_ERRORS)) {
        // A route that reads no credential refuses none (unless its handler does: `config.problems`).
        if (anonymous && (code === '401' || code === '403')) continue;
        if (!(code in responses))
          responses[code] = problemRef(description, code === '503' ? PLATFORM_503 : []);
      }
      if (url.includes(':')) responses['414'] ??= problemRef('A path segment is longer than 100 characters');
      if (route.config?.idempotent) {
        responses['409'] ??= problemRef('Conflict, or idempotency-key-in-use while the first request runs');
        responses['422'] ??= problemRef('idempotency-key-reused: the key was used with another request');
        s.headers ??= {
          type: 'object',
          properties: {
            'idempotency-key': {
              type: 'string',
              maxLength: 256,
              pattern: '^[A-Za-z0-9_\\-:.]+$',
              description: 'Replays the first response for 24 hours instead of acting again',
            },
          },
        };
      }
      // Fastify reads a body on these methods (on DELETE when one is sent).
      if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(String(route.method))) {
        responses['413'] ??= problemRef('Body larger than 1 MiB');
        responses['415'] ??= problemRef('Body is not JSON');
      }
      // A route that answers browsers (`produces: text/html`) shows them a page for its own failures.
      if ((s.produces as string[] | undefined)?.includes('text/html')) {
        for (const [code, r] of Object.entries(responses)) {
          const res = r as { description: string; content?: Record<string, unknown> };
          if (!/^4/.test(code) || !res.content?.['application/problem+json']) continue;
          responses[code] = {
            ...res,
            description: `${res.description}; a page instead when the browser accepts text/html`,
            content: { ...res.content, 'text/html': { schema: { type: 'string' } } },
          };
        }
      }
      // Rules across fields (or against stored data) that a schema cannot say: named in the description.
      const checks: string[] = [];
      for (const part of ['params', 'querystring', 'body'] as const) {
        const partSchema = s[part] as { 'x-checks'?: readonly string[] } | undefined;
        if (!partSchema?.['x-checks']) continue;
        checks.push(...partSchema['x-checks']);
        const { 'x-checks': _, ...rest } = partSchema;
        s[part] = rest;
      }
      if (checks.length > 0) {
        const intro = 'Checked beyond the schema (a 400 naming the field):';
        s.description = [s.description, `${intro}\n${checks.map((c) => `- ${c}`).join('\n')}`]
          .filter(Boolean)
          .join('\n\n');
      }
      s.response = responses;
      return { schema: s as typeof schema, url };
    },
  });
  // Draining (SIGTERM): in-flight requests finish; one that arrives now, on a connection kept alive,
  // is told to go elsewhere. Nothing has run for it, so it may be retried as it is.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  // A callback hook, not an async one: no promise per request for a check that almost never answers.
  app.addHook('onRequest', (request, reply, done) => {
    if (!draining) {
      done();
      return;
    }
    reply.header('connection', 'close').header('retry-after', '1');
    sendProblem(
      ctx.config,
      reply,
      request,
      503,
      'service-unavailable',
      'The server is shutting down; retry',
      {
        code: 'shutting_down',
      },
    );
  });
  platform.register(app);
  // The API reference (/docs): static, no credential, not rate-limited.
  registerApiReference(app, { specUrl: '/v1/openapi.json', baseUrl: ctx.config.baseUrl });

  app.get('/v1/openapi.json', { config: { access: 'none' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );

  app.get('/healthz', { config: { access: 'unmetered' }, schema: { hide: true } }, async () => ({
    status: 'ok',
  }));
  app.get('/readyz', { config: { access: 'unmetered' }, schema: { hide: true } }, async (request, reply) => {
    try {
      await sql`SELECT 1`.execute(ctx.db);
      return { status: 'ready' };
    } catch {
      reply.header('retry-after', '5');
      return sendProblem(
        ctx.config,
        reply,
        request,
        503,
        'service-unavailable',
        'The data store is unreachable; retry shortly',
      );
    }
  });
  app.get(
    '/metrics',
    { config: { access: 'unmetered' }, schema: { hide: true } },
    async (_request, reply) => {
      reply.type(ctx.metrics.registry.contentType);
      return ctx.metrics.text();
    },
  );
  for (const register of routes) register(app);
  return app;
}
