import { type SelectQueryBuilder, sql } from 'kysely';
import { ValidationFailed } from './errors.js';
import { isPrefixedId, isUuid } from './ids.js';

/** Opaque keyset cursor over (created_at, id), newest first. */
export interface CursorPosition {
  at: Date;
  id: string;
}

export function encodeCursor(pos: { at: Date | string; id: string }): string {
  return Buffer.from(`${new Date(pos.at).toISOString()}|${pos.id}`, 'utf8').toString('base64url');
}

const CURSOR_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The ids of a list: UUIDs (principals, API keys) or prefixed ids with their prefix (`wh`, `whd`). */
export type CursorIds = 'uuid' | { prefix: string };

/**
 * The position a cursor names. Only a cursor this list could have issued is accepted — a UTC timestamp
 * of years 0000–9999 in `toISOString` form, `|`, an id of the list's kind (`ids`), spelled in
 * canonical base64url — so a forged or damaged one, or one from another list, is a 400 with
 * `errors.cursor`, never a query with a value the database refuses.
 */
export function decodeCursor(cursor: string | undefined, ids: CursorIds): CursorPosition | null {
  if (cursor === undefined || cursor === '') return null;
  const invalid = () => new ValidationFailed({ cursor: 'is not a cursor returned by this API' });
  const raw = Buffer.from(cursor, 'base64url').toString('utf8');
  const i = raw.indexOf('|');
  if (i <= 0) throw invalid();
  const atText = raw.slice(0, i);
  const id = raw.slice(i + 1);
  const at = new Date(atText);
  if (!CURSOR_AT.test(atText) || Number.isNaN(at.getTime()) || at.toISOString() !== atText) throw invalid();
  const idOk = ids === 'uuid' ? isUuid(id) : isPrefixedId(id) && id.startsWith(`${ids.prefix}_`);
  if (!idOk) throw invalid();
  if (Buffer.from(raw, 'utf8').toString('base64url') !== cursor) throw invalid();
  return { at, id };
}

/**
 * The keyset page query: `q` limited to the rows after `pos` in newest-first order of (`created_at`,
 * `id`) of `table` (its name or alias; needed when `q` joins), in that order, `limit + 1` of them
 * (`page` splits the extra one off).
 */
export function newestFirstAfter<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  pos: CursorPosition | null,
  limit: number,
  table?: string,
): SelectQueryBuilder<DB, TB, O> {
  const createdAt = sql.ref(table ? `${table}.created_at` : 'created_at');
  const id = sql.ref(table ? `${table}.id` : 'id');
  const after = pos ? q.where(sql<boolean>`(${createdAt}, ${id}) < (${pos.at}, ${pos.id})`) : q;
  return after
    .orderBy(createdAt, 'desc')
    .orderBy(id, 'desc')
    .limit(limit + 1);
}

/** Splits one extra fetched row off into `has_more`; the cursor is the last row's `created_at` and id. */
export function page<T extends { created_at: Date | string; id: string }>(
  rows: T[],
  limit: number,
): { items: T[]; pagination: { next_cursor: string | null; has_more: boolean } } {
  return pageBy(rows, limit, (r) => r.created_at);
}

/** `page` for lists ordered by another instant (`at` of each row, then id): a start time, say. */
export function pageBy<T extends { id: string }>(
  rows: T[],
  limit: number,
  at: (row: T) => Date | string,
): { items: T[]; pagination: { next_cursor: string | null; has_more: boolean } } {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return {
    items,
    pagination: {
      next_cursor: hasMore && last ? encodeCursor({ at: at(last), id: last.id }) : null,
      has_more: hasMore,
    },
  };
}
