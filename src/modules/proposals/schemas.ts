/** TypeBox schemas of the proposals module's answers and events (docs/api.md#proposals-and-polls). */
import { Type } from '@sinclair/typebox';
import { EmailAddress, prefixedIdPattern, Timestamp, Uuid } from '../../platform/schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const PROPOSAL_STATUSES = ['proposed', 'accepted', 'rejected', 'countered', 'cancelled', 'expired'];

export const Slot = Type.Object({
  id: Type.String({ pattern: prefixedIdPattern('slot'), description: 'slot_…' }),
  start: Timestamp,
  end: Timestamp,
  is_selected: Type.Boolean(),
  votes: Type.Integer(),
});
export const Resolution = Type.Object(
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
);
export const Proposal = Type.Object({
  id: Type.String({ pattern: prefixedIdPattern('prop'), description: 'prop_…' }),
  thread_id: Type.String({ pattern: prefixedIdPattern('thr'), description: 'thr_…' }),
  parent_id: Nullable(
    Type.String({ pattern: prefixedIdPattern('prop'), description: 'the proposal this one counters' }),
  ),
  mode: Type.String({ enum: ['standard', 'poll'] }),
  poll_variant: Nullable(Type.String({ enum: ['named', 'open'] })),
  status: Type.String({ enum: [...PROPOSAL_STATUSES] }),
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
  booking_error: Nullable(Type.String({ description: 'slot_unavailable: a resolved poll’s time was taken' })),
  expires_at: Timestamp,
  created_at: Timestamp,
  resolved_at: Nullable(Timestamp),
});

/** What the OpenAPI document shows (platform/openapi.ts). */
export const SLOTS = [
  {
    id: 'slot_01jxk9a1b2c3d4e5f6g7h8j9k0',
    start: '2026-06-10T14:00:00.000Z',
    end: '2026-06-10T15:00:00.000Z',
    is_selected: true,
    votes: 0,
  },
  {
    id: 'slot_01jxk9a1b2c3d4e5f6g7h8j9k1',
    start: '2026-06-11T09:00:00.000Z',
    end: '2026-06-11T10:00:00.000Z',
    is_selected: false,
    votes: 0,
  },
];
export const PROPOSAL = {
  id: 'prop_01jxk9a0b1c2d3e4f5g6h7j8k9',
  thread_id: 'thr_01jxk9a0b1c2d3e4f5g6h7j8k9',
  parent_id: null,
  mode: 'standard',
  poll_variant: null,
  status: 'accepted',
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
  expires_at: '2026-06-08T14:00:00.000Z',
  created_at: '2026-06-05T14:00:00.000Z',
  resolved_at: '2026-06-05T16:12:00.000Z',
};
export const POLL = {
  ...PROPOSAL,
  id: 'prop_01jxk9c0b1c2d3e4f5g6h7j8k9',
  thread_id: 'thr_01jxk9c0b1c2d3e4f5g6h7j8k9',
  mode: 'poll',
  poll_variant: 'open',
  status: 'proposed',
  participants: [{ principal_id: null, email: 'ana@example.com', name: 'Ana', response: 'voted' }],
  slots: SLOTS.map((s, i) => ({ ...s, is_selected: false, votes: i === 0 ? 1 : 0 })),
  title: 'Team dinner',
  message: null,
  resolved_at: null,
};
export const RESOLVED = {
  ...POLL,
  status: 'accepted',
  slots: SLOTS.map((s, i) => ({ ...s, is_selected: i === 0, votes: i === 0 ? 1 : 0 })),
  resolution: {
    winning_slot: { id: SLOTS[0]!.id, start: SLOTS[0]!.start, end: SLOTS[0]!.end },
    vote_count: 1,
    total_votes: 1,
    tie_count: 1,
  },
  resolved_at: '2026-06-07T09:00:00.000Z',
};
