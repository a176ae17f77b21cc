/**
 * What the server puts into a token page for its script (src/modules/pages/service.ts writes them,
 * the pages read them with `pageData`): one definition for both sides. Types only.
 */

/** What `/w/{token}` shows before the claim: the held time, until when it is held. */
export interface OfferView {
  title: string;
  customer_name: string;
  start: string;
  end: string;
  held_until: string;
  price_amount: number | null;
  price_currency: string | null;
  /** The link's questions: the claim answers them as a booking does. */
  questions: { id: string; label: string; type: string; required: boolean; options?: string[] }[];
}

/** What `/invitations/{token}` shows before signing in. */
export interface InvitationView {
  inviter_name: string;
  invitee_name: string | null;
  invitee_email: string;
  relationship_type: string;
  message: string | null;
  expires_at: string;
}
