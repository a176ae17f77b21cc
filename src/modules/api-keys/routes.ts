import type { ApiKeyService } from './service.js';
import { IdParams, ListQuery, wrap } from '../../platform/schemas.js';
import { ApiKey, ApiKeyList, CreatedApiKey, CreateKeyBody, Stats, StatsQuery } from './schemas.js';
import type { ApiKeyStatsService } from './stats.js';
import { actorOf } from '../../platform/actor.js';
import { Forbidden } from '../../platform/errors.js';
import { answer, withExample } from '../../platform/openapi.js';
import type { TypedApp } from '../../platform/routes.js';

/** What the OpenAPI document shows (platform/openapi.ts). */
const KEY = {
  id: '0190a4ba-5d6e-7f80-9a1b-2c3d4e5f6a7b',
  name: 'Booking widget',
  description: 'Embedded on acme-physio.example',
  key_type: 'publishable' as const,
  scopes: ['read:availability', 'create:booking'],
  prefix: 'svc_pk_live_Q7xM',
  last4: 'k2Vd',
  rate_limit_per_hour: 1000,
  allowed_domains: ['acme-physio.example'],
  created_at: '2054-06-02T11:20:00.000Z',
  expires_at: null,
  revoked_at: null,
  status: 'active' as const,
  environment: 'live' as const,
};

export function apiKeyRoutes(
  app: TypedApp,
  { keys, stats }: { keys: ApiKeyService; stats: ApiKeyStatsService },
): void {
  const tags = ['API keys'];

  app.post(
    '/v1/api-keys',
    {
      config: {
        access: 'private',
        idempotent: true,
        problems: {
          '403': {
            description: 'A test key asked for a live key (`live_mode_only`)',
            codes: ['live_mode_only'],
          },
        },
      },
      schema: {
        operationId: 'createApiKey',
        tags,
        summary: 'Create an API key (secret or publishable); the full key is shown only here',
        body: withExample(CreateKeyBody, {
          name: 'Booking widget',
          description: 'Embedded on acme-physio.example',
          key_type: 'publishable',
          allowed_domains: ['acme-physio.example'],
        }),
        response: {
          201: answer('The new key, with its full value (shown only here)', wrap('api_key', CreatedApiKey), {
            api_key: { ...KEY, key: 'svc_pk_live_Q7xM2bN9cR4tW8yZ1aD5fG3hJ6kL0pS7uV2xB4nk2Vd' },
          }),
        },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request.caller);
      // A key is made in the caller's mode unless it says otherwise; a test key makes only test keys.
      const environment = request.body.environment ?? (actor.livemode ? 'live' : 'test');
      if (!actor.livemode && environment === 'live') {
        throw new Forbidden(
          'A test key makes test keys only; create live keys with a live key or a session',
          {
            code: 'live_mode_only',
          },
        );
      }
      const created = await keys.create(actor.accountId, { ...request.body, environment });
      reply.code(201).header('location', `/v1/api-keys/${created.api_key.id}`);
      return { api_key: { ...created.api_key, key: created.key } };
    },
  );

  app.get(
    '/v1/api-keys',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'listApiKeys',
        tags,
        summary: 'List the account’s API keys (never the secret values)',
        querystring: ListQuery,
        response: {
          200: answer('One page of keys, newest first', ApiKeyList, {
            api_keys: [KEY],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => keys.list(actorOf(request.caller).accountId, request.query),
  );

  app.get(
    '/v1/api-keys/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getApiKey',
        tags,
        summary: 'Read an API key',
        params: IdParams,
        response: { 200: answer('The key (never its value)', wrap('api_key', ApiKey), { api_key: KEY }) },
      },
    },
    async (request) => ({ api_key: await keys.get(actorOf(request.caller).accountId, request.params.id) }),
  );

  app.delete(
    '/v1/api-keys/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'revokeApiKey',
        tags,
        summary: 'Revoke an API key; it answers 401 at once, in every process',
        params: IdParams,
        response: {
          200: answer('The revoked key', wrap('api_key', ApiKey), {
            api_key: { ...KEY, status: 'revoked', revoked_at: '2054-06-12T16:45:09.330Z' },
          }),
        },
      },
    },
    async (request) => ({ api_key: await keys.revoke(actorOf(request.caller).accountId, request.params.id) }),
  );

  app.get(
    '/v1/api-keys/:id/stats',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getApiKeyStats',
        tags,
        summary: 'Usage of an API key over the last hour, day or week',
        params: IdParams,
        querystring: StatsQuery,
        response: {
          200: answer('Requests made with the key in the window', wrap('stats', Stats), {
            stats: {
              key_id: KEY.id,
              window: 'day',
              window_start: '2054-06-11T16:00:00.000Z',
              window_end: '2054-06-12T16:00:00.000Z',
              requests: 1423,
              rate_limited: 0,
              by_status: { '2xx': 1390, '4xx': 33, '5xx': 0 },
              last_used_at: '2054-06-12T15:58:31.872Z',
              rate_limit_per_hour: 1000,
              remaining: 912,
              series: [
                { start: '2054-06-11T16:00:00.000Z', requests: 0, rate_limited: 0 },
                { start: '2054-06-12T15:00:00.000Z', requests: 88, rate_limited: 0 },
              ],
            },
          }),
        },
      },
    },
    async (request) => {
      const key = await keys.get(actorOf(request.caller).accountId, request.params.id);
      return { stats: await stats.stats(key.id, key.rate_limit_per_hour, request.query.window) };
    },
  );
}
