/**
 * What the pages need to know before they answer: whether the link or token is good, and which
 * domains may frame the page (the account's allowed domains, or an embed's publishable key's,
 * docs/design.md#pages). The token pages of other modules (`/p/`, `/w/`, `/invitations/`) are
 * told apart by asking those modules by the token: a page answers 404 or 410 itself; what it shows
 * comes from the public API. The proposals module is built after this one: it answers the `/p/` page
 * through the `proposalLinks` extension point (pages/api.ts).
 */
import { publicName } from '../../lib/mail-text.js';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { safeEqual } from '../../platform/crypto.js';
import { AppError } from '../../platform/errors.js';
import type { InvitationView, OfferView } from '../../web/booking/shared/views.js';
import type { Extensions, Platform } from '../module.js';
import type { PagesApi, PagesNeeds } from './api.js';
import { iso } from '../../lib/time.js';

/** A token page: live (with what the page shows first), used or expired (410), or unknown (404). */
export type TokenPage<T> = { kind: 'unknown' } | { kind: 'gone'; why: string } | { kind: 'live'; data: T };

export type ManagePage =
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'live'; slug: string | null; domains: string[]; accountId: string };

const isNotFound = (err: unknown) => err instanceof AppError && err.status === 404;

export class PageService implements PagesApi {
  private readonly clock: Clock;

  constructor(
    platform: Pick<Platform, 'clock'>,
    private readonly needs: PagesNeeds,
    private readonly extensions: Pick<Extensions, 'all'>,
  ) {
    this.clock = platform.clock;
  }

  nowMs(): number {
    return this.clock.nowMs();
  }

  /** The link's public view (what GET /v1/public/links/{slug} answers) and its account's domains; null: 404. */
  async bookingPage(caller: Caller, slug: string) {
    try {
      const link = await this.needs.bookings.publicLink(caller, slug);
      const [view, domains] = await Promise.all([
        this.needs.bookings.publicLinkView(caller, slug),
        this.needs.apiKeys.allowedDomains(link.accountId),
      ]);
      return { view, domains, accountId: link.accountId };
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
      const b = await this.needs.bookings.byToken(token);
      const [link, domains] = await Promise.all([
        b.booking_link_id ? this.needs.bookingLinks.get(b.account_id, b.booking_link_id) : null,
        this.needs.apiKeys.allowedDomains(b.account_id),
      ]);
      return { kind: 'live', slug: link?.active ? link.slug : null, domains, accountId: b.account_id };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    // The bookings API answers 404 for both; a page tells an expired link from a wrong one.
    const known = await this.needs.bookings.manageTokenIssued(token);
    return known ? { kind: 'expired' } : { kind: 'unknown' };
  }

  /**
   * The allowed domains of an embed's publishable key (`?key=`): live, publishable, of this account.
   * null: not such a key (the page refuses to be framed with it). An empty list: a key not locked.
   */
  async embedKeyDomains(key: string, accountId: string): Promise<string[] | null> {
    if (key.length > 200) return null;
    const row = await this.needs.apiKeys.resolve(key);
    if (!row || !safeEqual(row.key_hash, this.needs.apiKeys.hash(key))) return null;
    const now = this.clock.nowMs();
    if (row.key_type !== 'publishable' || row.account_id !== accountId || row.revoked_at !== null)
      return null;
    if (row.expires_at !== null && new Date(row.expires_at).getTime() <= now) return null;
    return row.allowed_domains;
  }

  /**
   * `/p/{token}`: a participant's link or an open poll's shared link, as the proposals module tells
   * them (proposal_participants.token_hash, proposals.open_token_hash); lapsed as its by-token read
   * says (expired, or still proposed past expires_at): 410. A used link stays live: it shows the answer.
   */
  async proposalPage(token: string): Promise<TokenPage<null>> {
    const [links] = this.extensions.all('proposalLinks');
    if (!links) throw new Error('no module contributes proposalLinks (the proposals module does)');
    const state = await links.state(token);
    if (state === 'unknown') return { kind: 'unknown' };
    return state === 'lapsed' ? { kind: 'gone', why: 'expired' } : { kind: 'live', data: null };
  }

  /** `/w/{token}`: a waitlist offer by its claim link (waitlist_entries.claim_token_hash). */
  async claimPage(token: string): Promise<TokenPage<OfferView> & { domains?: string[] }> {
    const e = await this.needs.bookings.waitlistClaim(token);
    if (!e) return { kind: 'unknown' };
    if (e.status === 'booked') return { kind: 'gone', why: 'claimed' };
    const now = this.clock.nowMs();
    if (
      e.status !== 'offered' ||
      !e.offerStart ||
      !e.offerEnd ||
      !e.offerExpiresAt ||
      new Date(e.offerExpiresAt).getTime() <= now ||
      new Date(e.offerStart).getTime() <= now
    ) {
      return { kind: 'gone', why: 'expired' };
    }
    const [link, domains] = await Promise.all([
      this.needs.bookingLinks.get(e.accountId, e.bookingLinkId),
      this.needs.apiKeys.allowedDomains(e.accountId),
    ]);
    return {
      kind: 'live',
      domains,
      data: {
        title: link?.title ?? 'Your booking',
        customer_name: e.customerName,
        start: iso(e.offerStart),
        end: iso(e.offerEnd),
        held_until: iso(e.offerExpiresAt),
        price_amount: link?.priceAmount ?? null,
        price_currency: link?.priceCurrency ?? null,
        questions: link?.questions ?? [],
      },
    };
  }

  /** `/invitations/{token}`: a network invitation by its link, as the network module tells it. */
  async invitationPage(token: string): Promise<TokenPage<InvitationView>> {
    const inv = await this.needs.network.invitationByToken(token);
    if (!inv) return { kind: 'unknown' };
    if (inv.status === 'accepted' || inv.status === 'declined') return { kind: 'gone', why: inv.status };
    if (inv.status !== 'pending' || new Date(inv.expiresAt).getTime() <= this.clock.nowMs()) {
      return { kind: 'gone', why: 'expired' };
    }
    const inviter = (await this.needs.principals.contacts([inv.inviterId])).get(inv.inviterId);
    return {
      kind: 'live',
      data: {
        inviter_name: publicName(inviter?.name, 'Someone'),
        invitee_name: inv.inviteeName,
        invitee_email: inv.inviteeEmail,
        relationship_type: inv.relationshipType,
        message: inv.message,
        expires_at: iso(inv.expiresAt),
      },
    };
  }
}
