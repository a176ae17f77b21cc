import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import {
  BlocksAnswer,
  BlocksQuery,
  MutualAnswer,
  MutualQuery,
  NextAnswer,
  NextQuery,
  PrincipalParams,
  SlotsAnswer,
  SlotsQuery,
} from './schemas.js';
import { AvailabilityService } from './service.js';

export function availabilityRoutes(app: FastifyInstance, ctx: AppContext): void {
  const availability = new AvailabilityService(ctx);
  const tags = ['Availability'];

  app.get<{ Querystring: Static<typeof SlotsQuery> }>(
    '/v1/availability/slots',
    {
      config: { access: 'availability' },
      schema: {
        tags,
        summary: 'Bookable slots of a principal in a window (publishable keys: own account and its hosts)',
        querystring: SlotsQuery,
        response: { 200: SlotsAnswer },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const json = await availability.slots(request.caller, {
        businessId: q.business_id,
        principalId: q.principal_id,
        durationMinutes: q.duration_minutes,
        from: q.from,
        to: q.to,
        timezone: q.timezone,
        slotIntervalMinutes: q.slot_interval,
        bufferMinutes: q.buffer,
        groupByDay: q.group_by_day,
        consentId: q.consent_id,
      });
      return reply.type('application/json; charset=utf-8').send(json);
    },
  );

  app.get<{ Querystring: Static<typeof NextQuery> }>(
    '/v1/availability/next',
    {
      config: { access: 'availability' },
      schema: {
        tags,
        summary: 'The first bookable slot of a principal (publishable keys: own account and its hosts)',
        querystring: NextQuery,
        response: { 200: NextAnswer },
      },
    },
    async (request) => {
      const q = request.query;
      return availability.next(request.caller, {
        businessId: q.business_id,
        principalId: q.principal_id,
        durationMinutes: q.duration_minutes,
        after: q.after,
        daysAhead: q.days_ahead,
        timezone: q.timezone,
        slotIntervalMinutes: q.slot_interval,
        consentId: q.consent_id,
      });
    },
  );

  app.get<{ Querystring: Static<typeof MutualQuery> }>(
    '/v1/availability/mutual',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Slots free for every one of 2–5 principals (secret key or user session only)',
        querystring: MutualQuery,
        response: { 200: MutualAnswer },
      },
    },
    async (request) => {
      const q = request.query;
      return availability.mutual(request.caller, {
        principalIds: q.principal_ids,
        durationMinutes: q.duration_minutes,
        from: q.from,
        to: q.to,
        timezone: q.timezone,
        slotIntervalMinutes: q.slot_interval,
        limit: q.limit,
      });
    },
  );

  app.get<{ Params: Static<typeof PrincipalParams>; Querystring: Static<typeof BlocksQuery> }>(
    '/v1/principals/:id/availability',
    {
      config: { access: 'private' },
      schema: {
        tags,
        summary: 'Normalized busy, free and outside-hours blocks of a principal (secret key or session only)',
        params: PrincipalParams,
        querystring: BlocksQuery,
        response: { 200: BlocksAnswer },
      },
    },
    async (request) => availability.blocks(request.caller, request.params.id, request.query),
  );
}
