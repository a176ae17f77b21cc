/** Routes of the network module: consents and the network (docs/api.md#consents, #network). */
import { actorOf } from '../../platform/actor.js';
import { answer, noContent, withExample } from '../../platform/openapi.js';
import { emptyBodyIsObject, type TypedApp } from '../../platform/routes.js';
import {
  CONSENT,
  ConnectionList,
  ConnectionsQuery,
  ConsentAnswer,
  ConsentList,
  ConsentParams,
  ConsentsQuery,
  DisconnectQuery,
  EmptyBody,
  GrantBody,
  InvitationAnswer,
  InvitationList,
  InvitationsMade,
  InvitationsQuery,
  InviteBody,
  InviteManyBody,
  ConnectedParams,
  TokenParams,
} from './schemas.js';
import type { NetworkService } from './service.js';

/** What the OpenAPI document shows (platform/openapi.ts). */
const INVITATION = {
  id: 'inv_01jxk8f1g2h3j4k5m6n7p8q9r0',
  invitee_email: 'sam@okafor-sports.example',
  invitee_name: 'Sam Okafor',
  relationship_type: 'colleague',
  status: 'pending',
  expires_at: '2054-06-12T14:30:00.000Z',
  created_at: '2054-06-05T14:30:00.000Z',
  livemode: true,
};

