import { type IncomingMessage, STATUS_CODES, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
  RouteOptions,
} from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { accessLogWriter } from './access-log.js';
import { type Access, accessForUnmatched, type Caller, targetPath } from './auth.js';
import { isInnerDispatch } from './dispatch.js';
import { AppError, type ErrorCode, ValidationFailed } from './errors.js';
import { createGate, type GateDeps } from './gate.js';
import type { IdempotencyStore } from './idempotency.js';
import { idempotencyHooks } from './idempotency-hooks.js';
import { prefixedId } from './ids.js';
import type { Metrics } from './metrics.js';
import { problem, registerErrorHandler, sendAppError, sendProblem } from './problems.js';
import type { UsageRecorder } from './usage.js';
import { refusedFields } from './validation.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
    idem: { scope: string; key: string } | null;
    startedAt: number;
  }
  interface FastifyContextConfig {
    /** Which credentials the route accepts (platform/auth.ts Access). Every route must declare it. */
    access?: Access;
    /** Honour the Idempotency-Key header (every creating POST turns this on). */
    idempotent?: boolean;
    /**
     * The secret-key scope the route needs whatever its method (default: `read` for GET and HEAD,
     * `write` otherwise). `read` suits a POST that changes nothing by itself: the MCP endpoint, whose
     * tool calls each pass the gate again with their own method.
     */
    scope?: 'read' | 'write';
    /**
     * Route-specific error answers for the OpenAPI document (status → when, and the problem `code`s that
     * status may carry), beside the common ones. A status whose answers carry a `code` must list it: the
     * document narrows `code` to the listed ones (the platform's 503 codes are added to every 503).
     */
    problems?: Record<string, string | ProblemDoc>;
  }
}

/** One documented error status of a route: when it happens and the codes it may carry. */
export interface ProblemDoc {
  description: string;
  codes: readonly ErrorCode[];
}

const METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function toArray<T>(v: T | T[] | undefined): T[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** What the HTTP platform needs from the process: ports and platform services, no module. */
export interface PlatformDeps extends GateDeps {
  config: GateDeps['config'] & { baseUrl: string };
  usage: Pick<UsageRecorder, 'record'>;
  idempotency: Pick<IdempotencyStore, 'claim' | 'complete' | 'release'>;
  metrics: Pick<Metrics, 'observe'>;
}

/**
 * Cross-cutting HTTP behaviour: request ids, the access gate, rate limits, CORS, idempotency, errors,
 * metrics. `serverOptions` go into the Fastify constructor (answers Fastify gives before any route or
 * hook runs: malformed URLs, over-long path parameters, broken HTTP); `register` adds the rest.
 */
export function createPlatform(deps: PlatformDeps): {
  serverOptions: Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler'> & {
    http: ServerOptions;
  };
  register(app: FastifyInstance): void;
} {
  const { config, usage, metrics } = deps;
  const gate = createGate(deps);

  /** Runs the gate; calls `done` with the error to answer with, if any. */
  function runGate(
    request: FastifyRequest,
    reply: FastifyReply,
    access: Access,
    done: (err?: Error) => void,
  ): void {
    request.startedAt = performance.now();
    reply.header('x-request-id', request.id);
    let pending: Promise<void> | undefined;
    try {
      pending = gate(request, reply, access);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (pending === undefined) done();
    else pending.then(() => done(), done);
  }

  /**
   * Answers Fastify gives before routing: a request target that does not decode (`%ZZ`, a lone `%`,
   * `%C0%AE`) and a path parameter over 100 characters. They pass the gate like any unmatched request
   * (so they carry X-Request-Id and the rate-limit headers, and count against the caller).
   */
  const frameworkErrors: FastifyServerOptions['frameworkErrors'] = (error, request, reply) => {
    const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
    runGate(request, reply, accessForUnmatched(request.url), (err) => {
      if (err instanceof AppError) {
        sendAppError(config, reply, request, err);
      } else if (err) {
        request.log.error({ err, request_id: request.id }, 'unhandled error');
        sendProblem(
          config,
          reply,
          request,
          500,
          'internal-error',
          'An internal error occurred; it has been logged',
        );
      } else if (tooLong) {
        sendProblem(
          config,
          reply,
          request,
          414,
          'uri-too-long',
          'A path segment is longer than 100 characters',
        );
      } else {
        sendProblem(
          config,
          reply,
          request,
          400,
          'bad-request',
          'The request target has malformed percent-encoding',
          {
            errors: { url: 'has malformed percent-encoding' },
          },
        );
      }
    });
  };

  /** A problem body with a fresh request id, for answers given before any request object exists. */
  function freshProblem(status: number, slug: string, detail: string): { id: string; body: string } {
    const id = prefixedId('req');
    return { id, body: JSON.stringify(problem(config.baseUrl, id, status, slug, detail)) };
  }

  /** Ends a connection with a problem+json answer written on the socket. */
  function endWithProblem(socket: Duplex, status: number, slug: string, detail: string): void {
    const { id, body } = freshProblem(status, slug, detail);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
  }

  /** Requests Node's HTTP parser refuses (oversized headers, broken syntax, timeouts): no route, no caller. */
  function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      endWithProblem(socket, 408, 'request-timeout', 'The request did not arrive in time');
    } else if (err.code === 'HPE_HEADER_OVERFLOW') {
      endWithProblem(
        socket,
        431,
        'header-fields-too-large',
        'The request headers are larger than the server accepts (16 KiB)',
      );
    } else {
      endWithProblem(socket, 400, 'bad-request', 'The request is not valid HTTP/1.1');
    }
  }

  /** A problem+json answer written straight on a Node response (for answers Node would give itself). */
  function writeProblem(res: ServerResponse, status: number, slug: string, detail: string): void {
    const { id, body } = freshProblem(status, slug, detail);
    res.writeHead(status, {
      'content-type': 'application/problem+json',
      'content-length': Buffer.byteLength(body),
      'x-request-id': id,
      connection: 'close',
    });
    res.end(body);
  }

  function register(app: FastifyInstance): void {
    const router = FindMyWay();
    /**
     * The methods of each path that is a route without parameters. Such a path takes only its own
     * methods, even where a sibling with a parameter would match it (`/v1/calendars/ics` is not a
     * calendar id for `PATCH /v1/calendars/{id}`, nor `/v1/network/invitations` a principal for `DELETE
     * /v1/network/{connected_id}`): those requests are 405 with this path's `Allow`.
     */
    const staticPaths = new Map<string, Set<HTTPMethod>>();

    // CONNECT (a proxy request): Node would drop the connection without a word.
    app.server.on('connect', (_req: IncomingMessage, socket: Duplex) =>
      endWithProblem(socket, 405, 'method-not-allowed', 'CONNECT is not supported: this is not a proxy'),
    );
    // An `Expect` other than 100-continue: Node would answer a bare 417 itself.
    app.server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) =>
      writeProblem(res, 417, 'expectation-failed', 'Only the Expect: 100-continue expectation is supported'),
    );
    const idem = idempotencyHooks(deps.idempotency);
    const accessLine = accessLogWriter(app.log);
    const undeclared: RouteOptions[] = [];

    app.decorateRequest('caller', null as unknown as Caller);
    app.decorateRequest('idem', null);
    app.decorateRequest('startedAt', 0);

    app.addHook('onRoute', (route) => {
      // Checked again once the app is ready: a plugin's own hook may still fill in its routes' access.
      if (route.config?.access === undefined) undeclared.push(route);
      if (route.config?.idempotent) {
        route.preHandler = [idem.claim, ...toArray(route.preHandler)];
        route.onSend = [...toArray(route.onSend), idem.store];
      }
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const m of methods) {
        if (METHODS.includes(m as HTTPMethod)) {
          if (!route.url.includes(':') && !route.url.includes('*')) {
            const known = staticPaths.get(route.url) ?? new Set<HTTPMethod>();
            staticPaths.set(route.url, known.add(m as HTTPMethod));
          }
          try {
            router.on(m as HTTPMethod, route.url, () => {});
          } catch {
            // same path registered twice with different constraints: the first one is enough here
          }
        }
      }
    });

    app.addHook('onReady', async () => {
      const missing = undeclared
        .filter((r) => r.config?.access === undefined)
        .map((r) => `${String(r.method)} ${r.url}`);
      undeclared.length = 0;
      if (missing.length > 0) {
        throw new Error(`Every route must declare config.access; these do not: ${missing.join(', ')}`);
      }
    });

    // The gate decides from the matched route's declared access, never from the request target; a
    // request that matches no route is gated by its canonical path only to choose 401/403 or 404.
    app.addHook('onRequest', (request, reply, done) => {
      // HTTP/1.1 requires Host (Node's own check is off: it answers a bare 400).
      if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
        request.startedAt = performance.now();
        reply.header('x-request-id', request.id);
        done(new AppError(400, 'bad-request', 'An HTTP/1.1 request must carry a Host header'));
        return;
      }
      // A body-less request that names a JSON content type (clients often send it on every call) is
      // not an empty JSON document: nothing is parsed.
      if (
        request.headers['content-type'] !== undefined &&
        request.headers['transfer-encoding'] === undefined &&
        (request.headers['content-length'] === undefined || request.headers['content-length'] === '0')
      ) {
        delete request.headers['content-type'];
      }
      if (
        !request.is404 &&
        !(request.routeOptions.url?.includes(':') && staticPaths.has(targetPath(request.url)))
      ) {
        runGate(request, reply, request.routeOptions.config.access as Access, done);
        return;
      }
      // A request that matches no route is answered here, once gated (401/403/429 and the rate-limit
      // headers as on the routes): its 404 or 405 needs nothing of the request, so no body is read.
      // Otherwise Fastify's body handling would answer first — a QUERY without Content-Type is its
      // 400, a body of no known type a 415 — and hide that the path does not take the method.
      runGate(request, reply, accessForUnmatched(request.url), (err) => {
        if (err) done(err);
        else void answerUnmatched(request, reply);
      });
    });

    // U+0000 in any text (path parameter, query value, body string or key), or a body nested deeper
    // than MAX_BODY_DEPTH, is a 400, for every route.
    app.addHook('preValidation', (request, _reply, done) => {
      const errors = refusedFields(request.url, request.params, request.query, request.body);
      if (errors) done(new ValidationFailed(errors));
      else done();
    });

    // A callback hook, not an async one: no promise per request for work that never waits.
    app.addHook('onResponse', (request, reply, done) => {
      const seconds = (performance.now() - request.startedAt) / 1000;
      const route = request.routeOptions.url ?? 'unmatched';
      metrics.observe(request.method, route, reply.statusCode, seconds);
      const c = request.caller;
      if (c?.keyId && !isInnerDispatch(request))
        usage.record(c.keyId, reply.statusCode, reply.statusCode === 429);
      accessLine({
        request_id: request.id,
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(seconds * 1000),
      });
      done();
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

    /**
     * No route: 405 with `Allow` when the path takes other methods (whatever this one is: QUERY,
     * PROPFIND, SEARCH, TRACE…), else 404.
     */
    function answerUnmatched(request: FastifyRequest, reply: FastifyReply) {
      const path = targetPath(request.url);
      const own = staticPaths.get(path);
      const allow = METHODS.filter((m) => (own ? own.has(m) : router.find(m, path) !== null));
      if (allow.length > 0 && !allow.includes(request.method as HTTPMethod)) {
        reply.header('allow', allow.join(', '));
        return sendProblem(
          config,
          reply,
          request,
          405,
          'method-not-allowed',
          `${request.method} is not allowed on ${path}`,
        );
      }
      return sendProblem(config, reply, request, 404, 'not-found', `No route ${request.method} ${path}`);
    }
    // Requests without a route are answered in onRequest; this stays for any that reach routing's end.
    app.setNotFoundHandler(async (request, reply) => answerUnmatched(request, reply));

    registerErrorHandler(app, config);
  }

  return {
    // Missing Host is answered as problem+json by the onRequest hook instead of Node's bare 400.
    serverOptions: { frameworkErrors, clientErrorHandler, http: { requireHostHeader: false } },
    register,
  };
}
