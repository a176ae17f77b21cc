import type { AccountService } from './service.js';
import { actorOf } from '../../platform/actor.js';
import { Forbidden } from '../../platform/errors.js';
import { answer, noContent, withExample } from '../../platform/openapi.js';
import { wrap } from '../../platform/schemas.js';
import { Me, Session, SessionBody, UpdateMeBody } from './schemas.js';
import type { TypedApp } from '../../platform/routes.js';

/** What the OpenAPI document shows (platform/openapi.ts). */
const ACCOUNT = {
  id: '0190a4b8-1f2e-7c44-8a9d-3e5f7a1b2c3d',
  name: 'Acme Physiotherapy',
  plan: 'premium' as const,
  rate_limit_per_hour: 1000,
  created_at: '2054-05-28T10:02:11.417Z',
};
const USER = {
  id: '0190a4b9-0c1d-7e2f-9a3b-4c5d6e7f8a9b',
  account_id: ACCOUNT.id,
  email: 'ops@acme-physio.example',
  name: 'Jordan Ops',
  display_name: 'Jordan Ops',
  created_at: '2054-05-28T10:05:40.002Z',
};

export function accountRoutes(app: TypedApp, accounts: AccountService): void {
  app.post(
    '/v1/sessions',
    {
      config: { access: 'none', problems: { '401': 'Unknown e-mail address or wrong password' } },
      schema: {
        operationId: 'createSession',
        tags: ['Sessions'],
        summary: 'Sign in with e-mail and password; returns a short-lived session token (JWT)',
        security: [],
        body: withExample(SessionBody, {
          email: 'ops@acme-physio.example',
          password: 'correct horse battery',
        }),
        response: {
          201: answer('Signed in: the session token and the user', wrap('session', Session), {
            session: {
              token:
                'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIwMTkwYTRiOS0wYzFkIiwic2lkIjoic2Vzc18wMW04NDcifQ.' +
                'x3Jd0kq8S7bZkzq1y2mQYwQ0n3xq7V1g4p8n2Lw5b0M',
              expires_at: '2054-06-10T15:00:00.000Z',
              user: USER,
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const session = await accounts.createSession(request.body);
      reply.code(201);
      return { session };
    },
  );

  app.delete(
    '/v1/sessions/current',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'deleteCurrentSession',
        tags: ['Sessions'],
        summary: 'Sign out: revoke the session whose token authenticates this request',
        response: { 204: noContent('Signed out: the token answers 401 from now on') },
      },
    },
    async (request, reply) => {
      if (request.caller.kind !== 'session' || !request.caller.sessionId) {
        throw new Forbidden('This endpoint requires a user session token');
      }
      await accounts.revokeSession(request.caller.sessionId);
      reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/me',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'getMe',
        tags: ['Sessions'],
        summary: 'The caller: principal, account, credential type, user',
        response: {
          200: answer('Who the credential belongs to', Me, {
            principal_id: ACCOUNT.id,
            credential: 'secret',
            account: ACCOUNT,
            key_id: '0190a4ba-5d6e-7f80-9a1b-2c3d4e5f6a7b',
            scopes: ['read', 'write'],
            user: null,
            environment: 'live',
          }),
        },
      },
    },
    async (request) => {
      const c = request.caller;
      const actor = actorOf(c);
      const account = c.account ?? (await accounts.getAccount(actor.accountId));
      return {
        principal_id: actor.principalId,
        credential: c.kind as 'secret' | 'session',
        account,
        key_id: c.keyId,
        scopes: c.scopes,
        user: c.userId ? await accounts.getUser(c.userId) : null,
        environment: c.livemode ? ('live' as const) : ('test' as const),
      };
    },
  );

  app.patch(
    '/v1/me',
    {
      config: { access: 'private' },
      schema: {
        operationId: 'updateMe',
        tags: ['Sessions'],
        summary: "Change the signed-in user's own name (how others see the user)",
        description:
          'A user session only: an API key has no user to name (403). The name is what booking pages, ' +
          "mails and other people's network lists show for the user.",
        body: withExample(UpdateMeBody, { name: 'Jordan Ops' }),
        response: {
          200: answer('The caller, with the new name', Me, {
            principal_id: USER.id,
            credential: 'session',
            account: ACCOUNT,
            key_id: null,
            scopes: ['read', 'write'],
            user: USER,
            environment: 'live',
          }),
        },
      },
    },
    async (request) => {
      const c = request.caller;
      if (c.kind !== 'session' || !c.userId)
        throw new Forbidden('This endpoint requires a user session token');
      const actor = actorOf(c);
      const user = await accounts.renameUser(c.userId, request.body.name);
      const account = c.account ?? (await accounts.getAccount(actor.accountId));
      return {
        principal_id: actor.principalId,
        credential: 'session' as const,
        account,
        key_id: c.keyId,
        scopes: c.scopes,
        user,
        environment: 'live' as const,
      };
    },
  );
}
