import type { Caller } from '../../platform/auth.js';
import type { ProblemDoc } from '../../platform/http.js';
import { answer, noContent, withExample } from '../../platform/openapi.js';
import { wrap } from '../../platform/schemas.js';
import {
  AuthorizeAnswer,
  Calendar,
  CalendarList,
  CalendarParams,
  CallbackQuery,
  CaldavBody,
  ConnectionAnswer,
  ConnectQuery,
  DisconnectAnswer,
  DisconnectParams,
  HtmlPage,
  IcsBody,
  PrincipalQuery,
  CalendarUpdateBody,
  SyncAnswer,
  SyncBody,
} from './schemas.js';
import { cookiesOf, PAGE_EXAMPLE, sendOutcome, wantsJson } from './browser.js';
import { connectLinkRoutes } from './connect-link-routes.js';
import type { CalendarService, CallerRef } from './service.js';
import { actorOf } from '../../platform/actor.js';
import { ValidationFailed } from '../../platform/errors.js';
import { emptyBodyIsObject, type TypedApp } from '../../platform/routes.js';

/** Private routes always have an authenticated account caller (platform/http.ts enforces it). */
function callerRef(caller: Caller): CallerRef {
  return actorOf(caller);
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

/** What the OpenAPI document shows (platform/openapi.ts). */
const CALENDAR = {
  id: 'cal_01jxk4a1b2c3d4e5f6g7h8j9k0',
  name: 'maya.chen@example.com',
  provider: 'google' as const,
  primary: true,
  selected: true,
  destination: true,
  connection_id: 'conn_01jxk4a0z9y8x7w6v5t4s3r2q1',
  error: null,
};
const CONNECTION = {
  id: CALENDAR.connection_id,
  provider: 'google' as const,
  status: 'connected' as const,
  status_reason: null,
  account: 'maya.chen@example.com',
  last_sync: '2054-06-08T09:00:12.514Z',
  last_error: null,
  retry_at: null,
  created_at: '2054-06-01T09:30:05.771Z',
  calendars: [
    CALENDAR,
    {
      ...CALENDAR,
      id: 'cal_01jxk4a1b2c3d4e5f6g7h8j9k1',
      name: 'Team rota',
      primary: false,
      destination: false,
    },
  ],
};
const CALDAV_CONNECTION = {
  ...CONNECTION,
  id: 'conn_01jxk6p2q3r4s5t6v7w8x9y0z1',
  provider: 'caldav' as const,
  account: 'maya@caldav.fastmail.com',
  last_sync: '2054-06-08T09:20:40.118Z',
  created_at: '2054-06-08T09:20:39.902Z',
  calendars: [
    {
      ...CALENDAR,
      id: 'cal_01jxk6p2q3r4s5t6v7w8x9y0z2',
      name: 'Personal',
      provider: 'caldav' as const,
      destination: false,
      connection_id: 'conn_01jxk6p2q3r4s5t6v7w8x9y0z1',
    },
  ],
};
/**
 * The 403 of the routes that change a principal's calendars (docs/api.md#test-mode): a test key may read
 * and sync the calendars of a principal shared with live mode (its own), not change them.
 */
const LIVE_MODE_ONLY: Record<'403', ProblemDoc> = {
  '403': {
    description:
      '`forbidden`: principal_id is neither you nor a host your account manages; code `live_mode_only`: a test key changing the calendars of a principal shared with live mode (connect test calendars to a test host)',
    codes: ['live_mode_only'],
  },
};

/** The OAuth providers: each has its own connect and callback path (no path template to collide with others). */
const OAUTH_PROVIDERS = [
  { provider: 'google', name: 'Google' },
  { provider: 'microsoft', name: 'Microsoft' },
] as const;

export function calendarRoutes(app: TypedApp, calendars: CalendarService): void {
  const tags = ['Calendars'];

  for (const { provider, name } of OAUTH_PROVIDERS) {
    app.get(
      `/v1/calendars/${provider}/connect`,
      {
        config: {
          access: 'private',
          problems: {
            '422': `\`unprocessable\`: ${name} is not configured on this server`,
            ...LIVE_MODE_ONLY,
          },
        },
        schema: {
          operationId: `connect${name}Calendar`,
          tags,
          summary:
            `Start connecting a ${name} calendar (OAuth with PKCE): 302 to ${name}’s consent screen, or ` +
            '{authorize_url} with Accept: application/json',
          querystring: ConnectQuery,
          response: {
            200: answer('With Accept: application/json, where to send the user’s browser', AuthorizeAnswer, {
              authorize_url:
                provider === 'google'
                  ? 'https://accounts.google.com/o/oauth2/v2/auth?client_id=1234.apps.googleusercontent.com&response_type=code&code_challenge_method=S256&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&state=eyJmIjoiYSJ9.c2ln'
                  : 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=6731de76-14a6-49ae-97bc-6eba6914391e&response_type=code&code_challenge_method=S256&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&state=eyJmIjoiYSJ9.c2ln',
              expires_at: '2054-06-08T09:45:00.000Z',
            }),
            302: noContent(`Otherwise a redirect to ${name}’s consent screen (Location header)`),
          },
        },
      },
      async (request, reply) => {
        const actor = await calendars.changingFor(callerRef(request.caller), request.query.principal_id);
        const started = await calendars.startOAuth(actor, provider, request.query);
        reply.header('cache-control', 'no-store');
        if (wantsJson(request)) return started;
        return reply.redirect(started.authorize_url, 302);
      },
    );

    app.get(
      `/v1/calendars/${provider}/callback`,
      {
        config: { access: 'none' },
        schema: {
          operationId: `finish${name}Connect`,
          tags,
          summary:
            `Where ${name} sends the browser back: stores the connection, then redirects to your ` +
            'redirect_uri with ?status=connected|error&state=… (no credential: the signed state is one)',
          security: [],
          produces: ['text/html'],
          querystring: CallbackQuery,
          response: {
            200: answer(
              'A page for the person in the browser (flows started from a connect link, and failures)',
              HtmlPage,
              PAGE_EXAMPLE,
            ),
            302: noContent('A redirect to your redirect_uri with ?status=connected|error&state=…'),
          },
        },
      },
      async (request, reply) => {
        const outcome = await calendars.finishOAuth(provider, request.query, cookiesOf(request));
        return sendOutcome(request, reply, outcome);
      },
    );
  }

  app.post(
    '/v1/calendars/caldav/connect',
    {
      config: { access: 'private', idempotent: true, problems: { ...LIVE_MODE_ONLY } },
      schema: {
        operationId: 'connectCaldavCalendar',
        tags,
        summary: 'Connect a CalDAV account (iCloud, Fastmail, Nextcloud …): discovers its calendars',
        body: withExample(CaldavBody, {
          server_url: 'https://caldav.fastmail.com/',
          username: 'maya@fastmail.com',
          password: 'abcd-efgh-ijkl-mnop',
        }),
        querystring: PrincipalQuery,
        response: {
          201: answer('The connection with the calendars it found', ConnectionAnswer, {
            connection: CALDAV_CONNECTION,
          }),
        },
      },
    },
    async (request, reply) => {
      const actor = await calendars.changingFor(
        callerRef(request.caller),
        principalOf(request.body.principal_id, request.query.principal_id),
      );
      const connection = await calendars.connectCaldav(actor, request.body);
      reply.code(201);
      return { connection };
    },
  );

  app.post(
    '/v1/calendars/ics',
    {
      config: { access: 'private', idempotent: true, problems: { ...LIVE_MODE_ONLY } },
      schema: {
        operationId: 'addIcsFeed',
        tags,
        summary: 'Add a read-only ICS feed (fetched once now to check it)',
        body: withExample(IcsBody, {
          url: 'https://calendar.example.org/feeds/7f3a9c1e/basic.ics',
          name: 'Clinic holidays',
        }),
        querystring: PrincipalQuery,
        response: {
          201: answer('The feed’s connection and its one calendar', ConnectionAnswer, {
            connection: {
              ...CONNECTION,
              id: 'conn_01jxk7b3c4d5e6f7g8h9j0k1m2',
              provider: 'ics',
              account: 'calendar.example.org',
              calendars: [
                {
                  ...CALENDAR,
                  id: 'cal_01jxk7b3c4d5e6f7g8h9j0k1m3',
                  name: 'Clinic holidays',
                  provider: 'ics',
                  destination: false,
                  connection_id: 'conn_01jxk7b3c4d5e6f7g8h9j0k1m2',
                },
              ],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const actor = await calendars.changingFor(
        callerRef(request.caller),
        principalOf(request.body.principal_id, request.query.principal_id),
      );
      const connection = await calendars.connectIcs(actor, request.body);
      reply.code(201);
      return { connection };
    },
  );

  app.get(
    '/v1/calendars',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'listCalendars',
        tags,
        summary: 'Calendars, provider status and connections of the caller (or one of its hosts)',
        querystring: PrincipalQuery,
        response: {
          200: answer('Every calendar, each provider’s status and every connection', CalendarList, {
            calendars: [...CONNECTION.calendars, ...CALDAV_CONNECTION.calendars],
            providers: [
              { name: 'google', connected: true, status: 'connected', calendar_count: 2 },
              { name: 'microsoft', connected: false, status: 'not_connected', calendar_count: 0 },
              { name: 'caldav', connected: true, status: 'connected', calendar_count: 1 },
              { name: 'ics', connected: false, status: 'not_connected', calendar_count: 0 },
            ],
            connections: [CONNECTION, CALDAV_CONNECTION],
          }),
        },
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
        operationId: 'getCalendar',
        tags,
        summary: 'Read one calendar',
        params: CalendarParams,
        response: { 200: answer('The calendar', wrap('calendar', Calendar), { calendar: CALENDAR }) },
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
        problems: {
          ...LIVE_MODE_ONLY,
          '422': {
            description: '`unprocessable`: code `calendar_read_only` (an ICS feed as destination)',
            codes: ['calendar_read_only'],
          },
        },
      },
      schema: {
        operationId: 'updateCalendar',
        tags,
        summary: 'Select a calendar for busy checking, or make it where meetings are written',
        params: CalendarParams,
        body: withExample(CalendarUpdateBody, { selected: true, destination: true }),
        response: {
          200: answer('The calendar as updated', wrap('calendar', Calendar), {
            calendar: { ...CONNECTION.calendars[1]!, selected: true, destination: true },
          }),
        },
      },
    },
    async (request) => ({
      calendar: await calendars.updateCalendar(callerRef(request.caller), request.params.id, request.body),
    }),
  );

  app.post(
    '/v1/calendars/sync',
    {
      config: {
        access: 'private',
        problems: {
          '503': {
            description: '`service-unavailable`: no calendar could be synced',
            codes: ['calendar_unavailable', 'calendar_disconnected'],
          },
        },
      },
      preValidation: emptyBodyIsObject,
      schema: {
        operationId: 'syncCalendars',
        tags,
        summary: 'Fetch busy time from every connected calendar now (503 when none could be read)',
        body: withExample(SyncBody, {}),
        querystring: PrincipalQuery,
        response: {
          200: answer('What each connection gave', SyncAnswer, {
            events_synced: 23,
            last_sync: '2054-06-08T10:00:03.208Z',
            connections: [
              { id: CONNECTION.id, provider: 'google', status: 'synced', busy_blocks: 17, error: null },
              { id: CALDAV_CONNECTION.id, provider: 'caldav', status: 'synced', busy_blocks: 6, error: null },
            ],
          }),
        },
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
      config: { access: 'private', problems: { ...LIVE_MODE_ONLY } },
      schema: {
        operationId: 'disconnectCalendars',
        tags,
        summary:
          'Disconnect a provider (or one connection by id): its tokens, calendars and cache are deleted',
        params: DisconnectParams,
        querystring: PrincipalQuery,
        response: {
          200: answer('The connections removed, in their final state', DisconnectAnswer, {
            connections: [
              {
                ...CONNECTION,
                status: 'disconnected',
                status_reason: 'removed',
                calendars: [],
              },
            ],
          }),
        },
      },
    },
    async (request) => {
      const actor = await calendars.changingFor(callerRef(request.caller), request.query.principal_id);
      return { connections: await calendars.disconnect(actor, request.params.provider) };
    },
  );

  connectLinkRoutes(app, calendars);
}
