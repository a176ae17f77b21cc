import type { Actor } from '../../platform/actor.js';

/**
 * The calendars module's one view of principals: may this actor act for that principal, is this a
 * live host of that account and mode, and the zone a principal's floating events are read in. The
 * principals module answers all three (calendars/module.ts wires its API in).
 */
export interface PrincipalDirectory {
  mayActFor(actor: Actor, principalId: string): Promise<boolean>;
  /** A live (not deleted) host of the account, of that mode (docs/api.md#test-mode). */
  isManagedHost(accountId: string, principalId: string, livemode: boolean): Promise<boolean>;
  timeZoneOf(principalId: string): Promise<string>;
}
