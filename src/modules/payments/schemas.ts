/** The payments module's request and answer schemas: the Stripe webhook and Stripe Connect (docs/api.md#payments). */
import { type Static, Type } from '@sinclair/typebox';
import { named } from '../../platform/schemas.js';

export const ConnectedAccount = named(
  'ConnectedAccount',
  Type.Object({
    stripe_account_id: Type.String({ description: 'acct_…' }),
    charges_enabled: Type.Boolean(),
    payouts_enabled: Type.Boolean(),
    details_submitted: Type.Boolean(),
    ready: Type.Boolean({ description: 'charges enabled and details submitted: paid bookings go to it' }),
  }),
);

const HttpUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });

export const ConnectBody = Type.Object(
  {
    refresh_url: Type.Optional({ ...HttpUrl, description: 'where Stripe sends an expired onboarding link' }),
    return_url: Type.Optional({ ...HttpUrl, description: 'where Stripe sends the user after onboarding' }),
  },
  { additionalProperties: false },
);
export type ConnectBody = Static<typeof ConnectBody>;

export const Onboarding = Type.Object({
  ...ConnectedAccount.properties,
  onboarding_url: Type.String({
    description: 'Stripe’s onboarding page (short-lived; ask again)',
  }),
});

export const StripeWebhookHeaders = Type.Object({ 'stripe-signature': Type.Optional(Type.String()) });
export const WebhookReceived = Type.Object({ received: Type.Boolean(), duplicate: Type.Boolean() });
