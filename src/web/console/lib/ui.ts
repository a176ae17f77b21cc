/** The console's building blocks: the page shell, form fields with their errors, the shown-once secret. */
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { data, signOut } from './api.js';

const NAV: readonly (readonly [string, string])[] = [
  ['/console', 'Overview'],
  ['/console/keys', 'API keys'],
  ['/console/webhooks', 'Webhooks'],
  ['/console/hosts', 'Hosts'],
  ['/console/links', 'Booking links'],
  ['/console/bookings', 'Bookings'],
  ['/console/polls', 'Polls'],
  ['/console/network', 'Network'],
];

/** The page around a signed-in page: skip link, header with the account and sign-out, navigation. */
export function Shell(p: { title: string; children: ComponentChildren }): VNode {
  const here = location.pathname.replace(/\/$/, '') || '/console';
  const nav = useRef<HTMLUListElement>(null);
  // On a phone the navigation is one scrolling row: this page's link is brought into it.
  useEffect(() => {
    const ul = nav.current;
    const a = ul?.querySelector<HTMLElement>('[aria-current="page"]');
    if (ul && a && ul.scrollWidth > ul.clientWidth) {
      ul.scrollLeft = a.offsetLeft - ul.offsetLeft - (ul.clientWidth - a.offsetWidth) / 2;
    }
  }, []);
  return html`<a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <p class="brand">Kairos console</p>
      <p class="who" title=${`${data.user?.account_name} · ${data.user?.email}`}>${data.user?.account_name} · ${data.user?.email}</p>
      <button type="button" class="link" onClick=${() => void signOut()}>Sign out</button>
    </header>
    <nav class="nav" aria-label="Console">
      <ul ref=${nav}>
        ${NAV.map(
          ([href, label]) =>
            html`<li><a href=${href} aria-current=${href === here ? 'page' : undefined}>${label}</a></li>`,
        )}
      </ul>
    </nav>
    <main id="main" tabindex="-1">
      <h1>${p.title}</h1>
      ${p.children}
    </main>`;
}

/** A labelled input with its hint and the API's error for it beside it. */
export function Field(p: {
  id: string;
  label: string;
  error?: string | undefined;
  hint?: string;
  children: (attrs: Record<string, string | boolean | undefined>) => VNode;
}): VNode {
  const described = [p.hint ? `${p.id}-hint` : '', p.error ? `${p.id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class=${`field${p.error ? ' invalid' : ''}`}>
    <label for=${p.id}>${p.label}</label>
    ${p.hint ? html`<p class="hint" id=${`${p.id}-hint`}>${p.hint}</p>` : null}
    ${p.children({ id: p.id, 'aria-invalid': p.error ? 'true' : undefined, 'aria-describedby': described || undefined })}
    ${p.error ? html`<p class="error" id=${`${p.id}-error`}>${p.error}</p>` : null}
  </div>`;
}

/** A form's error that belongs to no one field. */
export function FormError(p: { message: string | null }): VNode | null {
  if (!p.message) return null;
  return html`<p class="form-error" role="alert">${p.message}</p>`;
}

/**
 * Copying `value` to the clipboard: what happened, to say in a status line, and the copy action.
 * Where the clipboard is refused, the field `ref` points at is selected for the user to copy.
 */
export function useCopy(
  value: string,
  ref: { current: HTMLInputElement | HTMLTextAreaElement | null },
): [string, () => Promise<void>] {
  const [copied, setCopied] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied to the clipboard.');
    } catch {
      ref.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return [copied, copy];
}

/** A secret shown this once: a read-only field, a copy button and the warning that it will not come back. */
export function ShownOnce(p: { label: string; value: string; id: string }): VNode {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => ref.current?.focus(), []);
  const [copied, copy] = useCopy(p.value, ref);
  return html`<div class="once" role="group" aria-labelledby=${`${p.id}-label`}>
    <p id=${`${p.id}-label`} class="once-title">${p.label}</p>
    <p class="warn">Copy it now: it is shown only once and cannot be shown again.</p>
    <div class="once-row">
      <input ref=${ref} id=${p.id} class="secret" readonly value=${p.value} aria-label=${p.label} />
      <button type="button" onClick=${copy}>Copy</button>
    </div>
    <p class="status" role="status">${copied}</p>
  </div>`;
}

/** What an empty list says, and what to do next. */
export function Empty(p: { children: ComponentChildren }): VNode {
  return html`<div class="empty">${p.children}</div>`;
}

/** Previous/next page buttons for a cursor-paginated list. */
export function Pager(p: {
  hasPrevious: boolean;
  hasNext: boolean;
  onPrevious: () => void;
  onNext: () => void;
}): VNode | null {
  if (!p.hasPrevious && !p.hasNext) return null;
  return html`<nav class="pager" aria-label="Pages">
    <button type="button" disabled=${!p.hasPrevious} onClick=${p.onPrevious}>Previous page</button>
    <button type="button" disabled=${!p.hasNext} onClick=${p.onNext}>Next page</button>
  </nav>`;
}

/** A cursor pager's state: the cursors of the pages before this one. */
export function useCursor(): {
  cursor: string | undefined;
  hasPrevious: boolean;
  next: (c: string) => void;
  previous: () => void;
  reset: () => void;
} {
  const [stack, setStack] = useState<(string | undefined)[]>([undefined]);
  return {
    cursor: stack[stack.length - 1],
    hasPrevious: stack.length > 1,
    next: (c) => setStack([...stack, c]),
    previous: () => setStack(stack.slice(0, -1)),
    reset: () => setStack([undefined]),
  };
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A button that asks first: a modal dialog (Escape or “Cancel” closes it) with the consequence spelled out. */
export function Confirm(p: {
  id: string;
  label: string;
  /** What a screen reader hears after the label (which item). */
  labelSuffix?: string;
  title: string;
  body: string;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<void>;
}): VNode {
  const ref = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    setBusy(true);
    try {
      await p.onConfirm();
      ref.current?.close();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return html`<button type="button" class=${p.danger ? 'danger' : ''} onClick=${() => ref.current?.showModal()}>${p.label}${p.labelSuffix ? html`<span class="sr"> ${p.labelSuffix}</span>` : null}</button>
    <dialog ref=${ref} aria-labelledby=${`${p.id}-title`}>
      <h2 id=${`${p.id}-title`}>${p.title}</h2>
      <p>${p.body}</p>
      <${FormError} message=${error} />
      <div class="actions">
        <button type="button" class="secondary" onClick=${() => ref.current?.close()}>Cancel</button>
        <button type="button" class=${p.danger ? 'danger' : ''} disabled=${busy} onClick=${confirm}>${p.confirmLabel}</button>
      </div>
    </dialog>`;
}

/** A read-only text (a snippet, an address) with its label and a copy button. */
export function Copyable(p: { id: string; label: string; value: string }): VNode {
  const ref = useRef<HTMLTextAreaElement>(null);
  const [copied, copy] = useCopy(p.value, ref);
  return html`<div class="field">
    <label for=${p.id}>${p.label}</label>
    <textarea ref=${ref} id=${p.id} class="code" readonly rows=${Math.min(6, p.value.split('\n').length + 1)} value=${p.value}></textarea>
    <div><button type="button" onClick=${copy}>Copy<span class="sr"> ${p.label}</span></button></div>
    <p class="status" role="status">${copied}</p>
  </div>`;
}
