/**
 * The console's own requests (README.md, Console): the setup form and the sign-in form. Everything
 * else the console does is an API request, sent through its proxy with the API's own schemas.
 */
import { type Static, Type } from '@sinclair/typebox';
import { EmailAddress } from '../../platform/schemas.js';

export const SetupBody = Type.Object(
  {
    token: Type.String({ minLength: 20, maxLength: 200 }),
    account_name: Type.String({ minLength: 1, maxLength: 200 }),
    /** The owner's own name (optional: without it, others see the account's name). */
    name: Type.Optional(Type.String({ maxLength: 200 })),
    email: EmailAddress,
    password: Type.String({ minLength: 10, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export type SetupBody = Static<typeof SetupBody>;

export const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBody>;

/** What a page's HTML tells its script (a JSON data block): never a credential. */
export interface PageData {
  page: string;
  /** The proof every state-changing request sends back in `X-CSRF-Token` (signed in only). */
  csrf: string | null;
  user: { email: string; account_name: string } | null;
  /** The webhook event types a subscription may name (the webhooks page only). */
  events?: string[];
  /** The server has no account yet (pages before signing in): the setup link is the way in. */
  no_account?: true;
}
