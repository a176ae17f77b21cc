/** TypeBox schemas of the proposals module's requests, answers and events (docs/api.md#proposals-and-polls). */
import { type Static, Type } from '@sinclair/typebox';
import type { ProposalStatus } from '../../lib/proposals.js';
import {
  ActingFor as ActingForId,
  EmailAddress,
  named,
  StringEnum,
  Pagination,
  PrefixedId,
  prefixedIdPattern,
  Timestamp,
  Uuid,
} from '../../platform/schemas.js';
import { ISO_INSTANT_PATTERN } from '../../platform/validation.js';

/** The longest a proposal stays open (hours). */
export const MAX_EXPIRES_HOURS = 720;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const PROPOSAL_STATUSES = ['proposed', 'accepted', 'rejected', 'countered', 'cancelled', 'expired'];
const ProposalStatusSchema = StringEnum(PROPOSAL_STATUSES as readonly ProposalStatus[], {
  name: 'ProposalStatus',
});
const ProposalMode = StringEnum(['standard', 'poll'], { name: 'ProposalMode' });
const PollVariant = StringEnum(['named', 'open'], { name: 'PollVariant' });

export const Slot = named(
  'ProposalSlot',
  Type.Object({
    id: Type.String({ pattern: prefixedIdPattern('slot'), description: 'slot_…' }),
    start: Timestamp,
    end: Timestamp,
    is_selected: Type.Boolean(),
    votes: Type.Integer(),
  }),
);
export const Resolution = named(
  'PollResolution',
  Type.Object(
    {
      winning_slot: Type.Object({
        id: Type.String({ description: 'slot_…' }),
        start: Timestamp,
        end: Timestamp,
      }),
      vote_count: Type.Integer(),
      total_votes: Type.Integer(),
      tie_count: Type.Integer(),
    },
    { description: 'a resolved poll’s result (the proposal.resolved fields)' },
  ),
);
export const Proposal = named(
  'Proposal',
  Type.Object({
    id: Type.String({ pattern: prefixedIdPattern('prop'), description: 'prop_…' }),
    thread_id: Type.String({ pattern: prefixedIdPattern('thr'), description: 'thr_…' }),
    parent_id: Nullable(
      Type.String({ pattern: prefixedIdPattern('prop'), description: 'the proposal this one counters' }),
    ),
    mode: ProposalMode,
    poll_variant: Nullable(PollVariant),
    status: ProposalStatusSchema,
    requester_id: Uuid,
    participants: Type.Array(
      Type.Object({
        principal_id: Nullable(Uuid),
        email: Nullable(EmailAddress),
        name: Type.String(),
        response: Type.String({ enum: ['pending', 'accepted', 'rejected', 'countered', 'voted'] }),
      }),
    ),
    slots: Type.Array(Slot),
    title: Nullable(Type.String()),
    message: Nullable(Type.String()),
    metadata: Type.Record(Type.String(), Type.String()),
    resolution: Nullable(Resolution),
    booking_error: Nullable(
      Type.String({ description: 'slot_unavailable: a resolved poll’s time was taken' }),
    ),
    expires_at: Timestamp,
    created_at: Timestamp,
    resolved_at: Nullable(Timestamp),
    livemode: Type.Boolean({ description: 'false: made in test mode (docs/api.md#test-mode)' }),
  }),
);

