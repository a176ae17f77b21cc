/**
 * The console (README.md, Console), served by the API server under `/console`, hidden from the
 * OpenAPI document (pages and a proxy, not API):
 * - the pages: one HTML shell per page around the `console` client (src/web/console), with a strict
 *   Content-Security-Policy (scripts and styles from this server only, nothing inline, no framing);
 * - `POST /console/setup` (a one-time setup link's form), `POST /console/session` (sign in) and
 *   `DELETE /console/session` (sign out everywhere): the session token goes into an httpOnly,
 *   SameSite=Strict cookie scoped to `/console` and nowhere else;
 * - `/console/api/v1/…`: the API, reached in-process with the cookie's session as the Bearer token.
 *   Every state-changing request must come from this origin (`Origin` / `Sec-Fetch-Site`) and carry
 *   the session's CSRF proof in `X-CSRF-Token` (delivered in the page's HTML).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../../lib/html.js';
import { clientBundle } from '../../platform/assets.js';
import { contentSecurityPolicy, SAME_ORIGIN_ASSETS } from '../../platform/csp.js';
import { innerDispatchHeaders } from '../../platform/dispatch.js';
import { AppError, Forbidden, Unauthorized } from '../../platform/errors.js';
import type { TypedApp } from '../../platform/routes.js';
import { type PageData, SetupBody, SignInBody } from './schemas.js';
import type { ConsoleService, SignedIn } from './service.js';

export const COOKIE = 'kairos_console';
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The console's pages: path → title. Pages of a signed-in user redirect to sign-in without a session. */
const PAGES: Record<string, { title: string; signedIn: boolean }> = {
  '/console': { title: 'Overview', signedIn: true },
  '/console/keys': { title: 'API keys', signedIn: true },
  '/console/webhooks': { title: 'Webhooks', signedIn: true },
  '/console/hosts': { title: 'Hosts and calendars', signedIn: true },
  '/console/links': { title: 'Booking links', signedIn: true },
  '/console/bookings': { title: 'Bookings', signedIn: true },
  '/console/polls': { title: 'Proposals and polls', signedIn: true },
  '/console/network': { title: 'Consents and network', signedIn: true },
  '/console/sign-in': { title: 'Sign in', signedIn: false },
  '/console/setup': { title: 'Set up Kairos', signedIn: false },
};

/** The console's policy: this server's assets only, no plugins, never framed. */
export function consolePolicy(): string {
  return contentSecurityPolicy({
    'default-src': "'self'",
    ...SAME_ORIGIN_ASSETS,
    'object-src': "'none'",
    'base-uri': "'none'",
    'frame-ancestors': "'none'",
  });
}

function cookieOf(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === COOKIE) {
      const v = part.slice(i + 1).trim();
      return v.length > 0 ? v : null;
    }
  }
  return null;
}

function secure(request: FastifyRequest, baseUrl: string): boolean {
  return request.protocol === 'https' || baseUrl.startsWith('https:');
}

function setSessionCookie(reply: FastifyReply, session: SignedIn | null, isSecure: boolean, nowMs = 0): void {
  const attrs = ['Path=/console', 'HttpOnly', 'SameSite=Strict', ...(isSecure ? ['Secure'] : [])];
  if (session === null) {
    reply.header('set-cookie', [`${COOKIE}=`, 'Max-Age=0', ...attrs].join('; '));
    return;
  }
  const seconds = Math.max(1, Math.floor((Date.parse(session.expires_at) - nowMs) / 1000));
  reply.header('set-cookie', [`${COOKIE}=${session.token}`, `Max-Age=${seconds}`, ...attrs].join('; '));
}

/** The origins this server answers as: the one the browser addressed, and KAIROS_BASE_URL's (behind a proxy). */
function ownOrigins(request: FastifyRequest, baseUrl: string): string[] {
  const origins = [`${request.protocol}://${request.headers.host ?? ''}`];
  try {
    origins.push(new URL(baseUrl).origin);
  } catch {}
  return origins;
}

