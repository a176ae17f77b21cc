import { defineModule } from '../module.js';
import type { OutOfOfficeApi, OutOfOfficeNeeds } from './api.js';
import { OutOfOfficeBusySource } from './busy.js';
import { outOfOfficeRoutes } from './routes.js';
import { OutOfOfficeService } from './service.js';

/**
 * Out-of-office ranges (docs/api.md#out-of-office): a principal's time away. Contributes the
 * `out_of_office` busy source to availability; asks bookings which live bookings a new range overlaps.
 */
export const outOfOfficeModule = defineModule<OutOfOfficeNeeds>()({
  name: 'outOfOffice',
  needs: ['principals', 'bookings'],
  create({ platform, needs }) {
    const busy = new OutOfOfficeBusySource(platform.db, platform.clock);
    const service = new OutOfOfficeService(platform, needs, busy);
    const api: OutOfOfficeApi = {};
    return {
      api,
      routes: (app) => outOfOfficeRoutes(app, service),
      // Ranges are kept in memory once changes can be heard from every process.
      listen: [(notifier) => busy.listen(notifier)],
      contributes: { busySources: [busy] },
    };
  },
});
