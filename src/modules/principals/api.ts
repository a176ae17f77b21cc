/**
 * The principals module's public surface: what other modules may import (docs/architecture.md#modules).
 * Principals are accounts, users and hosts; this module owns their rows, their schedules, and the
 * decision of who may read or act for whom.
 */
import type { Caller } from '../../platform/auth.js';
import type { PrincipalKind } from './repo.js';
import type { PrincipalService } from './service.js';

export type { PrincipalAccess } from './access.js';
export type { NewPrincipal, PrincipalKind } from './repo.js';
export { relationTo } from './access.js';
export {
  type Contact as PrincipalContact,
  isValidZone,
  type PrincipalProfile,
  type PrincipalService,
} from './service.js';

/** A live principal as other modules see it. */
export interface PrincipalRef {
  id: string;
  kind: PrincipalKind;
  accountId: string;
  timezone: string;
}

/** Why a read of another principal's availability is allowed. */
export type AccessBasis = 'self' | 'managed_host' | 'network' | 'consent';

export interface AccessDecision {
  allowed: boolean;
  basis: AccessBasis | null;
  /** The consent that allowed the read (basis 'consent'), else null. */
  consentId: string | null;
  /** May see event details (titles): itself and its hosts, or a consent with `availability:read:details`. */
  details: boolean;
}

/** What a grant allows for one principal. */
export interface AccessGrant {
  basis: AccessBasis;
  consentId: string | null;
  /** Event details too (`availability:read:details`); default false. */
  details?: boolean;
}

export interface AccessRuleInput {
  /** Existing, live principals not yet allowed by an earlier rule (never empty). */
  principals: readonly PrincipalRef[];
  /** `consent_id` as sent by the client, when it sent one. */
  consentId: string | null;
}

/**
 * An access grant contributed by another module (extension point `accessGrants`): returns a grant for
 * each principal of `input.principals` it allows, nothing for the others. Rules see whole batches
 * (mutual availability asks for up to five principals) so they can answer with one query.
 */
export type AccessRule = (
  caller: Caller,
  input: AccessRuleInput,
) => Promise<ReadonlyMap<string, AccessGrant>>;

/** Tells which principals have a connected calendar (extension point `calendarStatus`). */
export interface CalendarStatus {
  connected(principalIds: readonly string[]): Promise<ReadonlySet<string>>;
}

/** The principals module's API: the service, with `access` (who may read or act for whom). */
export type PrincipalsApi = PrincipalService;

declare module '../module.js' {
  interface ExtensionPointTypes {
    /** Access grants beyond "self" and "a host of my account" (network adds consents and connections). */
    accessGrants: AccessRule;
    /** Which principals have a connected calendar (shown on hosts). */
    calendarStatus: CalendarStatus;
  }
}
