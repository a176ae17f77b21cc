/**
 * What the pages need to know before they answer: whether the link or token is good, and which
 * domains may frame the page (the account's allowed domains, docs/architecture.md#pages).
 */
import type { Db } from '../../db/store.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { sha256Hex } from '../../platform/crypto.js';
import { AppError } from '../../platform/errors.js';
import type { ApiKeysApi } from '../api-keys/api.js';
import type { BookingLinksApi } from '../booking-links/api.js';
import type { BookingsApi } from '../bookings/api.js';

export interface PagesDeps {
  db: Db;
  clock: Clock;
  bookingLinks: Pick<BookingLinksApi, 'get'>;
  bookings: Pick<BookingsApi, 'publicLink' | 'publicLinkView' | 'byToken'>;
  apiKeys: Pick<ApiKeysApi, 'allowedDomains'>;
}

export type ManagePage =
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'live'; slug: string | null; domains: string[] };

const isNotFound = (err: unknown) => err instanceof AppError && err.status === 404;

export class PageService {
  constructor(private readonly deps: PagesDeps) {}

  nowMs(): number {
    return this.deps.clock.nowMs();
  }

  /** The link's public view (what GET /v1/public/links/{slug} answers) and its account's domains; null: 404. */
  async bookingPage(caller: Caller, slug: string) {
    try {
      const link = await this.deps.bookings.publicLink(caller, slug);
      const [view, domains] = await Promise.all([
        this.deps.bookings.publicLinkView(caller, slug),
        this.deps.apiKeys.allowedDomains(link.accountId),
      ]);
      return { view, domains };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /**
   * The booking behind a manage token: live (with its link's slug, for rescheduling), expired (the
   * bookings module stopped honouring it 30 days after the booking ended: 410), or unknown (404).
   */
  async managePage(token: string): Promise<ManagePage> {
    try {
      const b = await this.deps.bookings.byToken(token);
      const [link, domains] = await Promise.all([
        b.booking_link_id ? this.deps.bookingLinks.get(b.account_id, b.booking_link_id) : null,
        this.deps.apiKeys.allowedDomains(b.account_id),
      ]);
      return { kind: 'live', slug: link?.active ? link.slug : null, domains };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    // The bookings API answers 404 for both; a page tells an expired link from a wrong one. Only the
    // token's hash is compared, as the bookings module does (bookings/tokens.ts).
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return { kind: 'unknown' };
    const known = await this.deps.db
      .selectFrom('bookings')
      .select('id')
      .where('manage_token_hash', '=', sha256Hex(token))
      .executeTakeFirst();
    return known ? { kind: 'expired' } : { kind: 'unknown' };
  }
}
