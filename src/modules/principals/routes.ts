import { Type } from '@sinclair/typebox';
import type { FastifySchemaCompiler } from 'fastify';
import type { PrincipalService } from './service.js';
import { IdParams, ListQuery, Pagination, wrap } from '../../platform/schemas.js';
import { validatorCompiler } from '../../platform/validation.js';
import { CreateHostBody, Host, PutScheduleBody, Schedule, UpdateHostBody } from './schemas.js';
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

export function principalRoutes(app: TypedApp, principals: PrincipalService): void {
  const tags = ['Hosts'];

  app.post(
    '/v1/hosts',
    {
      config: { access: 'private', idempotent: true },
      schema: {
        tags,
        summary: 'Create a host: a principal the account manages (its own calendar and schedule)',
        body: CreateHostBody,
        response: { 201: wrap('host', Host) },
      },
    },
    async (request, reply) => {
      const host = await principals.createHost(actorOf(request.caller).accountId, request.body);
      reply.code(201).header('location', `/v1/hosts/${host.principal_id}`);
      return { host };
    },
  );

  app.get(
    '/v1/hosts',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'List the account’s hosts, newest first',
        querystring: ListQuery,
        response: { 200: Type.Object({ hosts: Type.Array(Host), pagination: Pagination }) },
      },
    },
    async (request) => principals.listHosts(actorOf(request.caller).accountId, request.query),
  );

  app.get(
    '/v1/hosts/:id',
    {
      config: { access: 'private' },
      schema: { tags, summary: 'Read a host', params: IdParams, response: { 200: wrap('host', Host) } },
    },
    async (request) => ({
      host: await principals.getHost(actorOf(request.caller).accountId, request.params.id),
    }),
  );

  app.patch(
    '/v1/hosts/:id',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Update a host’s name, e-mail or time zone',
        params: IdParams,
        body: UpdateHostBody,
        response: { 200: wrap('host', Host) },
      },
    },
    async (request) => ({
      host: await principals.updateHost(actorOf(request.caller).accountId, request.params.id, request.body),
    }),
  );

  app.delete(
    '/v1/hosts/:id',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Delete a host (soft: it leaves lists and availability); answers its final state',
        params: IdParams,
        response: { 200: wrap('host', Host) },
      },
    },
    async (request) => ({
      host: await principals.deleteHost(actorOf(request.caller).accountId, request.params.id),
    }),
  );

  app.get(
    '/v1/principals/:id/schedule',
    {
      config: { access: 'private' },
      schema: {
        tags: ['Schedules'],
        summary:
          'Working hours of the caller itself or a host its account manages (the default if never set)',
        params: IdParams,
        response: { 200: wrap('schedule', Schedule) },
      },
    },
    async (request) => ({ schedule: await principals.getSchedule(request.caller, request.params.id) }),
  );

  app.put(
    '/v1/principals/:id/schedule',
    {
      config: { access: 'private' },
      validatorCompiler: scheduleBodyCompiler(),
      schema: {
        tags: ['Schedules'],
        summary:
          'Replace the working hours of the caller itself or a host its account manages (the schedule, or GET’s {"schedule": …} sent back)',
        params: IdParams,
        body: PutScheduleBody,
        response: { 200: wrap('schedule', Schedule) },
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
function unwrapSchedule<T>(body: T): T {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const keys = Object.keys(body);
    const inner = (body as Record<string, unknown>).schedule;
    if (keys.length === 1 && keys[0] === 'schedule' && typeof inner === 'object' && inner !== null) {
      return inner as T;
    }
  }
  return body;
}
