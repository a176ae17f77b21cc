// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { NetworkApi, NetworkNeeds } from './api.js';
import { networkEvents } from './events.js';
import { networkRoutes } from './routes.js';
import { NetworkService } from './service.js';

/**
 * Consents between principals and the network of connected principals: who may read whose free time
 * (an access rule contributed to principals) and who may propose to whom (`mayPropose`).
 */
export const networkModule = defineModule<NetworkNeeds>()({
  name: 'network',
  needs: ['principals', 'mail', 'accounts', 'webhooks'],
  events: networkEvents,
  create({ platform, needs }) {
    const network = new NetworkService(platform, needs);
    const api: NetworkApi = network;
    return {
      api,
      routes: (app) => networkRoutes(app, network),
      schedules: [{ name: 'consent-expiry', everyMs: 30_000, run: () => network.expireConsents() }],
      contributes: { accessGrants: [network.accessRule], timedWork: [network.consentExpiry] },
    };
  },
});
