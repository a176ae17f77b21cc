/** The bookings module's public surface (docs/architecture.md#modules). */
export type { BookingBusySource } from './busy.js';
/** A time already taken (23P01), or a deadlock between two takers of it: refuse as taken. */
export { meetingWith } from './present.js';
export { isExclusionViolation } from './repo.js';
export type { BookingService as BookingsApi } from './service.js';
export type { BookingStatus } from './tables.js';
