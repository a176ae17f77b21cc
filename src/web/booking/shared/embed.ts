/**
 * The page's side of the embed (docs/design.md#pages): when a page runs inside the iframe that
 * `/embed.js` made (`?embed=1`), it waits for the embedding page's `kairos:v1:init` message, whose
 * `origin` the browser vouches for, and from then on posts its events to that origin only (never
 * `'*'`): `kairos:v1:ready`, `slot_selected`, `booking_succeeded`, `booking_rescheduled`,
 * `booking_cancelled`, `booking_failed`, `resize` (the document's height, for auto-resize) and `escape`
 * (Escape pressed inside: a popup closes).
 * Events carry the booking's public fields, never its manage or checkout URL (they hold tokens).
 * Events raised before the init are queued. Also applies the embed's brand colour (CSSOM: the page's
 * CSP allows no style attribute) and keeps the publishable key for the page's API calls.
 */
import type { PublicBooking } from './api.js';
import { useCredential } from './api.js';

export interface Prefill {
  name?: string;
  email?: string;
  notes?: string;
  answers?: Record<string, string | boolean>;
  metadata?: Record<string, string>;
}

const params = new URLSearchParams(location.search);
export const embedded = params.get('embed') === '1' && window.parent !== window;

let parentOrigin: string | null = null;
let frame = '';
const queue: { name: string; data: unknown }[] = [];
export let prefill: Prefill = {};
const prefillWaiters: (() => void)[] = [];

/** The query a page inside the embed passes on to the next page it opens (the manage link). */
export function embedQuery(): string {
  if (!embedded) return '';
  const q = new URLSearchParams();
  for (const k of ['embed', 'theme', 'hide_details', 'brand', 'key']) {
    const v = params.get(k);
    if (v) q.set(k, v);
  }
  return `?${q}`;
}

/** The booking's public fields, without the URLs that carry its tokens. */
export function publicFields(b: PublicBooking): Record<string, unknown> {
  const { manage_url: _m, checkout_url: _c, ...rest } = b;
  return rest;
}

export function emit(name: string, data: unknown = {}): void {
  if (!embedded) return;
  if (!parentOrigin) {
    queue.push({ name, data });
    return;
  }
  window.parent.postMessage({ type: `kairos:v1:${name}`, frame, data }, parentOrigin);
}

/** Runs `fn` once the embed's prefill is known (at once outside an embed or once it came). */
export function whenPrefilled(fn: () => void): void {
  if (!embedded || parentOrigin) fn();
  else prefillWaiters.push(fn);
}

function text(v: unknown, max: number): string | undefined {
  return typeof v === 'string' && v.length <= max ? v : undefined;
}

function record<T>(v: unknown, ok: (x: unknown) => x is T): Record<string, T> | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const out: Record<string, T> = {};
  for (const [k, x] of Object.entries(v).slice(0, 50)) if (ok(x)) out[k] = x;
  return out;
}

function cleanPrefill(v: unknown): Prefill {
  if (!v || typeof v !== 'object') return {};
  const p = v as Record<string, unknown>;
  const out: Prefill = {};
  const name = text(p.name, 200);
  const email = text(p.email, 320);
  const notes = text(p.notes, 5000);
  const answers = record(
    p.answers,
    (x): x is string | boolean => typeof x === 'string' || typeof x === 'boolean',
  );
  const metadata = record(p.metadata, (x): x is string => typeof x === 'string');
  if (name) out.name = name;
  if (email) out.email = email;
  if (notes) out.notes = notes;
  if (answers) out.answers = answers;
  if (metadata) out.metadata = metadata;
  return out;
}

/** The relative luminance (WCAG) of a `#rgb` or `#rrggbb` colour. */
function luminance(hex: string): number {
  const h = hex.length === 4 ? hex.replace(/[0-9a-f]/gi, (c) => c + c).slice(1) : hex.slice(1);
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = Number.parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0);
}

function watchHeight(): void {
  let last = 0;
  const send = () => {
    const h = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (h !== last) {
      last = h;
      emit('resize', { height: h });
    }
  };
  new ResizeObserver(send).observe(document.documentElement);
  send();
}

if (embedded) {
  useCredential(params.get('key'));
  // The embedding page cannot hear keys pressed in here: Escape is passed on (a popup closes).
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') emit('escape');
  });
  const brand = params.get('brand');
  if (brand && /^#[0-9a-f]{3}(?:[0-9a-f]{3})?$/i.test(brand)) {
    const root = document.documentElement.style;
    root.setProperty('--brand', brand);
    // Text on the brand colour: black or white, whichever reads better.
    root.setProperty('--brand-ink', luminance(brand) > 0.18 ? '#000' : '#fff');
  }
  window.addEventListener('message', (e: MessageEvent) => {
    const d = e.data as { type?: unknown; frame?: unknown; prefill?: unknown } | null;
    // Only the embedding page itself, and only its first init: the origin is then fixed.
    if (e.source !== window.parent || parentOrigin || d?.type !== 'kairos:v1:init') return;
    parentOrigin = e.origin;
    frame = typeof d.frame === 'string' ? d.frame.slice(0, 64) : '';
    prefill = cleanPrefill(d.prefill);
    const waiting = queue.splice(0);
    emit('ready', { page: location.pathname.split('/')[1] ?? '' });
    for (const m of waiting) emit(m.name, m.data);
    for (const fn of prefillWaiters.splice(0)) fn();
    watchHeight();
  });
} else {
  useCredential(null);
}
