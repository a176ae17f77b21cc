/**
 * Principal access, in one place (docs/api.md#availability-access): may this caller read principal
 * X's availability, and may it act for (manage) principal X. The caller itself and the hosts its
 * account manages are decided here (`relationTo`); further grants — the network and consents — are
 * contributed by other modules through the `accessGrants` extension point. Anything else, including
 * a principal that does not exist, is denied; endpoints answer 403 (never 404), so ids cannot be
 * probed. Test mode (docs/api.md#test-mode): a host of the other mode than the caller's is a stranger
 * (`visibleIn`); the account's and users' principals are shared by both modes.
 */
import type { Caller } from '../../platform/auth.js';
import type { Extensions } from '../module.js';
import type {
  AccessDecision,
  AccessGrant,
  ActorLike,
  PrincipalAccessApi,
  PrincipalProfile,
  PrincipalRef,
} from './api.js';

/**
 * Does a caller of mode `livemode` see principal `p` at all? Hosts belong to their mode; account and
 * user principals (always livemode=true) are shared by both.
 */
export function visibleIn(p: Pick<PrincipalRef, 'kind' | 'livemode'>, livemode: boolean): boolean {
  return p.kind !== 'host' || p.livemode === livemode;
}

/**
 * How `actor` relates to principal `p`: the actor itself (its acting principal, or its account's
 * principal), a host its account manages in the actor's mode, or nothing. Schedules and availability
 * share this rule.
 */
export function relationTo(actor: ActorLike, p: PrincipalRef): 'self' | 'managed_host' | null {
  if (p.id === actor.principalId || p.id === actor.accountId) return 'self';
  if (
    p.kind === 'host' &&
    actor.accountId !== null &&
    p.accountId === actor.accountId &&
    p.livemode === actor.livemode
  )
    return 'managed_host';
  return null;
}

const DENIED: AccessDecision = Object.freeze({
  allowed: false,
  basis: null,
  consentId: null,
  details: false,
});

export class PrincipalAccess implements PrincipalAccessApi {
  constructor(
    private readonly principals: {
      profiles(ids: readonly string[]): Promise<Map<string, PrincipalProfile>>;
    },
    private readonly extensions: Pick<Extensions, 'all'>,
  ) {}

  /**
   * The live principal `principalId` if `actor` may act for it — itself or a host its account
   * manages in the actor's mode — else null (also when it does not exist). Callers choose the 403
   * they answer.
   */
  async actingFor(actor: ActorLike, principalId: string): Promise<PrincipalProfile | null> {
    const id = principalId.toLowerCase();
    const p = (await this.principals.profiles([id])).get(id);
    return p && relationTo(actor, p) !== null ? p : null;
  }

  /**
   * May `actor` act for `principalId` — itself (its principal or its account) or a live host its
   * account manages in the actor's mode? The one answer every module asks before acting for a
   * principal.
   */
  async mayActFor(actor: ActorLike, principalId: string): Promise<boolean> {
    if (principalId === actor.principalId || principalId === actor.accountId) return true;
    return (await this.actingFor(actor, principalId)) !== null;
  }

  /**
   * The read decision for each of `ids` at once. `known` passes principals the caller already loaded
   * (any id missing from it is looked up; absent or deleted principals are denied). Grants are asked
   * for secret keys and user sessions only: publishable keys reach their own account and its hosts.
   * A host of the other mode than the caller's is denied as an unknown one (no grant can reach it).
   */
  async canReadMany(
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
      for (const [id, p] of await this.principals.profiles(missing)) known.set(id, p);
    }

    let pending: PrincipalRef[] = [];
    for (const id of new Set(ids)) {
      const p = known.get(id);
      if (!p || !visibleIn(p, caller.livemode)) continue;
      const relation = relationTo(caller, p);
      if (relation) out.set(id, { allowed: true, basis: relation, consentId: null, details: true });
      else pending.push(p);
    }
    if (caller.kind === 'publishable') return out;

    for (const rule of this.extensions.all('accessGrants')) {
      if (pending.length === 0) break;
      const grants: ReadonlyMap<string, AccessGrant> = await rule(caller, {
        principals: pending,
        consentId: opts.consentId ?? null,
      });
      const left: PrincipalRef[] = [];
      for (const p of pending) {
        const g = grants.get(p.id);
        if (g)
          out.set(p.id, {
            allowed: true,
            basis: g.basis,
            consentId: g.consentId,
            details: g.details === true,
          });
        else left.push(p);
      }
      pending = left;
    }
    return out;
  }
}
