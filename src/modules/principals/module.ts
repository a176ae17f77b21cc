import { defineModule } from '../module.js';
import { principalRoutes } from './routes.js';
import { PrincipalService } from './service.js';

/** Hosts, schedules, principal look-ups, and who may read or act for whom. Needs no other module. */
export const principalsModule = defineModule()({
  name: 'principals',
  needs: [],
  create({ platform, extensions }) {
    const service = new PrincipalService(platform.db, platform.clock, extensions);
    return {
      api: service,
      routes: (app) => principalRoutes(app, service),
      // Profiles (principal + schedule) are cached once changes can be heard from every process.
      listen: [(notifier) => service.listen(notifier)],
    };
  },
});
