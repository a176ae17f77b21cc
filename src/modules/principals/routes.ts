import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import type { AppContext } from '../../context.js';
import { IdParams, ListQuery, Pagination, wrap } from '../../platform/schemas.js';
import { validatorCompiler } from '../../platform/validation.js';
import { CreateHostBody, Host, PutScheduleBody, Schedule, UpdateHostBody } from './schemas.js';

/**
 * Schedule bodies are checked by `validateSchedule` (lib/schedule.ts), whose messages name each field
 * path ('weekly.0.end': 'must be after start'); the schema still documents the body in OpenAPI.
 */
function scheduleBodyCompiler(): FastifySchemaCompiler<unknown> {
  const standard = validatorCompiler();
  return (route) => (route.httpPart === 'body' ? (data: unknown) => ({ value: data }) : standard(route));
}

export function principalRoutes(app: FastifyInstance, ctx: AppContext): void {
  const principals = ctx.services.principals;
  const tags = ['Hosts'];
  // Profiles (principal + schedule) are cached once changes can be heard from every process.
  const notifier = ctx.notifier;
  if (notifier) app.addHook('onReady', () => principals.listen(notifier));

  app.post<{ Body: Static<typeof CreateHostBody> }>(
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
      const host = await principals.createHost(request.caller.accountId!, request.body);
      reply.code(201).header('location', `/v1/hosts/${host.principal_id}`);
      return { host };
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
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
    async (request) => principals.listHosts(request.caller.accountId!, request.query),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/v1/hosts/:id',
    {
      config: { access: 'private' },
      schema: { tags, summary: 'Read a host', params: IdParams, response: { 200: wrap('host', Host) } },
    },
    async (request) => ({ host: await principals.getHost(request.caller.accountId!, request.params.id) }),
  );

  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof UpdateHostBody> }>(
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
      host: await principals.updateHost(request.caller.accountId!, request.params.id, request.body),
    }),
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
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
    async (request) => ({ host: await principals.deleteHost(request.caller.accountId!, request.params.id) }),
  );

  app.get<{ Params: Static<typeof IdParams> }>(
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

  app.put<{ Params: Static<typeof IdParams>; Body: unknown }>(
    '/v1/principals/:id/schedule',
    {
      config: { access: 'private' },
      validatorCompiler: scheduleBodyCompiler(),
      schema: {
        tags: ['Schedules'],
        summary: 'Replace the working hours of the caller itself or a host its account manages',
        params: IdParams,
        body: PutScheduleBody,
        response: { 200: wrap('schedule', Schedule) },
      },
    },
    async (request) => ({
      schedule: await principals.putSchedule(request.caller, request.params.id, request.body),
    }),
  );
}
