/** The availability module's public surface (docs/architecture.md#modules). */
export type { BusyAnswer, BusySource, Interval, TitledInterval } from './busy-source.js';
export type { AvailabilityService as AvailabilityApi } from './service.js';
export type { BookingLimits, LinkSlotsInput, SlotRefusal } from './service.js';

declare module '../module.js' {
  interface ExtensionPointTypes {
    /** Where availability reads busy time (calendars, bookings). */
    busySources: import('./busy-source.js').BusySource;
  }
}
