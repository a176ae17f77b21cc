// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { ProposalsApi, ProposalsNeeds } from './api.js';
import { proposalEvents } from './events.js';
import { proposalRoutes } from './routes.js';
import { ProposalService } from './service.js';

/**
 * Multi-party proposals and polls: propose, counter, accept, vote, resolve, expire (the
 * `proposal-expiry` reaper). An accepted proposal books everyone through the bookings module and
 * writes one meeting into their calendars.
 */
export const proposalsModule = defineModule<ProposalsNeeds>()({
  name: 'proposals',
  needs: ['principals', 'mail', 'calendars', 'bookings', 'network', 'webhooks'],
  events: proposalEvents,
  create({ platform, needs }) {
    const proposals = new ProposalService(platform, needs);
    const api: ProposalsApi = proposals;
    return {
      api,
      routes: (app) => proposalRoutes(app, proposals),
      schedules: [{ name: 'proposal-expiry', everyMs: 30_000, run: () => proposals.expireDue() }],
      // The pages module (built before this one) asks what a magic link is now through this point.
      contributes: {
        proposalLinks: [{ state: (token) => proposals.linkState(token) }],
        timedWork: [proposals.expiry],
      },
    };
  },
});
