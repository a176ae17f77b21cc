/** The network module's request and answer schemas: consents and the network (docs/api.md#consents, #network). */
import { type Static, Type } from '@sinclair/typebox';
import { UUID_PATTERN } from '../../platform/ids.js';
import { EMAIL_ADDRESS_PATTERN } from '../../platform/validation.js';
import {
  ActingFor as ActingForId,
  EmailAddress,
  named,
  Pagination,
  PrefixedId,
  PrincipalId as PrincipalIdParam,
  prefixedIdPattern,
  StringEnum,
  Timestamp,
} from '../../platform/schemas.js';
import { ISO_INSTANT_PATTERN } from '../../platform/validation.js';

export const SCOPES = ['availability:read:freebusy', 'availability:read:details', 'booking:propose'] as const;
export type Scope = (typeof SCOPES)[number];
export const RELATIONSHIPS = ['colleague', 'client', 'vendor', 'partner', 'friend', 'other'] as const;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
/** The service refuses anything but a UUID with 400 `errors.grantee_id`: the schema says the same. */
const PrincipalId = Type.String({
  pattern: UUID_PATTERN,
  maxLength: 64,
  description: 'a principal id (UUID)',
});
const ActingFor = Type.Optional(ActingForId);

/** What answers carry (requests are checked by the service, which names the allowed values). */
const PrincipalUuid = Type.String({ pattern: UUID_PATTERN, description: 'a principal id (UUID)' });
const Scope = named('ConsentScope', Type.Unsafe<string>({ type: 'string', enum: [...SCOPES] }));

export const Consent = named(
  'Consent',
  Type.Object({
    id: Type.String({ pattern: prefixedIdPattern('cons'), description: 'cons_…' }),
    grantor_id: PrincipalUuid,
    grantee_id: PrincipalUuid,
    scopes: Type.Array(Scope),
    status: Type.String({ enum: ['active', 'revoked', 'expired'] }),
    expires_at: Nullable(Timestamp),
    created_at: Timestamp,
    revoked_at: Nullable(Timestamp),
    livemode: Type.Boolean({ description: 'false: made in test mode (docs/api.md#test-mode)' }),
  }),
);
export const ConsentAnswer = named('ConsentAnswer', Type.Object({ consent: Consent }));
export const ConsentList = Type.Object({ consents: Type.Array(Consent), pagination: Pagination });

