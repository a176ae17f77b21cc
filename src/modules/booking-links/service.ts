/** Booking links (docs/api.md#booking-links): CRUD for owners, and look-ups by id and slug for other modules. */
import type { Config } from '../../config.js';
import { InvalidatedCache } from '../../db/invalidated-cache.js';
import type { Notifier } from '../../db/notify.js';
import { type Db, withTransaction } from '../../db/store.js';
import type { Actor } from '../../platform/actor.js';
import { Conflict, NotFound, Unprocessable } from '../../platform/errors.js';
import { isPrefixedId, isUuid, prefixedId } from '../../platform/ids.js';
import { decodeCursor, page } from '../../platform/pagination.js';
import { Problems } from '../../platform/validation.js';
import type { Platform } from '../module.js';
import type {
  Assignment,
  BookingLink,
  BookingLinksApi,
  BookingLinksNeeds,
  LinkQuestion,
  LinkRecurrence,
  LinkSeats,
} from './api.js';
import * as repo from './repo.js';
import { type CreateLinkInput, LINK_LIMITS, SLUG_PATTERN, type UpdateLinkInput } from './schemas.js';
import type { Static } from '@sinclair/typebox';
import type { ListQuery } from '../../platform/schemas.js';

/**
 * The settings the module reads: the base URL of link pages, and whether Stripe is set up for each
 * mode. `testSecretKey` is the payments module's STRIPE_TEST_SECRET_KEY (absent: not set up).
 */
type LinksConfig = Pick<Config, 'baseUrl'> & {
  stripe: Pick<Config['stripe'], 'secretKey'> & { testSecretKey?: string | null };
};

const SLUG = new RegExp(SLUG_PATTERN);
const isLinkId = (id: string): boolean => id.startsWith('link_') && isPrefixedId(id);
const notFound = () => new NotFound('No booking link with this id');

/** The API's view of a link (docs/api.md#booking-links); `deletedAt` only in the answer of a DELETE. */
export function presentLink(link: BookingLink, baseUrl: string, deletedAt: Date | null = null) {
  return {
    id: link.id,
    livemode: link.livemode,
    slug: link.slug,
    title: link.title,
    description: link.description,
    duration_minutes: link.defaultDuration,
    durations: [...link.durations],
    host_ids: [...link.hostIds],
    assignment: link.assignment,
    questions: link.questions.map((q) => ({
      id: q.id,
      label: q.label,
      type: q.type,
      required: q.required,
      ...(q.options ? { options: [...q.options] } : {}),
    })),
    price_amount: link.priceAmount,
    price_currency: link.priceCurrency,
    minimum_notice_minutes: link.minimumNoticeMinutes,
    max_days_ahead: link.maxDaysAhead,
    active: link.active,
    recurrence: link.recurrence && {
      frequencies: [...link.recurrence.frequencies],
      max_count: link.recurrence.max_count,
    },
    seats: link.seats && { capacity: link.seats.capacity, show_remaining: link.seats.showRemaining },
    url: `${baseUrl}/book/${link.slug}`,
    created_at: link.createdAt.toISOString(),
    updated_at: link.updatedAt.toISOString(),
    deleted_at: deletedAt ? deletedAt.toISOString() : null,
  };
}
export type PresentedLink = ReturnType<typeof presentLink>;

export class BookingLinkService implements BookingLinksApi {
  /** Live links by slug (null: no live link has it), for the public booking surface. */
  private readonly bySlugCache: InvalidatedCache<BookingLink | null>;

  private readonly db: Db;
  private readonly config: LinksConfig;

  constructor(
    platform: Pick<Platform, 'db' | 'clock' | 'config'>,
    private readonly needs: BookingLinksNeeds,
  ) {
    this.db = platform.db;
    this.config = platform.config;
    this.bySlugCache = new InvalidatedCache(platform.clock, { channel: repo.BOOKING_LINKS_CHANNEL });
  }

  /** Starts caching links by slug, invalidated through NOTIFY (migration 0007's trigger). */
  listen(notifier: Notifier): Promise<void> {
    return this.bySlugCache.listen(notifier);
  }

  // ---- the API other modules use ---------------------------------------------------------------------

  async get(accountId: string, id: string, livemode?: boolean): Promise<BookingLink | null> {
    if (!isLinkId(id) || !isUuid(accountId)) return null;
    const row = await repo.findLink(this.db, accountId, id, livemode ?? null);
    return row ? toLink(row) : null;
  }

