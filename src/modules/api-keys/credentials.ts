import type { Caller, CredentialResolver, ResolvedCredential } from '../../platform/auth.js';
import { safeEqual } from '../../platform/crypto.js';
import { Unauthorized } from '../../platform/errors.js';
import { type ApiKeyService, PUBLISHABLE_PREFIX, planLimit, SECRET_PREFIX } from './service.js';

/** API keys as a credential kind of the platform's authenticator (docs/api.md#credentials). */
export function apiKeyCredentials(keys: Pick<ApiKeyService, 'resolve' | 'hash'>): CredentialResolver {
  return {
    accepts: (token) => token.startsWith(SECRET_PREFIX) || token.startsWith(PUBLISHABLE_PREFIX),
    async resolve(token, now): Promise<ResolvedCredential> {
      if (token.length > 200) throw new Unauthorized();
      const row = await keys.resolve(token);
      if (!row || !safeEqual(row.key_hash, keys.hash(token))) throw new Unauthorized();
      const expiresAt = row.expires_at ? new Date(row.expires_at).getTime() : null;
      // Said only to whoever holds the key itself (its hash matched above).
      if (row.revoked_at !== null) throw new Unauthorized('This API key was revoked');
      if (expiresAt !== null && expiresAt <= now) throw new Unauthorized('This API key has expired');
      if (!token.startsWith(row.key_type === 'secret' ? SECRET_PREFIX : PUBLISHABLE_PREFIX))
        throw new Unauthorized();
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