export function networkRoutes(app: TypedApp, network: NetworkService): void {
  const consents = ['Consents'];
  const net = ['Network'];

  app.post(
    '/v1/consents',
    {
      config: {
        access: 'private',
        idempotent: true,
        problems: {
          '404': '`not-found`: no principal with this grantee_id',
          '409': {
            description: '`conflict`: the consent changed concurrently; retry',
            codes: ['consent_conflict'],
          },
        },
      },
      schema: {
        operationId: 'grantConsent',
        tags: consents,
        summary: 'Grant scopes to another principal (granting again merges into the active consent)',
        body: withExample(GrantBody, {
          grantee_id: CONSENT.grantee_id,
          scopes: ['availability:read:freebusy'],
          expires_at: '2027-01-01T00:00:00+01:00',
        }),
        response: {
          200: answer('Granted again: the scopes merged into the active consent', ConsentAnswer, {
            consent: { ...CONSENT, scopes: ['availability:read:freebusy', 'availability:read:details'] },
          }),
          201: answer('A new consent', ConsentAnswer, { consent: CONSENT }),
        },
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
        operationId: 'listConsents',
        tags: consents,
        summary: 'Consents the caller granted or received',
        querystring: ConsentsQuery,
        response: {
          200: answer('One page of consents', ConsentList, {
            consents: [CONSENT],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => network.listConsents(actorOf(request.caller), request.query),
  );

  app.get(
    '/v1/consents/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getConsent',
        tags: consents,
        summary: 'A consent the caller is a party of',
        params: ConsentParams,
        response: { 200: answer('The consent', ConsentAnswer, { consent: CONSENT }) },
      },
    },
    async (request) => network.getConsent(actorOf(request.caller), request.params.id),
  );

  app.delete(
    '/v1/consents/:id',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'revokeConsent',
        tags: consents,
        summary: 'Revoke a consent (grantor), or give it up (grantee); effective for the next request',
        params: ConsentParams,
        response: {
          200: answer('The revoked consent', ConsentAnswer, {
            consent: { ...CONSENT, status: 'revoked', revoked_at: '2054-06-20T09:00:00.000Z' },
          }),
        },
      },
    },
    async (request) => network.revoke(actorOf(request.caller), request.params.id),
  );

  app.get(
    '/v1/network',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'listConnections',
        tags: net,
        summary: 'Principals connected to the caller',
        querystring: ConnectionsQuery,
        response: {
          200: answer('One page of connected principals', ConnectionList, {
            connections: [
              {
                principal_id: '0190a4c3-2a4b-7c6d-8e0f-1a2b3c4d5e6f',
                display_name: 'Okafor Sports Clinic',
                relationship_type: 'colleague',
                connected_at: '2054-06-05T15:02:10.000Z',
                livemode: true,
              },
            ],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => network.connections(actorOf(request.caller), request.query),
  );

  app.delete(
    '/v1/network/:connected_id',
    {
      config: { access: 'private', problems: { '404': '`not-found`: not connected to this principal' } },
      schema: {
        operationId: 'removeConnection',
        tags: net,
        summary: 'Remove a connection (both ways)',
        params: ConnectedParams,
        querystring: DisconnectQuery,
        response: { 204: noContent('Disconnected, both ways') },
      },
    },
    async (request, reply) => {
      await network.disconnect(
        actorOf(request.caller),
        request.params.connected_id,
        request.query.principal_id,
      );
      reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/network/invitations',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'listInvitations',
        tags: net,
        summary: 'Invitations the caller sent, newest first',
        querystring: InvitationsQuery,
        response: {
          200: answer('One page of invitations', InvitationList, {
            invitations: [INVITATION],
            pagination: { next_cursor: null, has_more: false },
          }),
        },
      },
    },
    async (request) => network.invitations(actorOf(request.caller), request.query),
  );

  app.post(
    '/v1/network/invitations',
    {
      config: {
        access: 'private',
        idempotent: true,
        problems: {
          '409': { description: '`conflict`: code `already_connected`', codes: ['already_connected'] },
        },
      },
      schema: {
        operationId: 'createInvitation',
        tags: net,
        summary: 'Invite someone by e-mail (a pending invitation to the address is sent again: 200)',
        body: withExample(InviteBody, {
          invitee_email: INVITATION.invitee_email,
          invitee_name: 'Sam Okafor',
          relationship_type: 'colleague',
          message: 'Let’s share availability for joint sessions.',
        }),
        response: {
          200: answer('A pending invitation to the address, sent again', InvitationAnswer, {
            invitation: INVITATION,
          }),
          201: answer('The new invitation (its e-mail is on its way)', InvitationAnswer, {
            invitation: INVITATION,
          }),
        },
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
      config: { access: 'private', idempotent: true },
      schema: {
        operationId: 'createInvitations',
        tags: net,
        summary: 'Invite many addresses at once; already connected or invalid ones are skipped',
        body: withExample(InviteManyBody, {
          contacts: [
            { email: 'sam@okafor-sports.example', name: 'Sam Okafor' },
            { email: 'lee@example.com' },
            { email: 'not-an-address' },
          ],
          relationship_type: 'colleague',
          send_emails: true,
        }),
        response: {
          200: answer('The invitations made, and the addresses skipped with why', InvitationsMade, {
            invitations: [
              INVITATION,
              {
                ...INVITATION,
                id: 'inv_01jxk8f1g2h3j4k5m6n7p8q9r1',
                invitee_email: 'lee@example.com',
                invitee_name: null,
              },
            ],
            skipped: [{ email: 'not-an-address', reason: 'invalid_email' }],
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
            '401': {
              description: '`unauthorized`: code `invitation_invalid` (unknown or already used token)',
              codes: ['invitation_invalid'],
            },
            '403': {
              description:
                '`forbidden`: code `auth_method_invalid` (not a user session) or `auth_email_mismatch`',
              codes: ['auth_method_invalid', 'auth_email_mismatch'],
            },
            '410': { description: '`gone`: code `invitation_expired`', codes: ['invitation_expired'] },
          },
        },
        schema: {
          operationId: action === 'accept' ? 'acceptInvitation' : 'declineInvitation',
          tags: net,
          summary:
            action === 'accept'
              ? 'Accept an invitation (the invited user, signed in): the two principals are connected'
              : 'Decline an invitation (the invited user, signed in)',
          params: TokenParams,
          body: withExample(EmptyBody, {}),
          response: {
            200: answer(
              action === 'accept'
                ? 'The accepted invitation: the two are connected'
                : 'The declined invitation',
              InvitationAnswer,
              { invitation: { ...INVITATION, status: action === 'accept' ? 'accepted' : 'declined' } },
            ),
          },
        },
      },
      async (request) => network.respond(request.caller, request.params.token, action),
    );
  }
}
