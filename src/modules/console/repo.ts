/** The console's own table: one-time setup links, stored by the SHA-256 of their token. */
import type { Db } from '../../db/store.js';

export class ConsoleRepo {
  constructor(private readonly db: Db) {}

  async insertSetupToken(tokenHash: string, now: Date, expiresAt: Date): Promise<void> {
    await this.db
      .insertInto('console_setup_tokens')
      .values({ token_hash: tokenHash, created_at: now, expires_at: expiresAt, used_at: null })
      .execute();
  }

  /** Whether this token was issued and whether it is still usable. */
  async setupTokenState(tokenHash: string, now: Date): Promise<'valid' | 'used' | 'expired' | 'unknown'> {
    const row = await this.db
      .selectFrom('console_setup_tokens')
      .select(['expires_at', 'used_at'])
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    if (!row) return 'unknown';
    if (row.used_at !== null) return 'used';
    return row.expires_at.getTime() <= now.getTime() ? 'expired' : 'valid';
  }

  /**
   * Uses a live token: in one statement, when this token is issued, unused and unexpired, every
   * unused token is marked used, and the answer says whether this one was among them. So the first
   * use of any setup link consumes them all (there is one first account), an unknown token consumes
   * nothing, and of two concurrent uses only one sees its row still unused.
   */
  async consumeSetupTokens(tokenHash: string, now: Date): Promise<boolean> {
    const used = await this.db
      .updateTable('console_setup_tokens')
      .set({ used_at: now })
      .where('used_at', 'is', null)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('console_setup_tokens as live')
            .select('live.token_hash')
            .where('live.token_hash', '=', tokenHash)
            .where('live.used_at', 'is', null)
            .where('live.expires_at', '>', now),
        ),
      )
      .returning(['token_hash'])
      .execute();
    return used.some((r) => r.token_hash === tokenHash);
  }
}