  async bySlug(slug: string): Promise<BookingLink | null> {
    if (!SLUG.test(slug)) return null;
    const hit = this.bySlugCache.get(slug);
    if (hit !== undefined) return hit;
    const generation = this.bySlugCache.generation;
    const row = await repo.findBySlug(this.db, slug);
    const link = row ? freeze(toLink(row)) : null;
    this.bySlugCache.store(generation, [[slug, link]]);
    return link;
  }

  present(link: BookingLink): PresentedLink {
    return presentLink(link, this.config.baseUrl);
  }

  // ---- owners' use cases -----------------------------------------------------------------------------

  /** A link of the actor's mode (a test link takes test hosts only), made at its clock's time. */
  async create(actor: Actor, input: CreateLinkInput): Promise<PresentedLink> {
    const problems = new Problems();
    const title = checkTitle(input.title, problems);
    const durations = resolveDurations(input, null, problems);
    const hostIds =
      input.host_ids === undefined
        ? [actor.principalId.toLowerCase()]
        : await this.checkHosts(actor, input.host_ids, problems);
    const assignment = input.assignment ?? 'single';
    checkAssignment(assignment, hostIds, problems);
    const questions = checkQuestions(input.questions ?? [], problems);
    const price = checkPrice(input.price_amount ?? null, input.price_currency ?? null, problems);
    const recurrence = input.recurrence ? checkRecurrence(input.recurrence, problems) : null;
    const seats = input.seats ? toSeats(input.seats) : null;
    if (durations) {
      checkSeriesAndSeats(
        { priceAmount: price.amount, recurrence, seats, assignment, durations: durations.durations },
        problems,
      );
    }
    problems.throwIfAny();
    if (price.amount !== null) this.mayBePriced(actor.livemode);

    const now = actor.clock.now();
    try {
      const row = await repo.insertLink(this.db, {
        id: prefixedId('link', now.getTime()),
        account_id: actor.accountId,
        livemode: actor.livemode,
        slug: input.slug,
        title,
        description: input.description ?? '',
        durations: durations!.durations,
        default_duration: durations!.defaultDuration,
        host_ids: hostIds!,
        assignment,
        questions,
        price_amount: price.amount,
        price_currency: price.currency,
        minimum_notice_minutes: input.minimum_notice_minutes ?? null,
        max_days_ahead: input.max_days_ahead ?? null,
        active: input.active ?? true,
        recurrence,
        seats,
        created_at: now,
      });
      return this.present(toLink(row));
    } catch (err) {
      throw slugTaken(err) ?? err;
    } finally {
      this.bySlugCache.invalidate(input.slug);
    }
  }

  /** The account's links of the actor's mode. */
  async list(actor: Actor, opts: Static<typeof ListQuery>) {
    const pos = decodeCursor(opts.cursor, { prefix: 'link' });
    const rows = await repo.listLinks(this.db, actor.accountId, actor.livemode, pos, opts.limit);
    const { items, pagination } = page(rows, opts.limit);
    return { booking_links: items.map((r) => this.present(toLink(r))), pagination };
  }

  /** A link of the account in the actor's mode; 404 otherwise (another account's or mode's, deleted, unknown). */
  async read(actor: Actor, id: string): Promise<PresentedLink> {
    const link = await this.get(actor.accountId, id, actor.livemode);
    if (!link) throw notFound();
    return this.present(link);
  }

  /**
   * Changes the fields given; the result is validated as a whole (durations, hosts and assignment,
   * price and currency, recurrence and seats) against the row locked in the same transaction.
   */
  async update(actor: Actor, id: string, patch: UpdateLinkInput): Promise<PresentedLink> {
    if (!isLinkId(id)) throw notFound();
    // A link becomes priced only where payments are set up (a free one, or a price removed, always passes).
    if (typeof patch.price_amount === 'number') this.mayBePriced(actor.livemode);
    // Hosts are checked before the row is locked: the check may read principals on another connection.
    const problems = new Problems();
    const hostIds =
      patch.host_ids === undefined ? undefined : await this.checkHosts(actor, patch.host_ids, problems);
    const touched: string[] = [];
    const key = { accountId: actor.accountId, id, livemode: actor.livemode };
    try {
      const row = await withTransaction(this.db, async (trx) => {
        const current = await repo.lockLink(trx, key);
        if (!current) throw notFound();
        touched.push(current.slug);
        const change = checkPatch(toLink(current), patch, hostIds, problems);
        if (change.slug !== undefined) touched.push(change.slug);
        return repo.updateLink(trx, key, change, actor.clock.now());
      });
      if (!row) throw notFound();
      return this.present(toLink(row));
    } catch (err) {
      throw slugTaken(err) ?? err;
    } finally {
      for (const slug of touched) this.bySlugCache.invalidate(slug);
    }
  }

