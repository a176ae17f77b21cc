/** Routes of the payments module: the Stripe webhook and Stripe Connect (docs/api.md#payments). */
import { actorOf } from '../../platform/actor.js';
import { answer, withExample } from '../../platform/openapi.js';
import { emptyBodyIsObject, type TypedApp } from '../../platform/routes.js';
import {
  ConnectBody,
  ConnectedAccount,
  Onboarding,
  StripeWebhookHeaders,
  WebhookReceived,
} from './schemas.js';
import type { PaymentsService } from './service.js';

/** What the OpenAPI document shows (platform/openapi.ts). */
const ACCOUNT = {
  stripe_account_id: 'acct_1PqR2sT3uV4wX5yZ',
  charges_enabled: true,
  payouts_enabled: true,
  details_submitted: true,
  ready: true,
};

const NOT_CONFIGURED = '`unprocessable`: code `payments_not_configured` (no STRIPE_SECRET_KEY)';
// A test key reads the connected account (shared by both modes; Connect is live only) but cannot create it.

export function paymentRoutes(app: TypedApp, payments: PaymentsService): void {
  // The webhook needs the exact bytes Stripe signed: JSON is not parsed in this scope.
  app.register(async (raw) => {
    raw.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
      done(null, body);
    });
    raw.post(
      '/v1/payments/stripe/webhook',
      {
        config: {
          // Rate-limited per client address like every /v1 answer (and carrying X-RateLimit-*).
          access: 'none',
          problems: {
            '400': {
              description: '`validation-error`: code `invalid_signature` (Stripe-Signature does not verify)',
              codes: ['invalid_signature'],
            },
            '404': {
              description:
                '`not-found`: code `payments_not_configured` (no STRIPE_SECRET_KEY / STRIPE_WEBHOOK_SECRET)',
              codes: ['payments_not_configured'],
            },
          },
        },
        schema: {
          operationId: 'receiveStripeWebhook',
          tags: ['Payments'],
          summary: 'Stripe events (Stripe-Signature verified, each event handled once)',
          security: [],
          headers: StripeWebhookHeaders,
          response: {
            200: answer('The event was taken (duplicate: it had been handled before)', WebhookReceived, {
              received: true,
              duplicate: false,
            }),
          },
        },
      },
      async (request) => {
        const signature = request.headers['stripe-signature'];
        return payments.receive(
          Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          Array.isArray(signature) ? signature.join(',') : signature,
        );
      },
    );
  });

  app.post(
    '/v1/stripe/connect',
    {
      preValidation: emptyBodyIsObject,
      config: {
        access: 'private',
        problems: {
          '403': {
            description:
              '`forbidden`: code `live_mode_only` (a test key: the connected account is live only)',
            codes: ['live_mode_only'],
          },
          '422': { description: NOT_CONFIGURED, codes: ['payments_not_configured'] },
          '503': {
            description: '`service-unavailable`: code `payments_unavailable`',
            codes: ['payments_unavailable'],
          },
        },
      },
      schema: {
        operationId: 'connectStripeAccount',
        tags: ['Payments'],
        summary: 'Create (once) the account’s Stripe Express account and answer an onboarding link',
        body: withExample(ConnectBody, {
          refresh_url: 'https://app.acme-physio.example/settings/payments?refresh=1',
          return_url: 'https://app.acme-physio.example/settings/payments',
        }),
        response: {
          200: answer('The Stripe account and a fresh onboarding link', Onboarding, {
            ...ACCOUNT,
            charges_enabled: false,
            payouts_enabled: false,
            details_submitted: false,
            ready: false,
            onboarding_url: 'https://connect.stripe.com/setup/e/acct_1PqR2sT3uV4wX5yZ/Yx8kLm2nOp4q',
          }),
        },
      },
    },
    async (request) => payments.connect(actorOf(request.caller), request.body),
  );

  app.get(
    '/v1/stripe/account',
    {
      config: {
        access: 'private',
        problems: { '422': { description: NOT_CONFIGURED, codes: ['payments_not_configured'] } },
      },
      schema: {
        operationId: 'getStripeAccount',
        tags: ['Payments'],
        summary: 'The account’s Stripe account and whether it can take paid bookings',
        response: { 200: answer('The connected Stripe account', ConnectedAccount, ACCOUNT) },
      },
    },
    async (request) => payments.connectedAccount(actorOf(request.caller).accountId),
  );
}
