/**
 * The routes of hosts' connect links (docs/api.md#hosts): an account makes a signed, expiring link;
 * the host opens it and connects their own calendar (OAuth, CalDAV or an ICS feed) in their browser.
 */
import { actorOf } from '../../platform/actor.js';
import { answer, noContent, withExample } from '../../platform/openapi.js';
import { emptyBodyIsObject, type TypedApp } from '../../platform/routes.js';
import { PAGE_EXAMPLE, sendOutcome } from './browser.js';
import {
  ConnectLinkAnswer,
  ConnectLinkBody,
  HostParams,
  HtmlPage,
  LinkCaldavForm,
  type LinkForm,
  LinkIcsForm,
  PublicConnectParams,
  PublicConnectQuery,
} from './schemas.js';
import type { CalendarService } from './service.js';

export function connectLinkRoutes(app: TypedApp, calendars: CalendarService): void {
  app.post(
    '/v1/hosts/:id/connect-link',
    {
      config: { access: 'private', idempotent: true },
      preValidation: emptyBodyIsObject,
      schema: {
        operationId: 'createConnectLink',
        tags: ['Hosts'],
        summary:
          'A signed, expiring link through which the host connects their own calendar (the account never ' +
          'sees their credentials)',
        params: HostParams,
        body: withExample(ConnectLinkBody, { expires_in_hours: 72 }),
        response: {
          201: answer('The link to send to the host', ConnectLinkAnswer, {
            connect_link: {
              url: 'https://kairos.acme-physio.example/v1/public/connect/cl_6QmZ2xV9rT4wK8nB1pD7sF3hJ5',
              expires_at: '2054-06-11T10:00:00.000Z',
              host_id: '0190a4c2-7b1e-7d3a-9f4e-2c8b5d6a1e03',
              providers: ['google', 'microsoft'],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const link = await calendars.createConnectLink(
        actorOf(request.caller),
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
            operationId: kind === 'caldav' ? 'connectCaldavViaLink' : 'addIcsFeedViaLink',
            tags: ['Hosts'],
            summary:
              kind === 'caldav'
                ? 'A host connects a CalDAV account through its connect link (the page’s form)'
                : 'A host adds a calendar feed (ICS) through its connect link (the page’s form)',
            security: [],
            consumes: ['application/x-www-form-urlencoded', 'application/json'],
            produces: ['text/html'],
            params: PublicConnectParams,
            body:
              kind === 'caldav'
                ? withExample(LinkCaldavForm, {
                    server_url: 'https://caldav.icloud.com/',
                    username: 'maya.chen@icloud.com',
                    password: 'abcd-efgh-ijkl-mnop',
                  })
                : withExample(LinkIcsForm, { url: 'https://calendar.example.org/feeds/7f3a9c1e/basic.ics' }),
            response: { 200: answer('A page saying the calendar is connected', HtmlPage, PAGE_EXAMPLE) },
          },
        },
        async (request, reply) =>
          sendOutcome(
            request,
            reply,
            await calendars.connectViaLink(
              (request.params as { token: string }).token,
              kind,
              request.body as LinkForm,
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
        operationId: 'openConnectLink',
        tags: ['Hosts'],
        summary:
          'A host’s connect link: a page to choose the provider, or (with ?provider=) a redirect to its ' +
          'consent screen and a cookie that binds the flow to this browser',
        security: [],
        produces: ['text/html'],
        params: PublicConnectParams,
        querystring: PublicConnectQuery,
        response: {
          200: answer(
            'The page that offers each way to connect a calendar',
            HtmlPage,
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Connect your calendar</title></head>' +
              '<body><h1>Connect your calendar</h1><p><a href="?provider=google">Google</a></p>' +
              '<p><a href="?provider=microsoft">Microsoft</a></p></body></html>',
          ),
          302: noContent('With ?provider=: a redirect to the provider’s consent screen (Location header)'),
        },
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