  /** Soft delete: the link leaves lists, look-ups and the public surface; its slug is free again. */
  async remove(actor: Actor, id: string): Promise<PresentedLink> {
    if (!isLinkId(id)) throw notFound();
    const key = { accountId: actor.accountId, id, livemode: actor.livemode };
    const row = await repo.softDeleteLink(this.db, key, actor.clock.now());
    if (!row) throw notFound();
    this.bySlugCache.invalidate(row.slug);
    return presentLink(toLink(row), this.config.baseUrl, row.deleted_at);
  }

  // ---- validation ------------------------------------------------------------------------------------

  /**
   * A priced link is refused (422 `payments_not_configured`) on a server without Stripe for the
   * link's mode (STRIPE_SECRET_KEY for live, STRIPE_TEST_SECRET_KEY for test: the settings the
   * payments module reads): its bookings could never be paid. Test mode never falls back to the live key.
   */
  private mayBePriced(livemode: boolean): void {
    if (!livemode) {
      if (this.config.stripe.testSecretKey) return;
      throw new Unprocessable(
        'Payments are not configured for test mode on this server (no STRIPE_TEST_SECRET_KEY), so a test booking link cannot be priced; leave price_amount out (or null) for a free link',
        { code: 'payments_not_configured' },
      );
    }
    if (this.config.stripe.secretKey) return;
    throw new Unprocessable(
      'Payments are not configured on this server (no STRIPE_SECRET_KEY), so a booking link cannot be priced; leave price_amount out (or null) for a free link',
      { code: 'payments_not_configured' },
    );
  }

  /**
   * Host ids, lower-cased: distinct UUIDs, each the caller itself or a live host of its account in
   * the caller's mode (the principals module decides: a test link takes test hosts, a live link live
   * ones). Null, with a `host_ids` problem, otherwise.
   */
  private async checkHosts(
    actor: Actor,
    raw: readonly string[],
    problems: Problems,
  ): Promise<string[] | null> {
    const ids = raw.map((id) => id.toLowerCase());
    const malformed = raw.find((id) => !isUuid(id));
    if (malformed !== undefined) {
      problems.add(
        'host_ids',
        `must hold principal UUIDs (${JSON.stringify(malformed.slice(0, 64))} is not one)`,
      );
      return null;
    }
    if (new Set(ids).size !== ids.length) {
      problems.add('host_ids', 'must not name a principal twice');
      return null;
    }
    const allowed = await Promise.all(ids.map((id) => this.needs.principals.access.mayActFor(actor, id)));
    const refused = ids.find((_, i) => !allowed[i]);
    if (refused !== undefined) {
      const host = actor.livemode ? 'a live host of its account' : 'a test-mode host of its account';
      problems.add('host_ids', `${refused} is neither the caller nor ${host}`);
      return null;
    }
    return ids;
  }
}

/**
 * The change a PATCH makes to `current`, validated as a whole; `hostIds` are the patch's host_ids as
 * checkHosts answered (undefined: not in the patch; null: refused, already in `problems`).
 */