export const Invitation = named(
  'Invitation',
  Type.Object({
    id: Type.String({ pattern: prefixedIdPattern('inv'), description: 'inv_…' }),
    invitee_email: EmailAddress,
    invitee_name: Nullable(Type.String()),
    relationship_type: Type.String(),
    status: Type.String({ enum: ['pending', 'accepted', 'declined', 'expired'] }),
    expires_at: Timestamp,
    created_at: Timestamp,
    livemode: Type.Boolean({ description: 'false: made in test mode (docs/api.md#test-mode)' }),
  }),
);
export const InvitationAnswer = named('InvitationAnswer', Type.Object({ invitation: Invitation }));
export const InvitationsQuery = Type.Object(
  {
    status: Type.Optional(
      StringEnum(['pending', 'accepted', 'declined', 'expired'], {
        name: 'InvitationStatus',
        description: 'only invitations in this state (a pending invitation past its end is `expired`)',
      }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    principal_id: ActingFor,
  },
  { additionalProperties: false },
);
export type InvitationsQuery = Static<typeof InvitationsQuery>;
export const InvitationList = Type.Object({ invitations: Type.Array(Invitation), pagination: Pagination });
const Relationship = named('RelationshipType', Type.String({ enum: [...RELATIONSHIPS] }));

export const ConsentParams = Type.Object(
  { id: PrefixedId('cons', 'consent id (cons_…)') },
  { additionalProperties: false },
);
export const TokenParams = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
/**
 * The connected principal of `DELETE /v1/network/{connected_id}`: named apart from the `principal_id`
 * query parameter every network route takes for the principal it acts for.
 */
export const ConnectedParams = Type.Object(
  {
    connected_id: Type.String({
      ...PrincipalIdParam,
      description: 'the connected principal (`principal_id` in `GET /v1/network`)',
    }),
  },
  { additionalProperties: false },
);

export const GrantBody = Type.Object(
  {
    grantee_id: PrincipalId,
    scopes: Type.Array(Scope, {
      minItems: 1,
      maxItems: 3,
      description: `any of ${SCOPES.join(', ')}`,
    }),
    expires_at: Type.Optional(
      Type.String({
        maxLength: 64,
        // The service's rule (platform/validation.ts `isIsoInstant`, then in the future).
        pattern: ISO_INSTANT_PATTERN,
        description: 'ISO 8601 instant with an offset, in the future',
      }),
    ),
    principal_id: ActingFor,
  },
  {
    'x-checks': ['`grantee_id` is another principal than the grantor', '`expires_at` is in the future'],
    additionalProperties: false,
  },
);
export type GrantBody = Static<typeof GrantBody>;

export const ConsentsQuery = Type.Object(
  {
    role: Type.Optional(Type.Unsafe<'grantor' | 'grantee'>({ type: 'string', enum: ['grantor', 'grantee'] })),
    active_only: Type.Boolean({ default: true }),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    principal_id: ActingFor,
  },
  { additionalProperties: false },
);
export type ConsentsQuery = Static<typeof ConsentsQuery>;

export const ConnectionsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    principal_id: ActingFor,
  },
  { additionalProperties: false },
);
export type ConnectionsQuery = Static<typeof ConnectionsQuery>;

export const ConnectionList = Type.Object({
  connections: Type.Array(
    Type.Object({
      principal_id: PrincipalUuid,
      display_name: Type.String(),
      relationship_type: Relationship,
      connected_at: Timestamp,
      livemode: Type.Boolean({ description: 'false: made in test mode (docs/api.md#test-mode)' }),
    }),
  ),
  pagination: Pagination,
});

export const DisconnectQuery = Type.Object({ principal_id: ActingFor }, { additionalProperties: false });

export const InviteBody = Type.Object(
  {
    invitee_email: Type.String({ pattern: EMAIL_ADDRESS_PATTERN, format: 'email', maxLength: 320 }),
    invitee_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    relationship_type: Relationship,
    message: Type.Optional(Type.String({ maxLength: 2000 })),
    principal_id: ActingFor,
  },
  { additionalProperties: false },
);
export type InviteBody = Static<typeof InviteBody>;

export const InviteManyBody = Type.Object(
  {
    contacts: Type.Array(
      Type.Object(
        {
          email: Type.String({ minLength: 1, maxLength: 320 }),
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
    relationship_type: Relationship,
    send_emails: Type.Boolean({ default: true }),
    message: Type.Optional(Type.String({ maxLength: 2000 })),
    principal_id: ActingFor,
  },
  { additionalProperties: false },
);
export type InviteManyBody = Static<typeof InviteManyBody>;

export const InvitationsMade = Type.Object({
  invitations: Type.Array(Invitation),
  skipped: Type.Array(Type.Object({ email: Type.String(), reason: Type.String() })),
});

export const EmptyBody = Type.Object({}, { additionalProperties: false });

/** What the OpenAPI document shows (platform/openapi.ts); the consent events show it too. */
export const CONSENT = {
  id: 'cons_01jxk8d4e5f6g7h8j9k0m1n2p3',
  grantor_id: '0190a4c3-2a4b-7c6d-8e0f-1a2b3c4d5e6f',
  grantee_id: '0190a4b8-1f2e-7c44-8a9d-3e5f7a1b2c3d',
  scopes: ['availability:read:freebusy'],
  status: 'active',
  expires_at: '2054-12-31T23:00:00.000Z',
  created_at: '2054-06-05T14:20:00.000Z',
  revoked_at: null,
  livemode: true,
};
