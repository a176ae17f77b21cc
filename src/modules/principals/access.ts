/**
 * Who may read whose availability (SPEC.md 4.2). One decision for every availability endpoint:
 * the caller itself, a host its account manages, and, through rules other modules add with
 * `addAccessRule` (the network and consents modules), connected principals and principals who granted
 * consent. Anything else, including a principal that does not exist, is denied; the endpoints answer
 * 403 (never 404), so ids cannot be probed.
 */
import type { AppContext } from '../../context.js';
import type { Caller } from '../../platform/auth.js';
import { type PrincipalRef, relationTo } from '../principals/service.js';

export type AccessBasis = 'self' | 'managed_host' | 'network' | 'consent';

export interface AccessDecision {
  allowed: boolean;
  basis: AccessBasis | null;
  /** The consent that allowed the read (basis 'consent'), else null. */
  consentId: string | null;
}

/** What a rule grants for one principal. */
export interface AccessGrant {
  basis: AccessBasis;
  consentId: string | null;
}

export interface AccessRuleInput {
  /** Existing, live principals not yet allowed by an earlier rule (never empty). */
  principals: readonly PrincipalRef[];
  /** `consent_id` as sent by the client, when it sent one. */
  consentId: string | null;
}

/**
 * An extra access rule: returns a grant for each principal of `input.principals` it allows (and
 * nothing for the others). Rules see whole batches (mutual availability asks for up to five principals)
 * so that they can answer with one query. They are consulted for secret keys and user sessions only:
 * publishable keys reach their own account and its hosts, nothing else (SPEC.md 5).
 */
export type AccessRule = (
  ctx: AppContext,
  caller: Caller,
  input: AccessRuleInput,
) => Promise<ReadonlyMap<string, AccessGrant>>;

const extraRules = new WeakMap<AppContext, AccessRule[]>();

/** Adds a rule (network, consent) to the availability access check of this app context. */
export function addAccessRule(ctx: AppContext, rule: AccessRule): void {
  const rules = extraRules.get(ctx);
  if (rules) rules.push(rule);
  else extraRules.set(ctx, [rule]);
}

const DENIED: AccessDecision = Object.freeze({ allowed: false, basis: null, consentId: null });

/** May `caller` read the availability of `principalId`? */
export async function canReadAvailability(
  ctx: AppContext,
  caller: Caller,
  principalId: string,
  opts: { consentId?: string | null } = {},
): Promise<AccessDecision> {
  const decisions = await canReadAvailabilityMany(ctx, caller, [principalId], opts);
  return decisions.get(principalId) ?? DENIED;
}

/**
 * The access decision for each of `ids` at once. `known` passes principals the caller already loaded
 * (any id missing from it is looked up; absent or deleted principals are denied).
 */
export async function canReadAvailabilityMany(
  ctx: AppContext,
  caller: Caller,
  ids: readonly string[],
  opts: { consentId?: string | null; known?: ReadonlyMap<string, PrincipalRef> } = {},
): Promise<Map<string, AccessDecision>> {
  const out = new Map<string, AccessDecision>();
  for (const id of ids) out.set(id, DENIED);
  if (caller.kind === 'anonymous' || ids.length === 0) return out;

  const known = new Map<string, PrincipalRef>(opts.known ?? []);
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length > 0) {
    for (const [id, p] of await ctx.services.principals.profiles(missing)) known.set(id, p);
  }

  let pending: PrincipalRef[] = [];
  for (const id of new Set(ids)) {
    const p = known.get(id);
    if (!p) continue;
    const relation = relationTo(caller, p);
    if (relation) out.set(id, { allowed: true, basis: relation, consentId: null });
    else pending.push(p);
  }
  if (caller.kind === 'publishable') return out;

  for (const rule of extraRules.get(ctx) ?? []) {
    if (pending.length === 0) break;
    const grants = await rule(ctx, caller, { principals: pending, consentId: opts.consentId ?? null });
    const left: PrincipalRef[] = [];
    for (const p of pending) {
      const g = grants.get(p.id);
      if (g) out.set(p.id, { allowed: true, basis: g.basis, consentId: g.consentId });
      else left.push(p);
    }
    pending = left;
  }
  return out;
}