function checkPatch(
  current: BookingLink,
  patch: UpdateLinkInput,
  hostIds: string[] | null | undefined,
  problems: Problems,
): repo.LinkChange {
  const change: repo.LinkChange = {};
  if (patch.slug !== undefined && patch.slug !== current.slug) change.slug = patch.slug;
  if (patch.title !== undefined) change.title = checkTitle(patch.title, problems);
  if (patch.description !== undefined) change.description = patch.description;

  const durations = resolveDurations(patch, current, problems);
  if (durations) {
    change.durations = durations.durations;
    change.default_duration = durations.defaultDuration;
  }

  if (hostIds) change.host_ids = hostIds;
  const assignment = patch.assignment ?? current.assignment;
  if (patch.assignment !== undefined) change.assignment = patch.assignment;
  if (hostIds !== undefined || patch.assignment !== undefined) {
    checkAssignment(assignment, hostIds === undefined ? current.hostIds : hostIds, problems);
  }

  if (patch.questions !== undefined) change.questions = checkQuestions(patch.questions, problems);

  if (patch.price_amount !== undefined || patch.price_currency !== undefined) {
    const amount = patch.price_amount !== undefined ? patch.price_amount : current.priceAmount;
    // Making a link free clears its currency unless the patch names one.
    const currency =
      patch.price_currency !== undefined
        ? patch.price_currency
        : patch.price_amount === null
          ? null
          : current.priceCurrency;
    const price = checkPrice(amount, currency, problems);
    change.price_amount = price.amount;
    change.price_currency = price.currency;
  }
  if (patch.minimum_notice_minutes !== undefined)
    change.minimum_notice_minutes = patch.minimum_notice_minutes;
  if (patch.max_days_ahead !== undefined) change.max_days_ahead = patch.max_days_ahead;
  if (patch.active !== undefined) change.active = patch.active;

  if (patch.recurrence !== undefined) {
    change.recurrence = patch.recurrence && checkRecurrence(patch.recurrence, problems);
  }
  if (patch.seats !== undefined) change.seats = patch.seats && toSeats(patch.seats);
  // The combination the link would have after the change: the series and seats rules hold for it.
  checkSeriesAndSeats(
    {
      priceAmount: change.price_amount !== undefined ? change.price_amount : current.priceAmount,
      recurrence: change.recurrence !== undefined ? change.recurrence : current.recurrence,
      seats: change.seats !== undefined ? change.seats : current.seats,
      assignment,
      durations: change.durations ?? current.durations,
    },
    problems,
  );
  problems.throwIfAny();
  return change;
}

function checkTitle(raw: string, problems: Problems): string {
  const title = raw.trim();
  if (!title) problems.add('title', 'must not be empty');
  return title;
}

/**
 * The default duration and the offered durations from `duration_minutes` and/or `durations`
 * (docs/api.md#booking-links). Creating (no `current`): only `duration_minutes` offers just it, only
 * `durations` defaults to its first value, neither is 30 minutes. Patching: only `durations` keeps the
 * default if still offered (else its first value); only `duration_minutes` picks one of the offered
 * durations, or replaces a single one. Null when nothing changes or the input is refused.
 */
function resolveDurations(
  input: { duration_minutes?: number; durations?: number[] },
  current: Pick<BookingLink, 'defaultDuration' | 'durations'> | null,
  problems: Problems,
): { defaultDuration: number; durations: number[] } | null {
  const { duration_minutes: wanted, durations: given } = input;
  if (given !== undefined) {
    const durations = [...new Set(given)].sort((a, b) => a - b);
    if (durations.length > LINK_LIMITS.maxDurations) {
      problems.add('durations', `must hold at most ${LINK_LIMITS.maxDurations} distinct values`);
      return null;
    }
    if (wanted !== undefined && !durations.includes(wanted)) {
      problems.add('duration_minutes', 'must be one of durations');
      return null;
    }
    const keep = current !== null && durations.includes(current.defaultDuration);
    return { defaultDuration: wanted ?? (keep ? current.defaultDuration : given[0]!), durations };
  }
  if (wanted !== undefined) {
    if (current === null || (current.durations.length === 1 && !current.durations.includes(wanted))) {
      return { defaultDuration: wanted, durations: [wanted] };
    }
    if (!current.durations.includes(wanted)) {
      problems.add(
        'duration_minutes',
        `must be one of durations (${current.durations.join(', ')}); send durations to change them`,
      );
      return null;
    }
    return { defaultDuration: wanted, durations: [...current.durations] };
  }
  if (current !== null) return null;
  return { defaultDuration: LINK_LIMITS.defaultDuration, durations: [LINK_LIMITS.defaultDuration] };
}

function checkAssignment(
  assignment: Assignment,
  hostIds: readonly string[] | null,
  problems: Problems,
): void {
  if (hostIds === null) return; // host_ids already refused
  if (assignment === 'single' && hostIds.length !== 1) {
    problems.add('assignment', 'single takes exactly one host; use round_robin or collective for several');
  }
}

function checkQuestions(raw: NonNullable<CreateLinkInput['questions']>, problems: Problems): LinkQuestion[] {
  const seen = new Set<string>();
  return raw.map((q, i) => {
    const at = `questions.${i}`;
    if (seen.has(q.id)) problems.add(`${at}.id`, 'is used by another question of this link');
    seen.add(q.id);
    const label = q.label.trim();
    if (!label) problems.add(`${at}.label`, 'must not be empty');
    const question: LinkQuestion = { id: q.id, label, type: q.type, required: q.required ?? false };
    if (q.type === 'select') {
      if (q.options === undefined) problems.add(`${at}.options`, 'is required for questions of type select');
      else {
        question.options = q.options.map((o, j) => {
          const option = o.trim();
          if (!option) problems.add(`${at}.options.${j}`, 'must not be empty');
          return option;
        });
      }
    } else if (q.options !== undefined) {
      problems.add(`${at}.options`, 'is only allowed for questions of type select');
    }
    return question;
  });
}

