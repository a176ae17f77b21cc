/**
 * A cursor-paginated list, as every console page shows one: its loading (a page's answer that comes
 * after the user moved on is dropped), its error, its empty state, its rows and its pager.
 */
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { failure } from './api.js';
import { Empty, FormError, Pager, useCursor } from './ui.js';

export interface PageOf<T> {
  items: T[];
  pagination: { has_more: boolean; next_cursor: string | null };
}

export interface Paged<T> {
  items: T[] | null;
  error: string | null;
  hasPrevious: boolean;
  hasNext: boolean;
  previous: () => void;
  next: () => void;
  /** Back to the first page (after a change of filter). */
  reset: () => void;
  /** Loads this page again (after a change to one of its items). */
  reload: () => void;
}

/** Loads the page at the cursor with `load`, again whenever one of `deps` changes or on `reload()`. */
export function usePaged<T>(
  load: (cursor: string | undefined) => Promise<PageOf<T>>,
  deps: unknown[] = [],
): Paged<T> {
  const cursor = useCursor();
  const [items, setItems] = useState<T[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load(cursor.cursor)
      .then((r) => {
        if (!live) return;
        setItems(r.items);
        setNextCursor(r.pagination.has_more ? r.pagination.next_cursor : null);
      })
      .catch((err) => live && setError(failure(err).message));
    return () => {
      live = false;
    };
  }, [cursor.cursor, version, ...deps]);
  return {
    items,
    error,
    hasPrevious: cursor.hasPrevious,
    hasNext: nextCursor !== null,
    previous: cursor.previous,
    next: () => nextCursor && cursor.next(nextCursor),
    reset: cursor.reset,
    reload: () => setVersion((v) => v + 1),
  };
}

/** A paged list's error, loading note, empty state (`empty`), rows and pager. */
export function PagedRows<T>(p: {
  list: Paged<T>;
  loading: string;
  empty: ComponentChildren;
  row: (item: T) => VNode;
}): VNode {
  const l = p.list;
  return html`<${FormError} message=${l.error} />
    ${l.items === null && !l.error ? html`<p role="status">${p.loading}</p>` : null}
    ${l.items?.length === 0 ? html`<${Empty}>${p.empty}<//>` : null}
    <ul class="rows">${(l.items ?? []).map(p.row)}</ul>
    <${Pager} hasPrevious=${l.hasPrevious} hasNext=${l.hasNext} onPrevious=${l.previous} onNext=${l.next} />`;
}

/**
 * A page's main list: a panel with its heading around PagedRows. A page lists its items first; its
 * form to make one comes after the list (`CreatePanel`), and `create` names the link to it.
 */
export function ListPanel<T>(p: {
  title: string;
  list: Paged<T>;
  loading: string;
  empty: ComponentChildren;
  row: (item: T) => VNode;
  create?: string;
}): VNode {
  return html`<section class="panel" aria-labelledby="list-title">
    <div class="panel-head">
      <h2 id="list-title">${p.title}</h2>
      ${p.create ? html`<a class="button secondary" href="#create">${p.create}</a>` : null}
    </div>
    <${PagedRows} list=${p.list} loading=${p.loading} empty=${p.empty} row=${p.row} />
  </section>`;
}

/** The form to make a page's item, after its list (`#create`, where the list's link leads). */
export function CreatePanel(p: { title: string; children: ComponentChildren }): VNode {
  return html`<section class="panel" id="create" aria-labelledby="create-title" tabindex="-1">
    <h2 id="create-title">${p.title}</h2>
    ${p.children}
  </section>`;
}
