// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import type { MailApi } from '../mail/api.js';
import { defineModule } from '../module.js';
import { networkEvents } from './events.js';
import type { NetworkApi } from './api.js';
import type { PrincipalsApi } from '../principals/api.js';
import { networkRoutes } from './routes.js';
import { NetworkService } from './service.js';

export interface NetworkNeeds {
  principals: Pick<PrincipalsApi, 'profiles' | 'contacts'> & {
    access: Pick<PrincipalsApi['access'], 'actingFor'>;
  };
  mail: Pick<MailApi, 'enqueue'>;
}

/**
 * Consents between principals and the network of connected principals: who may read whose free time
 * (an access rule contributed to principals) and who may propose to whom (`mayPropose`).
 */
export const networkModule = defineModule<NetworkNeeds>()({
  name: 'network',
  needs: ['principals', 'mail'],
  events: networkEvents,
  create({ platform, needs }) {
    const { db, clock, config } = platform;
    const network = new NetworkService({ db, clock, config, principals: needs.principals, mail: needs.mail });
    return {
      api: {
        mayPropose: (from: string, to: string) => network.mayPropose(from, to),
        expireConsents: () => network.expireConsents(),
      } satisfies NetworkApi,
      routes: (app) => networkRoutes(app, network),
      schedules: [{ name: 'consent-expiry', everyMs: 30_000, run: () => network.expireConsents() }],
      contributes: { accessGrants: [network.accessRule] },
    };
  },
});
