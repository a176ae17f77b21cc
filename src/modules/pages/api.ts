/**
 * The pages module's public surface: types only (docs/architecture.md#modules). Pages are served to
 * people, not called by other modules: the API is empty; what the pages read comes from the APIs of
 * the modules that own it (`PagesNeeds`).
 */
import type { ApiKeysApi } from '../api-keys/api.js';
import type { BookingLinksApi } from '../booking-links/api.js';
import type { BookingsApi } from '../bookings/api.js';
import type { NetworkApi } from '../network/api.js';
import type { PrincipalsApi } from '../principals/api.js';

/** What a proposal's magic link is now, as the `/p/` page tells it: unknown (404), lapsed (410) or live. */
export type ProposalLinkState = 'unknown' | 'lapsed' | 'live';

/**
 * Extension point `proposalLinks`: the proposals module, built after this one, tells the `/p/` page
 * what a link's token is now (a participant's link or an open poll's shared link, by its hash).
 */
export interface ProposalLinks {
  state(token: string): Promise<ProposalLinkState>;
}

declare module '../module.js' {
  interface ExtensionPointTypes {
    proposalLinks: ProposalLinks;
  }
}

/** Nothing: no module calls the pages. */
export type PagesApi = Record<never, never>;

export interface PagesNeeds {
  apiKeys: Pick<ApiKeysApi, 'allowedDomains' | 'resolve' | 'hash'>;
  bookingLinks: Pick<BookingLinksApi, 'get'>;
  bookings: Pick<
    BookingsApi,
    'publicLink' | 'publicLinkView' | 'byToken' | 'manageTokenIssued' | 'waitlistClaim'
  >;
  principals: Pick<PrincipalsApi, 'contacts'>;
  network: Pick<NetworkApi, 'invitationByToken'>;
}
