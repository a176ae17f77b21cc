/** The accounts module's request and answer schemas: sessions and the caller (docs/api.md#sessions). */
import { type Static, Type } from '@sinclair/typebox';
import { EmailAddress, named, StringEnum, Timestamp, Uuid } from '../../platform/schemas.js';

export const User = named(
  'User',
  Type.Object({
    id: Uuid,
    account_id: Uuid,
    email: EmailAddress,
    name: Type.Union([Type.String(), Type.Null()], {
      description: "The user's own name (PATCH /v1/me); null until given",
    }),
    display_name: Type.String({
      description: "How others see the user: its name, else its account's name (never its e-mail)",
    }),
    created_at: Timestamp,
  }),
);
export const Account = named(
  'Account',
  Type.Object({
    id: Uuid,
    name: Type.String(),
    plan: StringEnum(['free', 'premium', 'enterprise']),
    rate_limit_per_hour: Type.Integer(),
    created_at: Timestamp,
  }),
);
export const SessionBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export const Session = named(
  'Session',
  Type.Object({
    token: Type.String({ description: 'JWT; send as Authorization: Bearer <token>' }),
    expires_at: Timestamp,
    user: User,
  }),
);
export const Me = named(
  'Me',
  Type.Object({
    principal_id: Uuid,
    credential: StringEnum(['secret', 'publishable', 'session']),
    account: Account,
    key_id: Type.Union([Uuid, Type.Null()]),
    scopes: Type.Array(Type.String()),
    user: Type.Union([User, Type.Null()]),
    environment: StringEnum(['live', 'test'], {
      description: 'the mode the credential acts in: test for test keys, live otherwise (docs: Test mode)',
    }),
  }),
);
export type SessionBody = Static<typeof SessionBody>;
export const UpdateMeBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200, description: "The signed-in user's own name" }) },
  { additionalProperties: false },
);
