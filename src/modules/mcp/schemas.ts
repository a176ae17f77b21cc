/**
 * The schemas of the MCP module's own tools (docs/mcp.md#tools): `current_time` and `check_consent`,
 * the two tools composed here rather than mirrored from one route. The consent itself is the network
 * module's schema, as its routes answer it.
 */
import { type Static, Type } from '@sinclair/typebox';
import { TimeZone } from '../../platform/schemas.js';
import { Consent } from '../network/schemas.js';

const ConsentScope = Type.Union(
  [
    Type.Literal('availability:read:freebusy'),
    Type.Literal('availability:read:details'),
    Type.Literal('booking:propose'),
  ],
  { description: 'the consent scope to look for' },
);

const PrincipalId = Type.String({
  format: 'uuid',
  description: 'a principal id (UUID), e.g. from list_hosts or list_network',
});

export const CurrentTimeInput = Type.Object(
  {
    timezone: Type.Optional(
      Type.String({
        minLength: TimeZone.minLength,
        maxLength: TimeZone.maxLength,
        description: 'IANA time zone (default UTC), e.g. Europe/Paris',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CurrentTimeInput = Static<typeof CurrentTimeInput>;

export const CurrentTimeOutput = Type.Object({
  livemode: Type.Boolean({
    description:
      'false: test mode (a test key): `now` is the account’s test clock and what you make is not real (docs/api.md#test-mode)',
  }),
  now: Type.String({
    format: 'date-time',
    description: 'the current instant with the UTC offset of `timezone`',
  }),
  now_utc: Type.String({ format: 'date-time', description: 'the same instant in UTC' }),
  timezone: Type.String({ description: 'the IANA time zone `now` is shown in' }),
  utc_offset: Type.String({ description: 'the zone’s offset from UTC right now, e.g. +02:00' }),
  local_date: Type.String({ format: 'date', description: 'the date there' }),
  weekday: Type.String({ description: 'the weekday there, e.g. Tuesday' }),
});
export type CurrentTimeOutput = Static<typeof CurrentTimeOutput>;

export const CheckConsentInput = Type.Object(
  {
    grantor_id: PrincipalId,
    scope: Type.Optional(ConsentScope),
    principal_id: Type.Optional({
      ...PrincipalId,
      description: 'ask for this host of your account (default: you)',
    }),
  },
  { additionalProperties: false },
);
export type CheckConsentInput = Static<typeof CheckConsentInput>;

export const CheckConsentOutput = Type.Object({
  grantor_id: Type.String({ description: 'the principal asked about' }),
  scope: Type.String({ description: 'the scope looked for' }),
  granted: Type.Boolean({ description: 'whether an active consent with that scope exists' }),
  consent: Type.Union([Consent, Type.Null()], { description: 'the active consent, if any' }),
  next: Type.String({ description: 'what to do now' }),
  timezone: Type.String({ description: 'the IANA time zone the answer’s times are shown in' }),
});
export type CheckConsentOutput = Static<typeof CheckConsentOutput>;
