import type { Caller, CredentialResolver, ResolvedCredential } from '../../platform/auth.js';
import { safeEqual } from '../../platform/crypto.js';
import { Unauthorized } from '../../platform/errors.js';
import type { Clock } from '../../platform/clock.js';
import { type ApiKeyService, keyPrefix, planLimit } from './service.js';

/** Every key starts `svc_sk_` or `svc_pk_`, then `live_` or `test_` (docs/api.md#test-mode). */
const KEY_SHAPE = /^svc_[sp]k_(live|test)_/;

/**
 * API keys as a credential kind of the platform's authenticator (docs/api.md#credentials). A test key's
 * caller acts in test mode; the gate gives it its account's test clock per request.
 */
export function apiKeyCredentials(
  keys: Pick<ApiKeyService, 'resolve' | 'hash'>,
  clock: Clock,
): CredentialResolver {
  return {
    accepts: (token) => KEY_SHAPE.test(token),
    async resolve(token, now): Promise<ResolvedCredential> {
      if (token.length > 200) throw new Unauthorized();
      const row = await keys.resolve(token);
      if (!row || !safeEqual(row.key_hash, keys.hash(token))) throw new Unauthorized();
      const expiresAt = row.expires_at ? new Date(row.expires_at).getTime() : null;
      // Said only to whoever holds the key itself (its hash matched above).
      if (row.revoked_at !== null) throw new Unauthorized('This API key was revoked');
      if (expiresAt !== null && expiresAt <= now) throw new Unauthorized('This API key has expired');
      if (!token.startsWith(keyPrefix(row.key_type, row.environment))) throw new Unauthorized();
      const caller: Caller = {
        kind: row.key_type,
        accountId: row.account_id,
        principalId: row.account_id,
        keyId: row.id,
        userId: null,
        sessionId: null,
        scopes: row.scopes,
        allowedDomains: row.allowed_domains,
        rateLimit: row.rate_limit_per_hour ?? planLimit(row.plan, row.account_custom_limit),
        rateSubject: `key:${row.id}`,
        livemode: row.environment === 'live',
        clock,
        account: {
          id: row.account_id,
          name: row.account_name,
          plan: row.plan,
          rate_limit_per_hour: planLimit(row.plan, row.account_custom_limit),
          created_at: new Date(row.account_created_at).toISOString(),
        },
      };
      return { caller, expiresAt, ref: `key:${row.id}` };
    },
  };
}
