import { type SelectQueryBuilder, sql } from 'kysely';
import { ValidationFailed } from './errors.js';

/** Opaque keyset cursor over (created_at, id), newest first. */
export interface CursorPosition {
  at: Date;
  id: string;
}

export function encodeCursor(pos: { at: Date | string; id: string }): string {
  return Buffer.from(`${new Date(pos.at).toISOString()}|${pos.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): CursorPosition | null {
  if (cursor === undefined || cursor === '') return null;
  const raw = Buffer.from(cursor, 'base64url').toString('utf8');
  const i = raw.indexOf('|');
  const at = new Date(raw.slice(0, i));
  if (i <= 0 || Number.isNaN(at.getTime()) || raw.length - i < 2) {
    throw new ValidationFailed({ cursor: 'is not a cursor returned by this API' });
  }
  return { at, id: raw.slice(i + 1) };
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

/** Splits one extra fetched row off into `has_more`. */
export function page<T extends { created_at: Date | string; id: string }>(
  rows: T[],
  limit: number,
): { items: T[]; pagination: { next_cursor: string | null; has_more: boolean } } {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return {
    items,
    pagination: {
      next_cursor: hasMore && last ? encodeCursor({ at: last.created_at, id: last.id }) : null,
      has_more: hasMore,
    },
  };
}
