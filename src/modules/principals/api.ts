/**
 * The principals module's public surface: types only (docs/architecture.md#modules). Principals are
 * accounts, users and hosts; this module owns their rows, their schedules, and the decision of who
 * may read or act for whom.
 */
import type { Tx } from '../../db/store.js';
import type { Schedule } from '../../lib/schedule.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import type { CreateHostBody, Host } from './schemas.js';
import type { Static } from '@sinclair/typebox';

export type PrincipalKind = 'account' | 'host' | 'user';

/** A live principal as other modules see it. */
export interface PrincipalRef {
  id: string;
  kind: PrincipalKind;
  accountId: string;
  timezone: string;
  /**
   * Its mode (docs/api.md#test-mode): false for a host made with a test key. Account and user
   * principals are always true and shared by both modes; a host belongs to its mode only (see
   * `visibleIn`, principals/access.ts).
   */
  livemode: boolean;
}

/** A live principal with its effective schedule (the stored one or the default). */
export interface PrincipalProfile extends PrincipalRef {
  schedule: Schedule;
}

/** A principal's display name, mail address (null: none) and the zone its mails speak (its schedule's). */
export interface PrincipalContact {
  name: string;
  email: string | null;
  timezone: string;
}

/** The principal row of a new account or user (hosts are created through the hosts routes). */
export interface NewPrincipal {
  id: string;
  kind: PrincipalKind;
  account_id: string;
  display_name: string;
  /** For a user: its sign-in e-mail, which is the principal's mail address from then on. */
  email: string | null;
  timezone: string;
  created_at: Date;
}

/**
 * Who acts, as far as principal relations go (a Caller fits too: anonymous callers relate to nothing);
 * `livemode` is its mode: hosts of the other mode are strangers to it.
 */
export type ActorLike = { accountId: string | null; principalId: string | null; livemode: boolean };

/** Whose hosts, in which mode and on which clock (an Actor fits): the hosts routes' owner. */
export interface HostOwner {
  accountId: string;
  livemode: boolean;
  clock: Clock;
}

/** Limits a principal look-up to what one mode sees (absent: both modes). */
export interface ModeFilter {
  /** Hosts of the other mode are left out (as if they did not exist); shared principals stay. */
  livemode?: boolean;
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

/** Who may read or act for whom (principals/access.ts). */
export interface PrincipalAccessApi {
  /**
   * The live principal `principalId` if `actor` may act for it — itself or a host its account
   * manages — else null (also when it does not exist). Callers choose the 403 they answer.
   */
  actingFor(actor: ActorLike, principalId: string): Promise<PrincipalProfile | null>;
  /** May `actor` act for `principalId` — itself (its principal or its account) or a live host its account manages? */
  mayActFor(actor: ActorLike, principalId: string): Promise<boolean>;
  /**
   * The read decision for each of `ids` at once. `known` passes principals the caller already loaded
   * (any id missing from it is looked up; absent or deleted principals are denied).
   */
  canReadMany(
    caller: Caller,
    ids: readonly string[],
    opts?: { consentId?: string | null; known?: ReadonlyMap<string, PrincipalRef> },
  ): Promise<Map<string, AccessDecision>>;
}

/** What the principals module does for other modules. */
export interface PrincipalsApi {
  readonly access: PrincipalAccessApi;
  /**
   * Live principals among `ids` (keyed by lower-case id), with their effective schedules, from a
   * cache invalidated by NOTIFY. The objects may be shared with other requests: never mutate them.
   * With `mode.livemode`, hosts of the other mode are absent (no extra statement: a filter).
   */
  profiles(ids: readonly string[], mode?: ModeFilter): Promise<Map<string, PrincipalProfile>>;
  /**
   * The live principals behind `ids` as stored now, read in the caller's transaction and locked
   * against changes (schedule, zone, deletion) until it ends; `contacts` as `contacts()` answers them.
   * With `mode.livemode`, hosts of the other mode are absent from `profiles` (as deleted ones are).
   */
  lockedProfiles(
    trx: Tx,
    ids: readonly string[],
    mode?: ModeFilter,
  ): Promise<{ profiles: Map<string, PrincipalProfile>; contacts: Map<string, PrincipalContact> }>;
  /**
   * Display names and mail addresses (docs/api.md#e-mail-and-pages: a user's sign-in e-mail, a host's
   * or an account's contact e-mail, or null), keyed by id; deleted principals too. Not cached.
   */
  contacts(ids: readonly string[]): Promise<Map<string, PrincipalContact>>;
  /** Sets the display name of a user's principal (the accounts module: a user's name), in `trx`. */
  renameUser(trx: Tx, id: string, displayName: string): Promise<void>;
  /**
   * Is `principalId` a live host of the account — of mode `livemode` when given (a request's: a host
   * of the other mode is a stranger), of either mode when left out (a signed link naming the host)?
   */
  isManagedHost(accountId: string, principalId: string, livemode?: boolean): Promise<boolean>;
  /**
   * The mode of the account's live host `principalId` (false: a test-mode host), or null when it has
   * no such host: what acts for a host named by a signed link (a connect link) acts in. One statement.
   */
  hostMode(accountId: string, principalId: string): Promise<boolean | null>;
  /** The zone a principal's floating and all-day calendar events are read in (also when deleted); UTC by default. */
  storedZoneOf(id: string): Promise<string>;
  /** Inserts the principal row of a new account or user, in the caller's transaction. */
  insertPrincipal(trx: Tx, principal: NewPrincipal): Promise<void>;
  /**
   * Creates a host of the account (the hosts route; operators' and tests' fixtures), of the mode and
   * at the time of `as` (default: a live host, now by the server's clock).
   */
  createHost(
    accountId: string,
    input: Static<typeof CreateHostBody>,
    as?: Pick<HostOwner, 'livemode' | 'clock'>,
  ): Promise<Static<typeof Host>>;
}

/** The principals module needs no other module. */
export type PrincipalsNeeds = Record<never, never>;

declare module '../module.js' {
  interface ExtensionPointTypes {
    /** Access grants beyond "self" and "a host of my account" (network adds consents and connections). */
    accessGrants: AccessRule;
    /** Which principals have a connected calendar (shown on hosts). */
    calendarStatus: CalendarStatus;
  }
}
