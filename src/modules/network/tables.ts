/** Table types of the network module (migration 0011_network), merged into the database type. */
import type { Generated } from 'kysely';
import type { Timestamp } from '../../db/types.js';

export type ConsentStatus = 'active' | 'revoked' | 'expired';
export type InvitationStatus = 'pending' | 'accepted' | 'declined' | 'expired';

export interface ConsentsTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  /** `cons_…` */
  id: string;
  grantor_id: string;
  grantee_id: string;
  /** The accounts of both parties: both hear consent.granted and consent.revoked. */
  grantor_account_id: string;
  grantee_account_id: string;
  scopes: string[];
  status: ConsentStatus;
  expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  revoked_at: Timestamp | null;
}

/** One connected pair, the smaller id first. */
export interface NetworkConnectionsTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  principal_a: string;
  principal_b: string;
  relationship_type: string;
  invitation_id: string | null;
  connected_at: Timestamp;
}

export interface NetworkInvitationsTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  /** `inv_…` */
  id: string;
  inviter_id: string;
  inviter_account_id: string;
  invitee_email: string;
  invitee_name: string | null;
  relationship_type: string;
  message: string | null;
  status: InvitationStatus;
  /** SHA-256 (hex) of the invitation token; the token itself is only in the mail. */
  token_hash: string;
  expires_at: Timestamp;
  created_at: Timestamp;
  responded_at: Timestamp | null;
  accepted_by: string | null;
}

declare module '../../db/types.js' {
  interface DB {
    consents: ConsentsTable;
    network_connections: NetworkConnectionsTable;
    network_invitations: NetworkInvitationsTable;
  }
}
