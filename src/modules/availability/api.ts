/** The availability module's public surface (docs/architecture.md#modules). */
export type { BusyAnswer, BusySource, Interval, TitledInterval } from './busy-source.js';
export type { AvailabilityService as AvailabilityApi } from './service.js';
export type { BookingLimits, LinkSlotsInput, SlotRefusal } from './service.js';
