/**
 * The proposals module's public surface: types only (docs/architecture.md#modules). Multi-party
 * proposals and polls; an accepted one books everyone through the bookings module.
 */
import type { BookingsApi } from '../bookings/api.js';
import type { CalendarsApi } from '../calendars/api.js';
import type { MailApi } from '../mail/api.js';
import type { NetworkApi } from '../network/api.js';
import type { PrincipalsApi } from '../principals/api.js';
import type { WebhooksApi } from '../webhooks/api.js';

/** What the proposals module does for other modules (and for operators and tests). */
export interface ProposalsApi {
  /** The reaper's pass (the `proposal-expiry` schedule): proposals past `expires_at` expire or resolve. */
  expireDue(limit?: number): Promise<number>;
}

export interface ProposalsNeeds {
  principals: Pick<PrincipalsApi, 'profiles' | 'contacts'> & {
    access: Pick<PrincipalsApi['access'], 'actingFor'>;
  };
  mail: Pick<MailApi, 'enqueue'>;
  calendars: Pick<CalendarsApi, 'writeMeeting' | 'removeMeeting' | 'isConnected'>;
  bookings: Pick<BookingsApi, 'takeMeeting' | 'cancelMeeting' | 'busyChanged' | 'meetingTitle'>;
  network: Pick<NetworkApi, 'mayPropose'>;
  webhooks: Pick<WebhooksApi, 'emit'>;
}
