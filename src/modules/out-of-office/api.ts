/**
 * The outOfOffice module's public surface (docs/architecture.md#modules): types only. A principal's
 * out-of-office ranges (docs/api.md#out-of-office) are busy everywhere: the module contributes the
 * `out_of_office` busy source to availability; other modules call nothing of it.
 */
import type { BookingsApi } from '../bookings/api.js';
import type { PrincipalsApi } from '../principals/api.js';

/** What the module needs: who may act for a principal, and the bookings a new range overlaps. */
export interface OutOfOfficeNeeds {
  principals: { access: Pick<PrincipalsApi['access'], 'actingFor'> };
  bookings: Pick<BookingsApi, 'liveBookingsIn'>;
}

/** Nothing other modules call: its effect reaches them through availability's busy sources. */
export type OutOfOfficeApi = Record<never, never>;
