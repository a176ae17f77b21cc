/** Routes of the network module: consents and the network (docs/api.md#consents, #network). */
import { Type } from '@sinclair/typebox';
import { actorOf } from '../../platform/actor.js';
import { emptyBodyIsObject, type TypedApp } from '../../platform/routes.js';
import { Pagination, Timestamp } from '../../platform/schemas.js';
import { RELATIONSHIPS, type NetworkService, SCOPES } from './service.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const PrincipalId = Type.String({ minLength: 1, maxLength: 64, description: 'a principal id (UUID)' });
const ActingFor = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'act for this host of the account (default: the caller)',
  }),
);

const Consent = Type.Object({
  id: Type.String({ description: 'cons_…' }),
  grantor_id: Type.String(),
  grantee_id: Type.String(),
  scopes: Type.Array(Type.String()),
  status: Type.String({ enum: ['active', 'revoked', 'expired'] }),
  expires_at: Nullable(Timestamp),
  created_at: Timestamp,
  revoked_at: Nullable(Timestamp),
});
const ConsentAnswer = Type.Object({ consent: Consent });

const Invitation = Type.Object({
  id: Type.String({ description: 'inv_…' }),
  invitee_email: Type.String(),
  invitee_name: Nullable(Type.String()),
  relationship_type: Type.String(),
  status: Type.String({ enum: ['pending', 'accepted', 'declined', 'expired'] }),
  expires_at: Timestamp,
  created_at: Timestamp,
});
const InvitationAnswer = Type.Object({ invitation: Invitation });
const Relationship = Type.String({ enum: [...RELATIONSHIPS] });

const IdParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
const TokenParams = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
const PrincipalParams = Type.Object(
  { principal_id: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export function networkRoutes(app: TypedApp, network: NetworkService): void {
  const consents = ['Consents'];
  const net = ['Network'];

  app.post(
    '/v1/consents',
    {
      config: {
        access: 'private',
        problems: { '404': '`not-found`: no principal with this grantee_id' },
      },
      schema: {
        tags: consents,
        summary: 'Grant scopes to another principal (granting again merges into the active consent)',
        body: Type.Object(
          {
            grantee_id: PrincipalId,
            scopes: Type.Array(Type.String({ maxLength: 64 }), {
              minItems: 1,
              maxItems: 3,
              description: `any of ${SCOPES.join(', ')}`,
            }),
            expires_at: Type.Optional(
              Type.String({ maxLength: 64, description: 'ISO 8601 instant, future' }),
            ),
            principal_id: ActingFor,
          },
          { additionalProperties: false },
        ),
        response: { 200: ConsentAnswer, 201: ConsentAnswer },
      },
    },
    async (request, reply) => {
      const { created, consent } = await network.grant(actorOf(request.caller), request.body);
      reply.code(created ? 201 : 200);
      return { consent };
    },
  );

  app.get(
    '/v1/consents',
    {
      config: { access: 'private' },
      schema: {
        tags: consents,
        summary: 'Consents the caller granted or received',
        querystring: Type.Object(
          {
            role: Type.Optional(Type.String({ enum: ['grantor', 'grantee'] })),
            active_only: Type.Boolean({ default: true }),
            limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
            cursor: Type.Optional(Type.String({ maxLength: 512 })),
            principal_id: ActingFor,
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ consents: Type.Array(Consent), pagination: Pagination }) },
      },
    },
    async (request) =>
      network.listConsents(actorOf(request.caller), {
        ...request.query,
        role: request.query.role as 'grantor' | 'grantee' | undefined,
      }),
  );

  app.get(
    '/v1/consents/:id',
    {
      config: { access: 'private' },
      schema: {
        tags: consents,
        summary: 'A consent the caller is a party of',
        params: IdParams,
        response: { 200: ConsentAnswer },
      },
    },
    async (request) => network.getConsent(actorOf(request.caller), request.params.id),
  );

  app.delete(
    '/v1/consents/:id',
    {
      config: { access: 'private' },
      schema: {
        tags: consents,
        summary: 'Revoke a consent (grantor), or give it up (grantee); effective for the next request',
        params: IdParams,
        response: { 200: ConsentAnswer },
      },
    },
    async (request) => network.revoke(actorOf(request.caller), request.params.id),
  );

  app.get(
    '/v1/network',
    {
      config: { access: 'private' },
      schema: {
        tags: net,
        summary: 'Principals connected to the caller',
        querystring: Type.Object(
          {
            limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
            cursor: Type.Optional(Type.String({ maxLength: 512 })),
            principal_id: ActingFor,
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            connections: Type.Array(
              Type.Object({
                principal_id: Type.String(),
                display_name: Type.String(),
                relationship_type: Type.String(),
                connected_at: Timestamp,
              }),
            ),
            pagination: Pagination,
          }),
        },
      },
    },
    async (request) => network.connections(actorOf(request.caller), request.query),
  );

  app.delete(
    '/v1/network/:principal_id',
    {
      config: { access: 'private', problems: { '404': '`not-found`: not connected to this principal' } },
      schema: {
        tags: net,
        summary: 'Remove a connection (both ways)',
        params: PrincipalParams,
        querystring: Type.Object({ principal_id: ActingFor }, { additionalProperties: false }),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await network.disconnect(
        actorOf(request.caller),
        request.params.principal_id,
        request.query.principal_id,
      );
      reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/network/invitations',
    {
      config: {
        access: 'private',
        problems: { '409': '`conflict`: code `already_connected`' },
      },
      schema: {
        tags: net,
        summary: 'Invite someone by e-mail (a pending invitation to the address is sent again: 200)',
        body: Type.Object(
          {
            invitee_email: Type.String({ minLength: 3, maxLength: 320 }),
            invitee_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            relationship_type: Relationship,
            message: Type.Optional(Type.String({ maxLength: 2000 })),
            principal_id: ActingFor,
          },
          { additionalProperties: false },
        ),
        response: { 200: InvitationAnswer, 201: InvitationAnswer },
      },
    },
    async (request, reply) => {
      const { created, invitation } = await network.invite(actorOf(request.caller), request.body);
      reply.code(created ? 201 : 200);
      return { invitation };
    },
  );

  app.post(
    '/v1/network/invitations/bulk',
    {
      config: { access: 'private' },
      schema: {
        tags: net,
        summary: 'Invite many addresses at once; already connected or invalid ones are skipped',
        body: Type.Object(
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
        ),
        response: {
          200: Type.Object({
            invitations: Type.Array(Invitation),
            skipped: Type.Array(Type.Object({ email: Type.String(), reason: Type.String() })),
          }),
        },
      },
    },
    async (request) => network.inviteMany(actorOf(request.caller), request.body),
  );

  for (const action of ['accept', 'decline'] as const) {
    app.post(
      `/v1/network/invitations/:token/${action}`,
      {
        preValidation: emptyBodyIsObject,
        config: {
          access: 'private',
          problems: {
            '401': '`unauthorized`: code `invitation_invalid` (unknown or already used token)',
            '403': '`forbidden`: code `auth_method_invalid` (not a user session) or `auth_email_mismatch`',
            '410': '`gone`: code `invitation_expired`',
          },
        },
        schema: {
          tags: net,
          summary:
            action === 'accept'
              ? 'Accept an invitation (the invited user, signed in): the two principals are connected'
              : 'Decline an invitation (the invited user, signed in)',
          params: TokenParams,
          body: Type.Object({}, { additionalProperties: false }),
          response: { 200: InvitationAnswer },
        },
      },
      async (request) => network.respond(request.caller, request.params.token, action),
    );
  }
}
