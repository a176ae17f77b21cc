import type { Static } from '@sinclair/typebox';
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
import type { AvailabilityService } from './service.js';
import type { TypedApp } from '../../platform/routes.js';

export function availabilityRoutes(app: TypedApp, availability: AvailabilityService): void {
  const tags = ['Availability'];

  app.get(
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
      // The answer is JSON already rendered (and remembered) by present.ts, sent as is: the one route
      // whose body is not serialized from its schema, for speed; availability tests check its shape.
      return reply
        .type('application/json; charset=utf-8')
        .send(json as unknown as Static<typeof SlotsAnswer>);
    },
  );

  app.get(
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

  app.get(
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

  app.get(
    '/v1/principals/:id/availability',
    {
      config: {
        access: 'private',
        problems: {
          '403':
            '`forbidden`: not accessible to this caller; code `details_not_granted` for details=true without the right',
        },
      },
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
