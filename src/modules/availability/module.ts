// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { PrincipalsApi } from '../principals/api.js';
import { availabilityRoutes } from './routes.js';
import { AvailabilityService } from './service.js';

export interface AvailabilityNeeds {
  principals: Pick<PrincipalsApi, 'profiles'> & { access: Pick<PrincipalsApi['access'], 'canReadMany'> };
}

/** Slots, next slot, mutual slots and availability blocks over the busy sources others contribute. */
export const availabilityModule = defineModule<AvailabilityNeeds>()({
  name: 'availability',
  needs: ['principals'],
  create({ platform, needs, extensions }) {
    const service = new AvailabilityService({
      clock: platform.clock,
      metrics: platform.metrics,
      principals: needs.principals,
      access: needs.principals.access,
      extensions,
    });
    return { api: service, routes: (app) => availabilityRoutes(app, service) };
  },
});
