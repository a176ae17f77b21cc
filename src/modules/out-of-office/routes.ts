import { actorOf } from '../../platform/actor.js';
import { answer, noContent, withExample } from '../../platform/openapi.js';
import type { TypedApp } from '../../platform/routes.js';
import {
  CreateBody,
  CreatedAnswer,
  ListQuery,
  OutOfOfficeList,
  PrincipalParams,
  RangeParams,
} from './schemas.js';
import type { OutOfOfficeService } from './service.js';

/** What the OpenAPI document shows (platform/openapi.ts). */
const RANGE = {
  id: 'ooo_01jxk5b2c4d6e8f0g2h4j6k8m0',
  principal_id: '0190a4c2-7b1e-7d3a-9f4e-2c8b5d6a1e03',
  start: '2054-07-01T00:00:00.000Z',
  end: '2054-07-15T00:00:00.000Z',
  note: 'Summer holiday',
  livemode: true,
  created_at: '2054-06-02T12:00:00.000Z',
};

const NO_PRINCIPAL = {
  '403':
    'The principal does not exist or is not the caller, its account or a host its account manages in the caller’s mode',
};

/** docs/api.md#out-of-office: secret keys and sessions (publishable keys get the platform's 403). */
export function outOfOfficeRoutes(app: TypedApp, ranges: OutOfOfficeService): void {
  const tags = ['Schedules'];

  app.post(
    '/v1/principals/:id/out-of-office',
    {
      config: { access: 'private', problems: NO_PRINCIPAL },
      schema: {
        operationId: 'createOutOfOffice',
        tags,
        summary:
          'Mark a principal out of office from start to end: busy everywhere (slots, bookings refused); answers the live bookings inside it, which stay booked',
        params: PrincipalParams,
        body: withExample(CreateBody, { start: RANGE.start, end: RANGE.end, note: RANGE.note }),
        response: {
          201: answer('The new out-of-office range and the bookings inside it', CreatedAnswer, {
            out_of_office: RANGE,
            conflicts: [
              {
                booking_id: 'booking_01jxk5c3d5e7f9g1h3j5k7m9n1',
                start_time: '2054-07-03T09:00:00.000Z',
                end_time: '2054-07-03T09:30:00.000Z',
              },
            ],
          }),
        },
      },
    },
    async (request, reply) => {
      const made = await ranges.create(actorOf(request.caller), request.params.id, request.body);
      reply
        .code(201)
        .header(
          'location',
          `/v1/principals/${made.out_of_office.principal_id}/out-of-office/${made.out_of_office.id}`,
        );
      return made;
    },
  );

  app.get(
    '/v1/principals/:id/out-of-office',
    {
      config: { access: 'private', problems: NO_PRINCIPAL },
      schema: {
        operationId: 'listOutOfOffice',
        tags,
        summary: 'List a principal’s out-of-office ranges of the caller’s mode (live or test), by start',
        params: PrincipalParams,
        querystring: ListQuery,
        response: {
          200: answer('One page of out-of-office ranges', OutOfOfficeList, {
            out_of_office: [RANGE],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => ranges.list(actorOf(request.caller), request.params.id, request.query),
  );

  app.delete(
    '/v1/principals/:id/out-of-office/:ooo_id',
    {
      config: { access: 'private', problems: NO_PRINCIPAL },
      schema: {
        operationId: 'deleteOutOfOffice',
        tags,
        summary: 'Delete an out-of-office range: its time is free again',
        params: RangeParams,
        response: { 204: noContent('Deleted') },
      },
    },
    async (request, reply) => {
      await ranges.remove(actorOf(request.caller), request.params.id, request.params.ooo_id);
      return reply.code(204).send();
    },
  );
}
