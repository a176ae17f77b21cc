import { Type } from '@sinclair/typebox';
import type { AccountService } from './service.js';
import { actorOf } from '../../platform/actor.js';
import { Forbidden } from '../../platform/errors.js';
import { Timestamp, Uuid, wrap } from '../../platform/schemas.js';
import type { TypedApp } from '../../platform/routes.js';

const User = Type.Object({
  id: Uuid,
  account_id: Uuid,
  email: Type.String(),
  display_name: Type.String(),
  created_at: Timestamp,
});
const Account = Type.Object({
  id: Uuid,
  name: Type.String(),
  plan: Type.Union([Type.Literal('free'), Type.Literal('premium'), Type.Literal('enterprise')]),
  rate_limit_per_hour: Type.Integer(),
  created_at: Timestamp,
});
const SessionBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
const Session = Type.Object({
  token: Type.String({ description: 'JWT; send as Authorization: Bearer <token>' }),
  expires_at: Timestamp,
  user: User,
});
const Me = Type.Object({
  principal_id: Uuid,
  credential: Type.Union([Type.Literal('secret'), Type.Literal('publishable'), Type.Literal('session')]),
  account: Account,
  key_id: Type.Union([Uuid, Type.Null()]),
  scopes: Type.Array(Type.String()),
  user: Type.Union([User, Type.Null()]),
});

export function accountRoutes(app: TypedApp, accounts: AccountService): void {
  app.post(
    '/v1/sessions',
    {
      config: { access: 'none' },
      schema: {
        tags: ['Sessions'],
        summary: 'Sign in with e-mail and password; returns a short-lived session token (JWT)',
        security: [],
        body: SessionBody,
        response: { 201: wrap('session', Session) },
      },
    },
    async (request, reply) => {
      const session = await accounts.createSession(request.body.email, request.body.password);
      reply.code(201);
      return { session };
    },
  );

  app.delete(
    '/v1/sessions/current',
    {
      config: { access: 'private' },
      schema: {
        tags: ['Sessions'],
        summary: 'Sign out: revoke the session whose token authenticates this request',
        response: { 204: Type.Null() },
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
        tags: ['Sessions'],
        summary: 'The caller: principal, account, credential type, user',
        response: { 200: Me },
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
      };
    },
  );
}
