import type { Static } from '@sinclair/typebox';
import type { FastifySchemaCompiler } from 'fastify';
import type { PrincipalService } from './service.js';
import { answer, withExample } from '../../platform/openapi.js';
import { IdParams, ListQuery, wrap } from '../../platform/schemas.js';
import { validatorCompiler } from '../../platform/validation.js';
import {
  CreateHostBody,
  Host,
  HostList,
  PutScheduleBody,
  Schedule,
  type ScheduleInput,
  UpdateHostBody,
} from './schemas.js';
import { actorOf } from '../../platform/actor.js';
import type { TypedApp } from '../../platform/routes.js';

/**
 * Schedule bodies are checked by `validateSchedule` (lib/schedule.ts), whose messages name each field
 * path ('weekly.0.end': 'must be after start'); the schema still documents the body in OpenAPI.
 */
function scheduleBodyCompiler(): FastifySchemaCompiler<unknown> {
  const standard = validatorCompiler();
  return (route) => (route.httpPart === 'body' ? (data: unknown) => ({ value: data }) : standard(route));
}

/** What the OpenAPI document shows (platform/openapi.ts). */
const HOST = {
  id: '0190a4c2-7b1e-7d3a-9f4e-2c8b5d6a1e03',
  principal_id: '0190a4c2-7b1e-7d3a-9f4e-2c8b5d6a1e03',
  livemode: true,
  display_name: 'Dr. Maya Chen',
  email: 'maya.chen@example.com',
  timezone: 'Europe/Paris',
  status: 'active' as const,
  calendar_connected: true,
  created_at: '2054-06-01T09:12:44.120Z',
  updated_at: '2054-06-01T09:12:44.120Z',
  deleted_at: null,
};
const SCHEDULE = {
  timezone: 'Europe/Paris',
  weekly: [
    { day: 'mon' as const, start: '09:00', end: '12:30' },
    { day: 'mon' as const, start: '13:30', end: '17:00' },
    { day: 'wed' as const, start: '09:00', end: '17:00' },
    { day: 'fri' as const, start: '09:00', end: '13:00' },
  ],
  overrides: [
    { date: '2054-07-14', unavailable: true as const },
    { date: '2054-07-18', intervals: [{ start: '10:00', end: '14:00' }] },
  ],
  buffer_before_minutes: 0,
  buffer_after_minutes: 10,
  minimum_notice_minutes: 120,
  max_days_ahead: 60,
};

export function principalRoutes(app: TypedApp, principals: PrincipalService): void {
  const tags = ['Hosts'];

  app.post(
    '/v1/hosts',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        operationId: 'createHost',
        tags,
        summary: 'Create a host: a principal the account manages (its own calendar and schedule)',
        body: withExample(CreateHostBody, {
          display_name: 'Dr. Maya Chen',
          email: 'maya.chen@example.com',
          timezone: 'Europe/Paris',
        }),
        response: {
          201: answer('The new host (also named by the Location header)', wrap('host', Host), {
            host: { ...HOST, calendar_connected: false },
          }),
        },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request.caller);
      const host = await principals.createHost(actor.accountId, request.body, actor);
      reply.code(201).header('location', `/v1/hosts/${host.principal_id}`);
      return { host };
    },
  );

  app.get(
    '/v1/hosts',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'listHosts',
        tags,
        summary: 'List the account’s hosts of the caller’s mode (live or test), newest first',
        querystring: ListQuery,
        response: {
          200: answer('One page of hosts', HostList, {
            hosts: [HOST],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => principals.listHosts(actorOf(request.caller), request.query),
  );

  app.get(
    '/v1/hosts/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getHost',
        tags,
        summary: 'Read a host',
        params: IdParams,
        response: { 200: answer('The host', wrap('host', Host), { host: HOST }) },
      },
    },
    async (request) => ({
      host: await principals.getHost(actorOf(request.caller), request.params.id),
    }),
  );

  app.patch(
    '/v1/hosts/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'updateHost',
        tags,
        summary: 'Update a host’s name, e-mail or time zone',
        params: IdParams,
        body: withExample(UpdateHostBody, { timezone: 'America/New_York' }),
        response: {
          200: answer('The host as updated', wrap('host', Host), {
            host: { ...HOST, timezone: 'America/New_York', updated_at: '2054-06-03T15:40:02.511Z' },
          }),
        },
      },
    },
    async (request) => ({
      host: await principals.updateHost(actorOf(request.caller), request.params.id, request.body),
    }),
  );

  app.delete(
    '/v1/hosts/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'deleteHost',
        tags,
        summary: 'Delete a host (soft: it leaves lists and availability); answers its final state',
        params: IdParams,
        response: {
          200: answer('The deleted host, in its final state', wrap('host', Host), {
            host: {
              ...HOST,
              status: 'deleted' as const,
              updated_at: '2054-06-20T08:00:00.000Z',
              deleted_at: '2054-06-20T08:00:00.000Z',
            },
          }),
        },
      },
    },
    async (request) => ({
      host: await principals.deleteHost(actorOf(request.caller), request.params.id),
    }),
  );

  app.get(
    '/v1/principals/:id/schedule',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getSchedule',
        tags: ['Schedules'],
        summary:
          'Working hours of the caller itself or a host its account manages (the default if never set)',
        params: IdParams,
        response: {
          200: answer('The principal’s schedule', wrap('schedule', Schedule), { schedule: SCHEDULE }),
        },
      },
    },
    async (request) => ({ schedule: await principals.getSchedule(request.caller, request.params.id) }),
  );

  app.put(
    '/v1/principals/:id/schedule',
    {
      config: {
        access: 'private',
        problems: {
          '403': {
            description:
              'The principal does not exist or is not the caller or a host of its account in the caller’s mode; or a test key on a principal shared with live mode, the account’s or a user’s own (`live_mode_only`)',
            codes: ['live_mode_only'],
          },
        },
      },
      validatorCompiler: scheduleBodyCompiler(),
      schema: {
        operationId: 'replaceSchedule',
        tags: ['Schedules'],
        summary:
          'Replace the working hours of the caller itself or a host its account manages (the schedule, or GET’s {"schedule": …} sent back)',
        params: IdParams,
        body: withExample(PutScheduleBody, {
          timezone: 'Europe/Paris',
          weekly: SCHEDULE.weekly,
          overrides: SCHEDULE.overrides,
          buffer_after_minutes: 10,
          minimum_notice_minutes: 120,
        }),
        response: {
          200: answer('The schedule as stored, defaults filled in', wrap('schedule', Schedule), {
            schedule: SCHEDULE,
          }),
        },
      },
    },
    async (request) => ({
      schedule: await principals.putSchedule(request.caller, request.params.id, unwrapSchedule(request.body)),
    }),
  );
}

/**
 * The PUT body as given, or the schedule inside `{"schedule": …}`: what GET answers can be sent back
 * as it is.
 */
function unwrapSchedule(body: Static<typeof PutScheduleBody>): Static<typeof ScheduleInput> {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const keys = Object.keys(body);
    const inner = (body as Record<string, unknown>).schedule;
    if (keys.length === 1 && keys[0] === 'schedule' && typeof inner === 'object' && inner !== null) {
      return inner as Static<typeof ScheduleInput>;
    }
  }
  return body as Static<typeof ScheduleInput>;
}
