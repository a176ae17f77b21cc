/**
 * The calendars module's one view of principals: "is this a live host of that account?" and the zone
 * a principal's floating events are read in. The principals module answers both (calendars/module.ts).
 */
export interface PrincipalDirectory {
  isManagedHost(accountId: string, principalId: string): Promise<boolean>;
  timeZoneOf(principalId: string): Promise<string>;
}
