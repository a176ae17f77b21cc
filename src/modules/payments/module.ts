// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { PaymentsApi, PaymentsNeeds } from './api.js';
import { stripeEventRetentionSchedule } from './retention.js';
import { paymentRoutes } from './routes.js';
import { PaymentsService } from './service.js';

/**
 * Stripe: Checkout Sessions and refunds for paid bookings, the signed webhook (each event once, its
 * handlers contributed by other modules through `stripeEvents`), Connect accounts.
 */
export const paymentsModule = defineModule<PaymentsNeeds>()({
  name: 'payments',
  needs: [],
  create({ platform, extensions }) {
    const { db, clock, config } = platform;
    const payments = new PaymentsService(platform, extensions);
    const api: PaymentsApi = payments;
    return {
      api,
      routes: (app) => paymentRoutes(app, payments),
      schedules: [stripeEventRetentionSchedule(db, clock, config.retention.stripeEventsMs)],
    };
  },
});
