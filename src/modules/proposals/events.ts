/**
 * The webhook events of proposals and polls (docs/api.md#events): their payload schemas, declared on
 * the module definition, and their types, added to the webhooks module's `EventPayloads` for
 * `emitEvent`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { StringEnum } from '../../platform/schemas.js';
import { PROPOSAL, Proposal, RESOLVED, Resolution } from './schemas.js';

/** `{ proposal }`: the proposal as the API shows it, after the change. */
const proposalOnly = (description: string, proposal: object = PROPOSAL) =>
  Type.Object({ proposal: Proposal }, { additionalProperties: false, description, examples: [{ proposal }] });

export const proposalEvents = {
  'proposal.created': proposalOnly('A proposal or poll was made (to every party’s account)', {
    ...PROPOSAL,
    status: 'proposed',
    participants: [{ ...PROPOSAL.participants[0], response: 'pending' }],
    resolved_at: null,
  }),
  'proposal.countered': Type.Object(
    { proposal: Proposal, counter_proposal: Type.Optional(Proposal) },
    {
      additionalProperties: false,
      description: 'A participant answered with other times',
      examples: [{ proposal: { ...PROPOSAL, status: 'countered' } }],
    },
  ),
  'proposal.accepted': proposalOnly('Every participant accepted; the bookings are made'),
  'proposal.rejected': proposalOnly('A participant rejected the proposal', {
    ...PROPOSAL,
    status: 'rejected',
  }),
  'proposal.cancelled': proposalOnly('The proposal was withdrawn, or its accepted meeting cancelled', {
    ...PROPOSAL,
    status: 'cancelled',
  }),
  'proposal.expired': proposalOnly('Nobody decided before it expired', {
    ...PROPOSAL,
    status: 'expired',
    resolved_at: null,
  }),
  'proposal.resolved': Type.Object(
    {
      proposal_id: Type.String({ pattern: '^prop_', description: 'prop_…' }),
      thread_id: Type.String({ pattern: '^thr_', description: 'thr_…' }),
      poll_variant: Type.Union([StringEnum(['named', 'open']), Type.Null()]),
      ...Resolution.properties,
    },
    {
      additionalProperties: false,
      description: 'A poll closed with a winning time (to the organiser’s subscriptions only)',
      examples: [
        {
          proposal_id: RESOLVED.id,
          thread_id: RESOLVED.thread_id,
          poll_variant: 'open',
          ...RESOLVED.resolution,
        },
      ],
    },
  ),
} as const;

type Payload<T extends keyof typeof proposalEvents> = Static<(typeof proposalEvents)[T]>;

declare module '../webhooks/api.js' {
  interface EventPayloads {
    'proposal.created': Payload<'proposal.created'>;
    'proposal.countered': Payload<'proposal.countered'>;
    'proposal.accepted': Payload<'proposal.accepted'>;
    'proposal.rejected': Payload<'proposal.rejected'>;
    'proposal.cancelled': Payload<'proposal.cancelled'>;
    'proposal.expired': Payload<'proposal.expired'>;
    'proposal.resolved': Payload<'proposal.resolved'>;
  }
}
