/**
 * The webhook events of consents (docs/api.md#events): their payload schemas, declared on the module
 * definition, and their types, added to the webhooks module's `EventPayloads` for `emitEvent`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { CONSENT, Consent } from './schemas.js';

/** `{ consent }`: the consent as the API shows it, after the change (to both parties' accounts). */
const consentOnly = (description: string, consent: object) =>
  Type.Object({ consent: Consent }, { additionalProperties: false, description, examples: [{ consent }] });

export const networkEvents = {
  'consent.granted': consentOnly('A principal granted another access to its time', CONSENT),
  'consent.revoked': consentOnly('A consent was revoked by its grantor', {
    ...CONSENT,
    status: 'revoked',
    revoked_at: '2054-06-20T10:00:00.000Z',
  }),
} as const;

type Payload<T extends keyof typeof networkEvents> = Static<(typeof networkEvents)[T]>;

declare module '../webhooks/api.js' {
  interface EventPayloads {
    'consent.granted': Payload<'consent.granted'>;
    'consent.revoked': Payload<'consent.revoked'>;
  }
}
