import { errors, jwtVerify } from 'jose';
import type { Caller, CredentialResolver, ResolvedCredential } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { Unauthorized } from '../../platform/errors.js';
import type { AccountService } from './service.js';

/** User sessions (HS256 JWTs bound to a `sessions` row) as a credential kind (docs/api.md#credentials). */
export function sessionCredentials(
  accounts: Pick<AccountService, 'sessionActive' | 'getAccount'>,
  jwtKey: Buffer,
  clock: Clock,
): CredentialResolver {
  return {
    accepts: (token) => token.split('.').length === 3,
    async resolve(token, now): Promise<ResolvedCredential> {
      let claims: { sub?: string; sid?: unknown; acc?: unknown; exp?: number };
      try {
        ({ payload: claims } = await jwtVerify(token, jwtKey, {
          algorithms: ['HS256'],
          issuer: 'kairos',
          currentDate: new Date(now),
        }));
      } catch (err) {
        // A token whose signature verifies but whose time is over: say so; anything else is just invalid.
        if (err instanceof errors.JWTExpired)
          throw new Unauthorized('This session has expired; sign in again');
        throw new Unauthorized();
      }
      const { sub, sid, acc, exp } = claims;
      if (typeof sub !== 'string' || typeof sid !== 'string' || typeof acc !== 'string')
        throw new Unauthorized();
      if (!(await accounts.sessionActive(sid))) {
        throw new Unauthorized('This session was signed out or revoked; sign in again');
      }
      const account = await accounts.getAccount(acc);
      const caller: Caller = {
        kind: 'session',
        accountId: acc,
        principalId: sub,
        keyId: null,
        userId: sub,
        sessionId: sid,
        // A person signed in acts in live mode (docs/api.md#test-mode).
        livemode: true,
        clock,
        scopes: ['read', 'write'],
        allowedDomains: [],
        rateLimit: account.rate_limit_per_hour,
        rateSubject: `user:${sub}`,
        account,
      };
      return { caller, expiresAt: exp ? exp * 1000 : null, ref: `session:${sid}` };
    },
  };
}
