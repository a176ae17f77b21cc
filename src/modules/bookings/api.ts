/** The bookings module's public surface (docs/architecture.md#modules). */
export type { BookingBusySource } from './busy.js';
export type { BookingService as BookingsApi } from './service.js';
export type { BookingStatus } from './tables.js';
