// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { PrincipalsApi, PrincipalsNeeds } from './api.js';
import { principalRoutes } from './routes.js';
import { PrincipalService } from './service.js';

/** Hosts, schedules, principal look-ups, and who may read or act for whom. Needs no other module. */
export const principalsModule = defineModule<PrincipalsNeeds>()({
  name: 'principals',
  needs: [],
  create({ platform, extensions }) {
    const service = new PrincipalService(platform, extensions);
    const api: PrincipalsApi = service;
    return {
      api,
      routes: (app) => principalRoutes(app, service),
      // Profiles (principal + schedule) are cached once changes can be heard from every process.
      listen: [(notifier) => service.listen(notifier)],
    };
  },
});