/** What the OpenAPI document shows (platform/openapi.ts). */
export const SLOTS = [
  {
    id: 'slot_01jxk9a1b2c3d4e5f6g7h8j9k0',
    start: '2054-06-10T14:00:00.000Z',
    end: '2054-06-10T15:00:00.000Z',
    is_selected: true,
    votes: 0,
  },
  {
    id: 'slot_01jxk9a1b2c3d4e5f6g7h8j9k1',
    start: '2054-06-11T09:00:00.000Z',
    end: '2054-06-11T10:00:00.000Z',
    is_selected: false,
    votes: 0,
  },
];
export const PROPOSAL = {
  id: 'prop_01jxk9a0b1c2d3e4f5g6h7j8k9',
  thread_id: 'thr_01jxk9a0b1c2d3e4f5g6h7j8k9',
  parent_id: null,
  mode: 'standard' as const,
  poll_variant: null,
  status: 'accepted' as const,
  requester_id: '0190a4c3-2a4b-7c6d-8e0f-1a2b3c4d5e6f',
  participants: [
    {
      principal_id: '0190a4b8-1f2e-7c44-8a9d-3e5f7a1b2c3d',
      email: null,
      name: 'Sam Okafor',
      response: 'accepted',
    },
  ],
  slots: SLOTS,
  title: 'Partnership kick-off',
  message: 'Either time works for us.',
  metadata: {},
  resolution: null,
  booking_error: null,
  expires_at: '2054-06-08T14:00:00.000Z',
  created_at: '2054-06-05T14:00:00.000Z',
  resolved_at: '2054-06-05T16:12:00.000Z',
  livemode: true,
};
export const POLL = {
  ...PROPOSAL,
  id: 'prop_01jxk9c0b1c2d3e4f5g6h7j8k9',
  thread_id: 'thr_01jxk9c0b1c2d3e4f5g6h7j8k9',
  mode: 'poll' as const,
  poll_variant: 'open' as const,
  status: 'proposed' as const,
  participants: [{ principal_id: null, email: 'ana@example.com', name: 'Ana', response: 'voted' }],
  slots: SLOTS.map((s, i) => ({ ...s, is_selected: false, votes: i === 0 ? 1 : 0 })),
  title: 'Team dinner',
  message: null,
  resolved_at: null,
};
export const RESOLVED = {
  ...POLL,
  status: 'accepted' as const,
  slots: SLOTS.map((s, i) => ({ ...s, is_selected: i === 0, votes: i === 0 ? 1 : 0 })),
  resolution: {
    winning_slot: { id: SLOTS[0]!.id, start: SLOTS[0]!.start, end: SLOTS[0]!.end },
    vote_count: 1,
    total_votes: 1,
    tie_count: 1,
  },
  resolved_at: '2054-06-07T09:00:00.000Z',
};

// ---- requests and the answers of the routes ------------------------------------------------------

const ActingFor = Type.Optional(ActingForId);
/** What the service accepts (platform/validation.ts `isIsoInstant`): seconds optional, an offset or Z. */
const Instant = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: ISO_INSTANT_PATTERN,
  description: 'ISO 8601 instant with an offset',
});
export const SlotIn = Type.Object({ start: Instant, end: Instant }, { additionalProperties: false });
export type SlotIn = Static<typeof SlotIn>;

export const ProposalAnswer = named(
  'ProposalAnswer',
  Type.Object({ proposal: Proposal, counter_proposal: Type.Optional(Proposal) }),
);
export const PublicProposal = named(
  'PublicProposal',
  Type.Object({
    id: Type.String(),
    mode: ProposalMode,
    poll_variant: Nullable(PollVariant),
    status: ProposalStatusSchema,
    requester_name: Type.String(),
    title: Nullable(Type.String()),
    message: Nullable(Type.String()),
    slots: Type.Array(Slot),
    participants: Type.Array(Type.Object({ name: Type.String(), response: Type.String() })),
    resolution: Nullable(Resolution),
    expires_at: Timestamp,
    viewer: Type.Object({
      name: Nullable(Type.String()),
      response: Nullable(Type.String()),
      voted_slot_id: Nullable(Type.String({ pattern: prefixedIdPattern('slot') })),
      can_respond: Type.Boolean(),
    }),
  }),
);
export const PublicProposalAnswer = named('PublicProposalAnswer', Type.Object({ proposal: PublicProposal }));

