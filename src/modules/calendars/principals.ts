/**
 * The calendars module's one view of principals: "is this a live host of that account?" and a
 * principal's time zone. It asks the principals service when that service offers the question, and
 * otherwise reads the `principals` table (read-only) in exactly these two functions, so the fallback
 * can be dropped in one place.
 */
import type { Db } from '../../db/store.js';

interface PrincipalsQuestions {
  isManagedHost?(accountId: string, principalId: string): Promise<boolean>;
}

export interface PrincipalDirectory {
  isManagedHost(accountId: string, principalId: string): Promise<boolean>;
  timeZoneOf(principalId: string): Promise<string>;
}

/** `services` gives the context's services lazily (they are built after this directory). */
export function principalDirectory(db: Db, services: () => object): PrincipalDirectory {
  const service = () => (services() as { principals?: PrincipalsQuestions }).principals;
  return {
    async isManagedHost(accountId, principalId) {
      const s = service();
      if (s?.isManagedHost) return s.isManagedHost(accountId, principalId);
      const row = await db
        .selectFrom('principals')
        .select('id')
        .where('id', '=', principalId)
        .where('account_id', '=', accountId)
        .where('kind', '=', 'host')
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      return row !== undefined;
    },
    async timeZoneOf(principalId) {
      const row = await db
        .selectFrom('principals')
        .select('timezone')
        .where('id', '=', principalId)
        .executeTakeFirst();
      return row?.timezone || 'UTC';
    },
  };
}
