import type { Static } from '@sinclair/typebox';
import {
  BlocksAnswer,
  BlocksQuery,
  CALENDAR_503,
  MutualAnswer,
  MutualQuery,
  NextAnswer,
  NextQuery,
  PrincipalParams,
  SlotsAnswer,
  SlotsQuery,
  STALE_DESCRIPTION,
} from './schemas.js';
import type { AvailabilityService } from './service.js';
import { answer } from '../../platform/openapi.js';
import type { ProblemDoc } from '../../platform/http.js';
import type { TypedApp } from '../../platform/routes.js';

/** What the OpenAPI document shows (platform/openapi.ts): a host in Paris (UTC+2 in June). */
const HOST_ID = '0190a4c2-7b1e-7d3a-9f4e-2c8b5d6a1e03';
const SLOTS = [
  { start: '2054-06-10T07:00:00.000Z', end: '2054-06-10T07:30:00.000Z' },
  { start: '2054-06-10T07:30:00.000Z', end: '2054-06-10T08:00:00.000Z' },
  { start: '2054-06-10T09:00:00.000Z', end: '2054-06-10T09:30:00.000Z' },
];

/** Reading a principal's busy time: it needs a calendar, and one that can be read. */
const CALENDAR_PROBLEMS = {
  '404': {
    description:
      '`not-found`: no such principal, or code `calendar_not_connected` (it has no connected calendar)',
    codes: ['calendar_not_connected'],
  },
  '503': { description: CALENDAR_503, codes: ['calendar_unavailable', 'calendar_disconnected'] },
} satisfies Record<string, ProblemDoc>;

export function availabilityRoutes(app: TypedApp, availability: AvailabilityService): void {
  const tags = ['Availability'];

  app.get(
    '/v1/availability/slots',
    {
      config: { access: 'availability', problems: CALENDAR_PROBLEMS },
      schema: {
        tags,
        operationId: 'listAvailableSlots',
        summary: 'Bookable slots of a principal in a window (publishable keys: own account and its hosts)',
        description: STALE_DESCRIPTION,
        querystring: SlotsQuery,
        response: {
          200: answer('Bookable slots by start (or by local day with group_by_day=true)', SlotsAnswer, {
            principal_id: HOST_ID,
            duration_minutes: 30,
            timezone: 'Europe/Paris',
            stale: false,
            busy_as_of: null,
            slots: SLOTS,
          }),
        },
      },
    },
    async (request, reply) => {
      const json = await availability.slots(request.caller, request.query);
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
      config: { access: 'availability', problems: CALENDAR_PROBLEMS },
      schema: {
        tags,
        operationId: 'getNextAvailableSlot',
        summary: 'The first bookable slot of a principal (publishable keys: own account and its hosts)',
        description: STALE_DESCRIPTION,
        querystring: NextQuery,
        response: {
          200: answer('The first bookable slot, or null when none is free within days_ahead', NextAnswer, {
            principal_id: HOST_ID,
            duration_minutes: 30,
            timezone: 'Europe/Paris',
            stale: false,
            busy_as_of: null,
            slot: SLOTS[0]!,
          }),
        },
      },
    },
    async (request) => availability.next(request.caller, request.query),
  );

  app.get(
    '/v1/availability/mutual',
    {
      config: { access: 'private', problems: CALENDAR_PROBLEMS },
      schema: {
        tags,
        operationId: 'listMutualSlots',
        summary: 'Slots free for every one of 2–5 principals (secret key or user session only)',
        description: STALE_DESCRIPTION,
        querystring: MutualQuery,
        response: {
          200: answer('Slots every principal is free for, and what allowed each read', MutualAnswer, {
            principal_ids: [HOST_ID, '0190a4c3-2a4b-7c6d-8e0f-1a2b3c4d5e6f'],
            duration_minutes: 30,
            timezone: 'Europe/Paris',
            stale: false,
            busy_as_of: null,
            slots: SLOTS.slice(1),
            consents: [
              { principal_id: HOST_ID, consent_id: null, basis: 'managed_host' },
              {
                principal_id: '0190a4c3-2a4b-7c6d-8e0f-1a2b3c4d5e6f',
                consent_id: 'cons_01jxk8d4e5f6g7h8j9k0m1n2p3',
                basis: 'consent',
              },
            ],
          }),
        },
      },
    },
    async (request) => availability.mutual(request.caller, request.query),
  );

  app.get(
    '/v1/principals/:id/availability',
    {
      config: {
        access: 'private',
        problems: {
          '403': {
            description:
              '`forbidden`: not accessible to this caller; code `details_not_granted` for details=true without the right',
            codes: ['details_not_granted'],
          },
          ...CALENDAR_PROBLEMS,
        },
      },
      schema: {
        tags,
        operationId: 'listAvailabilityBlocks',
        summary: 'Normalized busy, free and outside-hours blocks of a principal (secret key or session only)',
        description: STALE_DESCRIPTION,
        params: PrincipalParams,
        querystring: BlocksQuery,
        response: {
          200: answer('Sorted, non-overlapping blocks covering the window', BlocksAnswer, {
            principal_id: HOST_ID,
            from: '2054-06-10T06:00:00.000Z',
            to: '2054-06-10T16:00:00.000Z',
            timezone: 'Europe/Paris',
            stale: true,
            busy_as_of: '2054-06-10T05:42:17.000Z',
            blocks: [
              {
                start: '2054-06-10T06:00:00.000Z',
                end: '2054-06-10T07:00:00.000Z',
                status: 'outside_hours',
                source: 'schedule',
              },
              {
                start: '2054-06-10T07:00:00.000Z',
                end: '2054-06-10T08:00:00.000Z',
                status: 'free',
                source: 'schedule',
              },
              {
                start: '2054-06-10T08:00:00.000Z',
                end: '2054-06-10T09:00:00.000Z',
                status: 'busy',
                source: 'calendar',
                titles: ['Team stand-up'],
              },
              {
                start: '2054-06-10T09:00:00.000Z',
                end: '2054-06-10T12:00:00.000Z',
                status: 'free',
                source: 'schedule',
              },
              {
                start: '2054-06-10T12:00:00.000Z',
                end: '2054-06-10T12:30:00.000Z',
                status: 'busy',
                source: 'booking',
              },
              {
                start: '2054-06-10T12:30:00.000Z',
                end: '2054-06-10T15:00:00.000Z',
                status: 'free',
                source: 'schedule',
              },
              {
                start: '2054-06-10T15:00:00.000Z',
                end: '2054-06-10T16:00:00.000Z',
                status: 'outside_hours',
                source: 'schedule',
              },
            ],
          }),
        },
      },
    },
    async (request) => availability.blocks(request.caller, request.params.id, request.query),
  );
}
