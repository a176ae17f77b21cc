import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../../platform/auth.js';
import { wrap } from '../../platform/schemas.js';
import {
  AuthorizeAnswer,
  Calendar,
  CalendarList,
  CalendarParams,
  CallbackQuery,
  CaldavBody,
  ConnectionAnswer,
  ConnectLinkAnswer,
  ConnectLinkBody,
  ConnectQuery,
  DisconnectAnswer,
  DisconnectParams,
  HostParams,
  HtmlPage,
  IcsBody,
  PrincipalQuery,
  ProviderParams,
  PublicConnectParams,
  PublicConnectQuery,
  Redirect,
  CalendarUpdateBody,
  SyncAnswer,
  SyncBody,
} from './schemas.js';
import type { BrowserOutcome, CalendarService, CallerRef } from './service.js';
import { actorOf } from '../../platform/actor.js';
import { AppError, ValidationFailed } from '../../platform/errors.js';
import { emptyBodyIsObject, type TypedApp } from '../../platform/routes.js';

/** Private routes always have an authenticated account caller (platform/http.ts enforces it). */
function callerRef(caller: Caller): CallerRef {
  return actorOf(caller);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function renderPage(outcome: Extract<BrowserOutcome, { kind: 'page' }>): string {
  const links = (outcome.links ?? [])
    .map((l) => `<p><a href="${escapeHtml(l.url)}">${escapeHtml(l.label)}</a></p>`)
    .join('');
  const forms = (outcome.forms ?? [])
    .map(
      (f) =>
        `<form method="post" action="${escapeHtml(f.action)}"><h2>${escapeHtml(f.title)}</h2>` +
        f.fields
          .map(
            (x) =>
              `<p><label>${escapeHtml(x.label)}<br><input name="${escapeHtml(x.name)}" type="${x.type}" required ` +
              `autocomplete="${x.type === 'password' ? 'current-password' : 'off'}" style="width:100%"></label></p>`,
          )
          .join('') +
        `<p><button type="submit">${escapeHtml(f.submit)}</button></p></form>`,
    )
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(outcome.title)}</title></head>
<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;line-height:1.5">
<h1>${escapeHtml(outcome.title)}</h1><p>${escapeHtml(outcome.message)}</p>${links}${forms}</body></html>`;
}

/** The problem slug of a failed browser outcome, for clients that ask for JSON. */
function outcomeSlug(status: number): string {
  if (status === 404 || status === 410) return 'not-found';
  if (status === 403) return 'forbidden';
  if (status === 409) return 'conflict';
  return 'bad-request';
}

/**
 * Browser answers: no caching, and no Referer carrying a token to the next site. A failure is a page
 * for a person's browser (which accepts text/html), and problem+json for any other client.
 */
function sendOutcome(request: FastifyRequest, reply: FastifyReply, outcome: BrowserOutcome) {
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  if (outcome.cookies?.length) reply.header('set-cookie', outcome.cookies);
  if (outcome.kind === 'page' && outcome.status >= 400 && !acceptsHtml(request)) {
    throw new AppError(outcome.status, outcomeSlug(outcome.status), `${outcome.title}: ${outcome.message}`);
  }
  if (outcome.kind === 'redirect') return reply.redirect(outcome.location, 302);
  return reply.code(outcome.status).type('text/html; charset=utf-8').send(renderPage(outcome));
}

/** The request's cookies by name (RFC 6265 `Cookie` header; the first of a repeated name wins). */
function cookiesOf(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !(name in out)) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

/**
 * `principal_id` from the body or the query string, as every calendar route takes it either way; the
 * two must agree when both are given.
 */
function principalOf(fromBody: string | undefined, fromQuery: string | undefined): string | undefined {
  if (
    fromBody !== undefined &&
    fromQuery !== undefined &&
    fromBody.toLowerCase() !== fromQuery.toLowerCase()
  ) {
    throw new ValidationFailed({ principal_id: 'differs between the query string and the body' });
  }
  return fromBody ?? fromQuery;
}

function acceptsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').toLowerCase().includes('text/html');
}

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').toLowerCase().includes('application/json');
}

export function calendarRoutes(app: TypedApp, calendars: CalendarService): void {
  const tags = ['Calendars'];

  app.get(
    '/v1/calendars/:provider/connect',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary:
          'Start connecting a Google or Microsoft calendar (OAuth with PKCE): 302 to the provider, or ' +
          '{authorize_url} with Accept: application/json',
        params: ProviderParams,
        querystring: ConnectQuery,
        response: { 200: AuthorizeAnswer, 302: Redirect },
      },
    },
    async (request, reply) => {
      const actor = await calendars.actorFor(callerRef(request.caller), request.query.principal_id);
      const started = await calendars.startOAuth(actor, request.params.provider, {
        ...(request.query.redirect_uri ? { redirectUri: request.query.redirect_uri } : {}),
        ...(request.query.state !== undefined ? { clientState: request.query.state } : {}),
      });
      reply.header('cache-control', 'no-store');
      if (wantsJson(request)) return started;
      return reply.redirect(started.authorize_url, 302);
    },
  );

  app.get(
    '/v1/calendars/:provider/callback',
    {
      config: { access: 'none' },
      schema: {
        tags,
        summary:
          'Where the provider sends the browser back: stores the connection, then redirects to your ' +
          'redirect_uri with ?status=connected|error&state=… (no credential: the signed state is one)',
        security: [],
        params: ProviderParams,
        querystring: CallbackQuery,
        response: { 200: HtmlPage, 302: Redirect },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const outcome = await calendars.finishOAuth(
        request.params.provider,
        {
          ...(typeof q.code === 'string' ? { code: q.code } : {}),
          ...(typeof q.state === 'string' ? { state: q.state } : {}),
          ...(typeof q.error === 'string' ? { error: q.error } : {}),
        },
        cookiesOf(request),
      );
      return sendOutcome(request, reply, outcome);
    },
  );

  app.post(
    '/v1/calendars/caldav/connect',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        tags,
        summary: 'Connect a CalDAV account (iCloud, Fastmail, Nextcloud …): discovers its calendars',
        body: CaldavBody,
        querystring: PrincipalQuery,
        response: { 201: ConnectionAnswer },
      },
    },
    async (request, reply) => {
      const { principal_id, ...input } = request.body;
      const actor = await calendars.actorFor(
        callerRef(request.caller),
        principalOf(principal_id, request.query.principal_id),
      );
      const connection = await calendars.connectCaldav(actor, input);
      reply.code(201);
      return { connection };
    },
  );

  app.post(
    '/v1/calendars/ics',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        tags,
        summary: 'Add a read-only ICS feed (fetched once now to check it)',
        body: IcsBody,
        querystring: PrincipalQuery,
        response: { 201: ConnectionAnswer },
      },
    },
    async (request, reply) => {
      const { principal_id, ...input } = request.body;
      const actor = await calendars.actorFor(
        callerRef(request.caller),
        principalOf(principal_id, request.query.principal_id),
      );
      const connection = await calendars.connectIcs(actor, input);
      reply.code(201);
      return { connection };
    },
  );

  app.get(
    '/v1/calendars',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Calendars, provider status and connections of the caller (or one of its hosts)',
        querystring: PrincipalQuery,
        response: { 200: CalendarList },
      },
    },
    async (request) => {
      const actor = await calendars.actorFor(callerRef(request.caller), request.query.principal_id);
      return calendars.list(actor);
    },
  );

  app.get(
    '/v1/calendars/:id',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Read one calendar',
        params: CalendarParams,
        response: { 200: wrap('calendar', Calendar) },
      },
    },
    async (request) => ({
      calendar: await calendars.getCalendar(callerRef(request.caller), request.params.id),
    }),
  );

  app.patch(
    '/v1/calendars/:id',
    {
      config: {
        access: 'private',
        problems: { '422': '`unprocessable`: code `calendar_read_only` (an ICS feed as destination)' },
      },
      schema: {
        tags,
        summary: 'Select a calendar for busy checking, or make it where meetings are written',
        params: CalendarParams,
        body: CalendarUpdateBody,
        response: { 200: wrap('calendar', Calendar) },
      },
    },
    async (request) => ({
      calendar: await calendars.updateCalendar(callerRef(request.caller), request.params.id, request.body),
    }),
  );

  app.post(
    '/v1/calendars/sync',
    {
      config: { access: 'private' },
      preValidation: emptyBodyIsObject,
      schema: {
        tags,
        summary: 'Fetch busy time from every connected calendar now (503 when none could be read)',
        body: SyncBody,
        querystring: PrincipalQuery,
        response: { 200: SyncAnswer },
      },
    },
    async (request) => {
      const actor = await calendars.actorFor(
        callerRef(request.caller),
        principalOf(request.body.principal_id, request.query.principal_id),
      );
      return calendars.sync(actor);
    },
  );

  app.delete(
    '/v1/calendars/connections/:provider',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary:
          'Disconnect a provider (or one connection by id): its tokens, calendars and cache are deleted',
        params: DisconnectParams,
        querystring: PrincipalQuery,
        response: { 200: DisconnectAnswer },
      },
    },
    async (request) => {
      const actor = await calendars.actorFor(callerRef(request.caller), request.query.principal_id);
      return { connections: await calendars.disconnect(actor, request.params.provider) };
    },
  );

  app.post(
    '/v1/hosts/:id/connect-link',
    {
      config: { access: 'private', idempotent: true },
      preValidation: emptyBodyIsObject,
      schema: {
        tags: ['Hosts'],
        summary:
          'A signed, expiring link through which the host connects their own calendar (the account never ' +
          'sees their credentials)',
        params: HostParams,
        body: ConnectLinkBody,
        response: { 201: ConnectLinkAnswer },
      },
    },
    async (request, reply) => {
      const link = await calendars.createConnectLink(
        actorOf(request.caller).accountId,
        request.params.id,
        request.body,
      );
      reply.code(201);
      return { connect_link: link };
    },
  );

  // The connect page's forms post application/x-www-form-urlencoded (as browsers do); JSON works too.
  app.register(async (forms) => {
    forms.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 16_384 },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      },
    );
    for (const kind of ['caldav', 'ics'] as const) {
      forms.post(
        `/v1/public/connect/:token/${kind}`,
        {
          config: {
            access: 'none',
            problems: {
              '400': '`validation-error` (a page for browsers): the server, account or feed was refused',
              '404': '`not-found`: the link is invalid or has expired',
            },
          },
          schema: {
            tags: ['Hosts'],
            summary:
              kind === 'caldav'
                ? 'A host connects a CalDAV account through its connect link (the page’s form)'
                : 'A host adds a calendar feed (ICS) through its connect link (the page’s form)',
            security: [],
            params: PublicConnectParams,
            body:
              kind === 'caldav'
                ? Type.Object(
                    {
                      server_url: Type.String({ maxLength: 2048 }),
                      username: Type.String({ maxLength: 320 }),
                      password: Type.String({ maxLength: 1024 }),
                    },
                    { additionalProperties: false },
                  )
                : Type.Object({ url: Type.String({ maxLength: 2048 }) }, { additionalProperties: false }),
            response: { 200: HtmlPage },
          },
        },
        async (request, reply) =>
          sendOutcome(
            request,
            reply,
            await calendars.connectViaLink(
              (request.params as { token: string }).token,
              kind,
              request.body as Record<string, string | undefined>,
            ),
          ),
      );
    }
  });

  app.get(
    '/v1/public/connect/:token',
    {
      config: { access: 'none' },
      schema: {
        tags: ['Hosts'],
        summary:
          'A host’s connect link: a page to choose the provider, or (with ?provider=) a redirect to its ' +
          'consent screen and a cookie that binds the flow to this browser',
        security: [],
        params: PublicConnectParams,
        querystring: PublicConnectQuery,
        response: { 200: HtmlPage, 302: Redirect },
      },
    },
    async (request, reply) =>
      sendOutcome(
        request,
        reply,
        await calendars.openConnectLink(request.params.token, request.query.provider),
      ),
  );
}
