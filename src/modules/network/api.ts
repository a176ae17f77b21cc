/**
 * The network module's public surface: types only (docs/architecture.md#modules). Consents between
 * principals and the network of connected principals.
 */
import type { AccountsApi } from '../accounts/api.js';
import type { MailApi } from '../mail/api.js';
import type { PrincipalsApi } from '../principals/api.js';
import type { WebhooksApi } from '../webhooks/api.js';

/** A network invitation as its link's page shows it (docs/api.md#network). */
export interface InvitationSummary {
  inviterId: string;
  inviteeEmail: string;
  inviteeName: string | null;
  relationshipType: string;
  message: string | null;
  status: 'pending' | 'accepted' | 'declined' | 'expired';
  expiresAt: Date;
}

/** What the network module does for other modules. */
export interface NetworkApi {
  /**
   * May `from` propose meetings to `to` (connected, or a booking:propose consent) in mode `livemode`,
   * at `now` (the time of that mode's clock)?
   */
  mayPropose(from: string, to: string, livemode: boolean, now: Date): Promise<boolean>;
  /** The live consent reaper's pass (the `consent-expiry` schedule; tests and support). */
  expireConsents(): Promise<number>;
  /** The invitation behind a link's token (compared by its hash), as stored; null: no such invitation. */
  invitationByToken(token: string): Promise<InvitationSummary | null>;
}

export interface NetworkNeeds {
  principals: Pick<PrincipalsApi, 'profiles' | 'contacts'> & {
    access: Pick<PrincipalsApi['access'], 'actingFor'>;
  };
  mail: Pick<MailApi, 'enqueue'>;
  accounts: Pick<AccountsApi, 'userEmail' | 'userIdByEmail'>;
  webhooks: Pick<WebhooksApi, 'emit'>;
}