export const ProposalParams = Type.Object(
  { id: PrefixedId('prop', 'proposal id (prop_…)') },
  { additionalProperties: false },
);
export const ThreadParams = Type.Object(
  { id: PrefixedId('thr', 'thread id (thr_…)') },
  { additionalProperties: false },
);

export const CreateProposalBody = Type.Object(
  {
    mode: ProposalMode,
    participant_ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 10 }),
    ),
    participant_emails: Type.Optional(
      Type.Array(Type.String({ minLength: 3, maxLength: 320 }), {
        maxItems: 50,
        description: 'named poll invitees; none (or absent) makes an open poll',
      }),
    ),
    slots: Type.Array(SlotIn, { minItems: 1, maxItems: 10 }),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    message: Type.Optional(Type.String({ maxLength: 2000 })),
    metadata: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 40 }), Type.String({ maxLength: 500 }), {
        maxProperties: 20,
      }),
    ),
    expires_in_hours: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_EXPIRES_HOURS,
        description: 'default 72 (standard) or 168 (poll; at most until an hour before its first slot)',
      }),
    ),
    principal_id: ActingFor,
  },
  {
    'x-checks': [
      '`mode: standard` (the default) takes `participant_ids` (1 to 10 principals, not the requester) and no `participant_emails`',
      '`mode: poll` takes `participant_emails` (each once) and no `participant_ids`',
    ],
    additionalProperties: false,
  },
);
export type CreateProposalBody = Static<typeof CreateProposalBody>;

export const ProposalCreated = Type.Object({
  proposal: Proposal,
  invitations: Type.Optional(
    Type.Array(Type.Object({ email: EmailAddress, magic_link_url: Type.String({ format: 'uri' }) }), {
      description: 'named poll: each invitee’s single-use link, shown once',
    }),
  ),
  magic_link_url: Type.Optional(
    Type.String({ format: 'uri', description: 'open poll: the shared link, shown once' }),
  ),
});

export const ProposalsQuery = Type.Object(
  {
    role: Type.Optional(
      Type.Unsafe<'requester' | 'participant'>({ type: 'string', enum: ['requester', 'participant'] }),
    ),
    status: Type.Optional(ProposalStatusSchema),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    principal_id: ActingFor,
  },
  { additionalProperties: false },
);
export type ProposalsQuery = Static<typeof ProposalsQuery>;
export const ProposalList = Type.Object({ proposals: Type.Array(Proposal), pagination: Pagination });

export const TokenQuery = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const Thread = named(
  'Thread',
  Type.Object({
    thread: Type.Object({
      id: Type.String({ pattern: prefixedIdPattern('thr') }),
      proposals: Type.Array(Proposal),
    }),
  }),
);

export const RespondBody = Type.Object(
  {
    action: Type.Unsafe<'accept' | 'counter' | 'reject'>({
      type: 'string',
      enum: ['accept', 'counter', 'reject'],
    }),
    selected_slot_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    counter_slots: Type.Optional(Type.Array(SlotIn, { minItems: 1, maxItems: 10 })),
    message: Type.Optional(Type.String({ maxLength: 2000 })),
    token: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    voter_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    voter_email: Type.Optional(Type.String({ format: 'email', minLength: 3, maxLength: 320 })),
    principal_id: ActingFor,
  },
  {
    'x-checks': [
      '`action: counter` takes `counter_slots`, each in the future',
      "in a poll, a vote takes `selected_slot_id` (one of the proposal's slots); with several slots a standard acceptance does too",
      'in an open poll (voting by link), `voter_name` and an e-mail address in `voter_email`',
    ],
    additionalProperties: false,
  },
);
export type RespondBody = Static<typeof RespondBody>;
export const RespondAnswer = Type.Union([ProposalAnswer, PublicProposalAnswer]);

export const EmptyBody = Type.Object({}, { additionalProperties: false });
export const CancelProposalBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 1000 })) },
  { additionalProperties: false },
);
