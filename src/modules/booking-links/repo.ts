/** SQL of the bookingLinks module (migrations 0007_booking_links, 0026_series_seats). */
import type { Selectable, Updateable } from 'kysely';
import type { Db, Tx } from '../../db/store.js';
import { type CursorPosition, newestFirstAfter } from '../../platform/pagination.js';
import type { LinkQuestion, LinkRecurrence, LinkSeats } from './api.js';
import type { BookingLinksTable } from './tables.js';
import './tables.js';

type Queryable = Db | Tx;

/** NOTIFY channel of link changes (payload: a slug); sent by the trigger of migration 0007. */
export const BOOKING_LINKS_CHANNEL = 'kairos_booking_links';

/** The partial unique index that keeps live slugs unique. */
export const SLUG_INDEX = 'booking_links_slug_live_idx';

export type LinkRow = Selectable<BookingLinksTable>;

export interface NewLinkRow {
  id: string;
  account_id: string;
  livemode: boolean;
  slug: string;
  title: string;
  description: string;
  durations: number[];
  default_duration: number;
  host_ids: string[];
  assignment: BookingLinksTable['assignment'];
  questions: LinkQuestion[];
  price_amount: number | null;
  price_currency: string | null;
  minimum_notice_minutes: number | null;
  max_days_ahead: number | null;
  active: boolean;
  /** Stored as jsonb, or SQL NULL (never a jsonb `null`). */
  recurrence: LinkRecurrence | null;
  /** Stored as `seat_capacity` and `seats_show_remaining` (null: NULL and false). */
  seats: LinkSeats | null;
  created_at: Date;
}

export type LinkChange = Partial<Omit<NewLinkRow, 'id' | 'account_id' | 'livemode' | 'created_at'>>;

/** The account's live link `id` of one mode: whose row an owner's change may touch. */
export interface LinkKey {
  accountId: string;
  id: string;
  livemode: boolean;
}

/** The `recurrence` column: jsonb text, or SQL NULL for none (a jsonb `null` would be a value). */
const recurrenceColumn = (recurrence: LinkRecurrence | null): string | null =>
  recurrence === null ? null : JSON.stringify(recurrence);

/** The seat columns: none is a NULL capacity, shown remaining false. */
const seatColumns = (seats: LinkSeats | null) => ({
  seat_capacity: seats?.capacity ?? null,
  seats_show_remaining: seats?.showRemaining ?? false,
});

export async function insertLink(db: Queryable, row: NewLinkRow): Promise<LinkRow> {
  const { recurrence, seats, ...rest } = row;
  return db
    .insertInto('booking_links')
    .values({
      ...rest,
      recurrence: recurrenceColumn(recurrence),
      ...seatColumns(seats),
      questions: JSON.stringify(row.questions),
      updated_at: row.created_at,
      deleted_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** One live link of the account, of mode `livemode` (null: of either mode), or undefined. */
export async function findLink(
  db: Queryable,
  accountId: string,
  id: string,
  livemode: boolean | null,
): Promise<LinkRow | undefined> {
  let q = db
    .selectFrom('booking_links')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null);
  if (livemode !== null) q = q.where('livemode', '=', livemode);
  return q.executeTakeFirst();
}

/** The live link with this slug, or undefined. */
export async function findBySlug(db: Queryable, slug: string): Promise<LinkRow | undefined> {
  return db
    .selectFrom('booking_links')
    .selectAll()
    .where('slug', '=', slug)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Live links of the account in one mode, newest first, `limit + 1` rows from after `pos`. */
export async function listLinks(
  db: Queryable,
  accountId: string,
  livemode: boolean,
  pos: CursorPosition | null,
  limit: number,
): Promise<LinkRow[]> {
  const q = db
    .selectFrom('booking_links')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('livemode', '=', livemode)
    .where('deleted_at', 'is', null);
  return newestFirstAfter(q, pos, limit).execute();
}

/** Applies `change` to the account's live link `key.id` of the mode; its row after the change, or undefined if none. */
export async function updateLink(
  db: Queryable,
  key: LinkKey,
  change: LinkChange,
  now: Date,
): Promise<LinkRow | undefined> {
  const { questions, recurrence, seats, ...rest } = change;
  const values: Updateable<BookingLinksTable> = {
    ...rest,
    ...(seats !== undefined ? seatColumns(seats) : {}),
    updated_at: now,
  };
  if (questions !== undefined) values.questions = JSON.stringify(questions);
  if (recurrence !== undefined) values.recurrence = recurrenceColumn(recurrence);
  return changeLive(db, key, values);
}

/** Soft delete: the row stays (bookings refer to it), inactive, and its slug is free again. */
export async function softDeleteLink(db: Queryable, key: LinkKey, now: Date): Promise<LinkRow | undefined> {
  return changeLive(db, key, { active: false, deleted_at: now, updated_at: now });
}

async function changeLive(
  db: Queryable,
  key: LinkKey,
  values: Updateable<BookingLinksTable>,
): Promise<LinkRow | undefined> {
  return db
    .updateTable('booking_links')
    .set(values)
    .where('id', '=', key.id)
    .where('account_id', '=', key.accountId)
    .where('livemode', '=', key.livemode)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** The live link of the key locked for an update in `trx` (so a PATCH merges with what it read). */
export async function lockLink(trx: Tx, key: LinkKey): Promise<LinkRow | undefined> {
  return trx
    .selectFrom('booking_links')
    .selectAll()
    .where('id', '=', key.id)
    .where('account_id', '=', key.accountId)
    .where('livemode', '=', key.livemode)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}
