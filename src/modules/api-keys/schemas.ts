/** The API-keys module's request and answer schemas (docs/design.md#openapi). */
import { type Static, Type } from '@sinclair/typebox';
import { PUBLISHABLE_SCOPES } from '../../platform/auth.js';
import { HOSTNAME_PATTERN, named, Pagination, StringEnum, Timestamp, Uuid } from '../../platform/schemas.js';

/** The scopes of a secret key (its default: both). */
export const SECRET_SCOPES = ['read', 'write'] as const;

/** Every scope a key may hold: read and write (secret), read:availability and create:booking (publishable). */
const KeyScope = named(
  'ApiKeyScope',
  Type.Unsafe<string>({ type: 'string', enum: [...SECRET_SCOPES, ...PUBLISHABLE_SCOPES] }),
);

/** The mode a key acts in: `test` keys (`svc_sk_test_…`, `svc_pk_test_…`) see and make test-mode objects only. */
export const KeyEnvironment = StringEnum(['live', 'test'], {
  name: 'ApiKeyEnvironment',
  description: 'live (default for sessions and live keys) or test (docs: Test mode)',
});

export const ApiKey = named(
  'ApiKey',
  Type.Object({
    id: Uuid,
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    key_type: StringEnum(['secret', 'publishable'], { name: 'ApiKeyType' }),
    environment: KeyEnvironment,
    scopes: Type.Array(KeyScope),
    prefix: Type.String({ description: 'first 16 characters of the key' }),
    last4: Type.String(),
    rate_limit_per_hour: Type.Integer(),
    allowed_domains: Type.Array(Type.String()),
    created_at: Timestamp,
    expires_at: Type.Union([Timestamp, Type.Null()]),
    revoked_at: Type.Union([Timestamp, Type.Null()]),
    status: StringEnum(['active', 'revoked', 'expired'], { name: 'ApiKeyStatus' }),
  }),
);
export const ApiKeyList = Type.Object({ api_keys: Type.Array(ApiKey), pagination: Pagination });
export const CreatedApiKey = Type.Intersect([
  ApiKey,
  Type.Object({ key: Type.String({ description: 'the full key; shown only in this response' }) }),
]);

export const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    key_type: Type.Optional(StringEnum(['secret', 'publishable'], { name: 'ApiKeyType' })),
    environment: Type.Optional(KeyEnvironment),
    scopes: Type.Optional(
      Type.Array(KeyScope, {
        maxItems: 10,
        description:
          'secret keys: read, write (default both); publishable keys: read:availability, create:booking (default both)',
      }),
    ),
    rate_limit_per_hour: Type.Optional(Type.Integer({ minimum: 1 })),
    allowed_domains: Type.Optional(
      Type.Array(
        Type.String({ maxLength: 253, pattern: HOSTNAME_PATTERN, description: 'a hostname, any case' }),
        {
          maxItems: 50,
          description:
            'publishable keys only: the sites (Origin hostnames) that may use the key; stored lower-case',
        },
      ),
    ),
    expires_at: Type.Optional(Type.String({ format: 'date-time' })),
  },
  {
    'x-checks': [
      '`scopes` must suit `key_type`: secret keys take `read` and `write`, publishable keys `read:availability` and `create:booking`',
      '`allowed_domains` is for publishable keys only',
      "`rate_limit_per_hour` is at most the account plan's hourly limit",
      '`expires_at` is in the future',
    ],
    additionalProperties: false,
  },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

export const StatsQuery = Type.Object(
  {
    window: StringEnum(['hour', 'day', 'week'], { default: 'day' }),
  },
  { additionalProperties: false },
);
export const Stats = Type.Object({
  key_id: Uuid,
  window: Type.String(),
  window_start: Timestamp,
  window_end: Timestamp,
  requests: Type.Integer(),
  rate_limited: Type.Integer(),
  by_status: Type.Object({ '2xx': Type.Integer(), '4xx': Type.Integer(), '5xx': Type.Integer() }),
  last_used_at: Type.Union([Timestamp, Type.Null()]),
  rate_limit_per_hour: Type.Integer(),
  remaining: Type.Integer({ description: 'requests left in the current hourly rate-limit window' }),
  series: Type.Array(
    Type.Object({
      start: { ...Timestamp, description: 'the start of the hour' },
      requests: Type.Integer(),
      rate_limited: Type.Integer(),
    }),
    {
      description:
        'one entry per hour of the window, oldest first, the current hour last; hours without requests are zeros',
    },
  ),
});