/**
 * Refuses a request that a page of another origin made: `Sec-Fetch-Site` must be same-origin when
 * sent, `Origin` this server's when sent, and one of them must be sent (every current browser does).
 * SameSite cookies alone would not do: another port of this host is the same site.
 */
function sameOrigin(request: FastifyRequest, baseUrl: string): void {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  const refuse = (why = '') => new Forbidden(`The console accepts changes only from its own pages${why}`);
  if (site !== undefined && site !== 'same-origin') throw refuse();
  if (origin !== undefined && !ownOrigins(request, baseUrl).includes(origin)) throw refuse();
  if (site === undefined && origin === undefined) throw refuse(' (no Origin was sent)');
}

function pageHtml(o: { title: string; script: string; css: string; data: PageData }): string {
  const json = JSON.stringify(o.data).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(o.title)} · Kairos console</title>
<link rel="icon" type="image/svg+xml" href="/favicon.svg">
<link rel="stylesheet" href="${o.css}">
<script type="module" src="${o.script}"></script>
</head>
<body><div id="app"><p class="loading">Loading the console…</p>
<noscript><p>The Kairos console needs JavaScript.</p></noscript></div>
<script type="application/json" id="console-data">${json}</script>
</body></html>`;
}

export function consoleRoutes(
  app: TypedApp,
  service: ConsoleService,
  baseUrl: () => string,
  nowMs: () => number,
  eventTypes: readonly string[],
): void {
  const hide = { hide: true };

  /** Runs an API request in-process for the session; not counted again (platform/dispatch.ts). */
  const inject = (
    token: string,
    method: string,
    url: string,
    extra: { body?: unknown; idempotencyKey?: string } = {},
  ) => {
    const headers: Record<string, string> = {
      ...innerDispatchHeaders(),
      authorization: `Bearer ${token}`,
    };
    if (extra.idempotencyKey !== undefined) headers['idempotency-key'] = extra.idempotencyKey;
    if (extra.body !== undefined) headers['content-type'] = 'application/json';
    return app.inject({
      method: method as 'GET',
      url,
      headers,
      ...(extra.body !== undefined ? { payload: JSON.stringify(extra.body) } : {}),
    });
  };

  for (const [path, def] of Object.entries(PAGES)) {
    app.get(path, { config: { access: 'unmetered' }, schema: hide }, async (request, reply) => {
      const bundle = await clientBundle('console');
      const script = bundle.entries.get('app');
      const css = bundle.entries.get('console');
      if (!script || !css) throw new Error('src/web/console has no app.ts or console.css');
      const token = cookieOf(request);
      let data: PageData = { page: path, csrf: null, user: null };
      if (token !== null) {
        const me = await inject(token, 'GET', '/v1/me');
        const sid = service.sessionIdOf(token);
        if (me.statusCode === 200 && sid !== null) {
          const body = me.json() as { user: { email: string } | null; account: { name: string } };
          data = {
            page: path,
            csrf: service.csrfFor(sid),
            user: { email: body.user?.email ?? '', account_name: body.account.name },
            ...(path === '/console/webhooks' ? { events: [...eventTypes] } : {}),
          };
        } else {
          setSessionCookie(reply, null, secure(request, baseUrl()));
        }
      }
      if (def.signedIn && data.user === null) return reply.redirect('/console/sign-in', 303);
      if (path === '/console/sign-in' && data.user !== null) return reply.redirect('/console', 303);
      // Before the first account, sign-in cannot work: the page says how to get the setup link instead.
      if (data.user === null && !(await service.hasAccount())) data = { ...data, no_account: true };
      reply
        .header('content-security-policy', consolePolicy())
        .header('referrer-policy', 'no-referrer')
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8');
      return pageHtml({ title: def.title, script: script.path, css: css.path, data });
    });
  }

  // A typed or bookmarked `/console/` lands on the overview rather than a 404.
  app.get('/console/', { config: { access: 'none' }, schema: hide }, async (request, reply) => {
    const q = request.url.indexOf('?');
    return reply.redirect(`/console${q < 0 ? '' : request.url.slice(q)}`, 308);
  });

  app.get<{ Querystring: { token?: string } }>(
    '/console/setup/state',
    { config: { access: 'none' }, schema: hide },
    async (request) => ({ state: await service.setupState(request.query.token ?? '') }),
  );

  app.post(
    '/console/setup',
    { config: { access: 'none' }, schema: { hide: true, body: SetupBody } },
    async (request, reply) => {
      sameOrigin(request, baseUrl());
      const done = await service.completeSetup(request.body);
      setSessionCookie(reply, done.session, secure(request, baseUrl()), nowMs());
      reply.code(201).header('cache-control', 'no-store');
      return { api_key: { key: done.key, prefix: done.keyPrefix }, user: { email: done.session.email } };
    },
  );

  app.post(
    '/console/session',
    { config: { access: 'none' }, schema: { hide: true, body: SignInBody } },
    async (request, reply) => {
      sameOrigin(request, baseUrl());
      const session = await service.signIn(request.body);
      setSessionCookie(reply, session, secure(request, baseUrl()), nowMs());
      reply.code(201).header('cache-control', 'no-store');
      return { user: { email: session.email } };
    },
  );

  /** The session of a state-changing console request, once its origin and CSRF proof are checked. */
  const checked = (request: FastifyRequest): { token: string; sid: string } => {
    const token = cookieOf(request);
    const sid = token === null ? null : service.sessionIdOf(token);
    if (token === null || sid === null) throw new Unauthorized('Sign in to the console first');
    if (!SAFE.has(request.method)) {
      sameOrigin(request, baseUrl());
      const proof = request.headers['x-csrf-token'];
      if (!service.csrfValid(sid, typeof proof === 'string' ? proof : undefined)) {
        throw new Forbidden('The request lacks the console’s CSRF proof (X-CSRF-Token)');
      }
    }
    return { token, sid };
  };

  app.delete('/console/session', { config: { access: 'none' }, schema: hide }, async (request, reply) => {
    const { token } = checked(request);
    const res = await inject(token, 'DELETE', '/v1/sessions/current');
    setSessionCookie(reply, null, secure(request, baseUrl()));
    if (res.statusCode !== 204 && res.statusCode !== 401) {
      reply.code(res.statusCode).type('application/problem+json');
      return res.body;
    }
    return reply.code(204).send(null);
  });

  const FORWARD = [
    'content-type',
    'location',
    'retry-after',
    'idempotent-replayed',
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
  ];

  app.route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/console/api/*',
    config: { access: 'unmetered' },
    schema: hide,
    // Before the body is parsed: a cross-site form post is refused as such, whatever it sends.
    onRequest: async (request) => {
      const { sid } = checked(request);
      if (!service.take(sid)) {
        throw new AppError(
          429,
          'rate-limit-exceeded',
          'This console session made too many requests this hour; use an API key for automation.',
          {},
          { 'retry-after': '60' },
        );
      }
    },
    handler: async (request, reply) => {
      const { token } = checked(request);
      const url = request.url.slice('/console/api'.length);
      if (!url.startsWith('/v1/')) throw new Forbidden('The console proxies /v1 only');
      const key = request.headers['idempotency-key'];
      const res = await inject(token, request.method, url, {
        ...(request.body !== undefined && request.body !== null ? { body: request.body } : {}),
        ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
      });
      reply.code(res.statusCode).header('cache-control', 'no-store');
      for (const h of FORWARD) {
        const v = res.headers[h];
        if (v !== undefined) reply.header(h, String(v));
      }
      return reply.send(res.rawPayload.length > 0 ? res.rawPayload : null);
    },
  });
}
