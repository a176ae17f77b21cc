// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { AvailabilityApi, AvailabilityNeeds } from './api.js';
import { availabilityRoutes } from './routes.js';
import { AvailabilityService } from './service.js';

/** Slots, next slot, mutual slots and availability blocks over the busy sources others contribute. */
export const availabilityModule = defineModule<AvailabilityNeeds>()({
  name: 'availability',
  needs: ['principals'],
  create({ platform, needs, extensions }) {
    const service = new AvailabilityService(platform, needs, extensions);
    const api: AvailabilityApi = service;
    return { api, routes: (app) => availabilityRoutes(app, service) };
  },
});
