/** Table types of the proposals module (migration 0012_proposals), merged into the database type. */
import type { ColumnType, Generated } from 'kysely';
import type { Json, Timestamp } from '../../db/types.js';
import type { ProposalMode, ProposalStatus } from '../../lib/proposals.js';

export type ParticipantResponse = 'pending' | 'accepted' | 'rejected' | 'countered' | 'voted';

/** A poll's stored result: the fields of `proposal.resolved` besides the ids (docs/api.md#events). */
export interface Resolution {
  winning_slot: { id: string; start: string; end: string };
  vote_count: number;
  total_votes: number;
  tie_count: number;
}

export interface ProposalsTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  /** `prop_…` */
  id: string;
  /** `thr_…`: the proposal and its counter-proposals. */
  thread_id: string;
  /** The proposal this one counters, else null. */
  parent_id: string | null;
  mode: ProposalMode;
  poll_variant: 'named' | 'open' | null;
  status: ProposalStatus;
  requester_id: string;
  requester_account_id: string;
  title: string | null;
  message: string | null;
  metadata: Json<Record<string, string>>;
  selected_slot_id: string | null;
  /** An open poll's multi-use link token, hashed (SHA-256 hex). */
  open_token_hash: string | null;
  resolution: ColumnType<Resolution | null, string | null, string | null>;
  /** Why the booking of an accepted poll could not be made (its time was taken), else null. */
  booking_error: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  resolved_at: Timestamp | null;
}

export interface ProposalSlotsTable {
  /** `slot_…` */
  id: string;
  proposal_id: string;
  position: number;
  start_time: Timestamp;
  end_time: Timestamp;
}

export interface ProposalParticipantsTable {
  /** `ppt_…` */
  id: string;
  proposal_id: string;
  position: number;
  principal_id: string | null;
  account_id: string | null;
  email: string | null;
  name: string;
  response: ParticipantResponse;
  voted_slot_id: string | null;
  message: string | null;
  /** SHA-256 (hex) of the participant's magic-link token; the token itself is never stored. */
  token_hash: string | null;
  token_used_at: Timestamp | null;
  responded_at: Timestamp | null;
}

declare module '../../db/types.js' {
  interface DB {
    proposals: ProposalsTable;
    proposal_slots: ProposalSlotsTable;
    proposal_participants: ProposalParticipantsTable;
  }
}