function checkPrice(
  amount: number | null,
  currency: string | null,
  problems: Problems,
): { amount: number | null; currency: string | null } {
  if (amount !== null && currency === null)
    problems.add('price_currency', 'is required when price_amount is set');
  if (amount === null && currency !== null) {
    problems.add('price_currency', 'must be null when price_amount is null (a free link)');
  }
  return { amount, currency };
}

/** A link's recurrence as given, with distinct frequencies (a `recurrence.frequencies` problem otherwise). */
function checkRecurrence(raw: LinkRecurrence, problems: Problems): LinkRecurrence {
  const frequencies = [...raw.frequencies];
  if (new Set(frequencies).size !== frequencies.length) {
    problems.add('recurrence.frequencies', 'must not name a frequency twice');
  }
  return { frequencies, max_count: raw.max_count };
}

function toSeats(raw: { capacity: number; show_remaining?: boolean }): LinkSeats {
  return { capacity: raw.capacity, showRemaining: raw.show_remaining ?? false };
}

/**
 * The rules between recurrence, seats and the rest of a link (docs/api.md#booking-links), checked on
 * what the link is (created) or would be (patched): a series is never priced, a seated link has no
 * series (this round), never assigns round robin, and offers one duration. A problem names
 * `recurrence` or `seats`, whichever field the rule is about, whatever the request changed.
 */
function checkSeriesAndSeats(
  link: Pick<BookingLink, 'priceAmount' | 'recurrence' | 'seats' | 'assignment' | 'durations'>,
  problems: Problems,
): void {
  if (link.recurrence && link.priceAmount !== null) {
    problems.add(
      'recurrence',
      'a priced link cannot allow recurrence; set recurrence to null or make the link free (price_amount null)',
    );
  }
  if (!link.seats) return;
  if (link.recurrence) {
    problems.add(
      'seats',
      'a seated link cannot allow recurrence; set recurrence to null, or seats to null for a series',
    );
  } else if (link.assignment === 'round_robin') {
    problems.add('seats', 'a seated link cannot assign round_robin; use single or collective');
  } else if (link.durations.length > 1) {
    problems.add(
      'seats',
      `a seated link offers one duration (this link would offer ${link.durations.join(', ')}); send durations with one value`,
    );
  }
}

/** The 409 for a slug another live link holds (the unique index decided), or null for other errors. */
function slugTaken(err: unknown): Conflict | null {
  const e = err as { code?: string; constraint?: string };
  if (e?.code !== '23505' || e.constraint !== repo.SLUG_INDEX) return null;
  return new Conflict('Another booking link already uses this slug', { code: 'slug_taken' });
}

function toLink(row: repo.LinkRow): BookingLink {
  return {
    id: row.id,
    accountId: row.account_id,
    livemode: row.livemode,
    slug: row.slug,
    title: row.title,
    description: row.description,
    defaultDuration: row.default_duration,
    durations: row.durations,
    hostIds: row.host_ids,
    assignment: row.assignment,
    questions: row.questions,
    priceAmount: row.price_amount,
    priceCurrency: row.price_currency,
    minimumNoticeMinutes: row.minimum_notice_minutes,
    maxDaysAhead: row.max_days_ahead,
    active: row.active,
    recurrence: row.recurrence ?? null,
    seats:
      row.seat_capacity === null
        ? null
        : { capacity: row.seat_capacity, showRemaining: row.seats_show_remaining },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Freezes a link shared through the cache, arrays and questions included. */
function freeze(link: BookingLink): BookingLink {
  Object.freeze(link.durations);
  Object.freeze(link.hostIds);
  for (const q of link.questions) {
    if (q.options) Object.freeze(q.options);
    Object.freeze(q);
  }
  Object.freeze(link.questions);
  if (link.recurrence) {
    Object.freeze(link.recurrence.frequencies);
    Object.freeze(link.recurrence);
  }
  if (link.seats) Object.freeze(link.seats);
  return Object.freeze(link);
}
