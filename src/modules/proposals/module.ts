// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import type { BookingsApi } from '../bookings/api.js';
import type { CalendarsApi } from '../calendars/api.js';
import type { MailApi } from '../mail/api.js';
import { defineModule } from '../module.js';
import { proposalEvents } from './events.js';
import type { NetworkApi } from '../network/api.js';
import type { PrincipalsApi } from '../principals/api.js';
import { proposalRoutes } from './routes.js';
import { ProposalService } from './service.js';

export interface ProposalsNeeds {
  principals: Pick<PrincipalsApi, 'profiles' | 'contacts'> & {
    access: Pick<PrincipalsApi['access'], 'actingFor'>;
  };
  mail: Pick<MailApi, 'enqueue'>;
  calendars: Pick<CalendarsApi, 'writeMeeting' | 'removeMeeting' | 'isConnected'>;
  bookings: Pick<BookingsApi, 'bookMeeting' | 'cancelMeeting' | 'busyChanged'>;
  network: Pick<NetworkApi, 'mayPropose'>;
}

/**
 * Multi-party proposals and polls: propose, counter, accept, vote, resolve, expire (the
 * `proposal-expiry` reaper). An accepted proposal books everyone through the bookings module and
 * writes one meeting into their calendars.
 */
export const proposalsModule = defineModule<ProposalsNeeds>()({
  name: 'proposals',
  needs: ['principals', 'mail', 'calendars', 'bookings', 'network'],
  events: proposalEvents,
  create({ platform, needs }) {
    const { db, clock, config, log } = platform;
    const proposals = new ProposalService({
      db,
      clock,
      config,
      principals: needs.principals,
      mail: needs.mail,
      calendars: needs.calendars,
      bookings: needs.bookings,
      network: needs.network,
      log,
    });
    return {
      api: {
        /** The reaper's pass (the `proposal-expiry` schedule; tests and support). */
        expireDue: () => proposals.expireDue(),
      },
      routes: (app) => proposalRoutes(app, proposals),
      schedules: [{ name: 'proposal-expiry', everyMs: 30_000, run: () => proposals.expireDue() }],
    };
  },
});
