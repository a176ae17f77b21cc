/**
 * `/embed.js`: Kairos's booking page on another site (docs/design.md#pages, README "Embed").
 * One classic script, no dependency, no eval, no inline style element or style attribute: it styles
 * what it adds through the CSSOM (`element.style.x = …`), which a strict Content-Security-Policy on
 * the host page allows, so the host page needs only `script-src` and `frame-src` for Kairos.
 *
 * The API is versioned, `window.Kairos.v1`:
 * - `inline(target, options)`: the booking page in an iframe inside `target` (an element or a selector);
 * - `popup(options)`: the booking page in a dialog over the page (also: a click on any element with
 *   `data-kairos-link="<slug>"`);
 * - `floatingButton(options)`: a button fixed in a corner that opens the popup;
 * - `on(name, handler)` / `off(name, handler)`: the events, by their versioned names
 *   (`kairos:v1:ready`, `slot_selected`, `booking_succeeded`, `booking_rescheduled`,
 *   `booking_cancelled`, `booking_failed`); each is also dispatched on `window` as a CustomEvent.
 * Options: `link` (the slug), `key` (a publishable key: the page may then be framed only by the key's
 * allowed domains, and its API calls carry the key), `prefill` ({name, email, notes, answers,
 * metadata}), `theme` ('light' | 'dark' | 'auto'), `brand` ('#rrggbb'), `hideDetails`.
 * Elements with `data-kairos-inline="<slug>"` are filled when the page is ready; options come from
 * `data-kairos-*` attributes of the element and of this script's own tag (`data-key`, `data-theme`,
 * `data-brand`, `data-hide-details`, `data-button="<slug>"` for a floating button).
 *
 * Messages: an iframe's page posts to this page only after this script's `kairos:v1:init` reached it
 * (it then knows this page's origin, as the browser tells it); this script accepts messages only
 * from Kairos's origin and from an iframe it made.
 */

type Theme = 'light' | 'dark' | 'auto';

interface Prefill {
  name?: string;
  email?: string;
  notes?: string;
  answers?: Record<string, string | boolean>;
  metadata?: Record<string, string>;
}

interface Options {
  link: string;
  key?: string;
  prefill?: Prefill;
  theme?: Theme;
  brand?: string;
  hideDetails?: boolean;
  /** The floating button's text. */
  label?: string;
}

interface KairosEvent {
  type: string;
  data: unknown;
  frame: HTMLIFrameElement;
}

type Handler = (event: KairosEvent) => void;

interface Handle {
  iframe: HTMLIFrameElement;
  close(): void;
}

const EVENTS = [
  'ready',
  'slot_selected',
  'booking_succeeded',
  'booking_rescheduled',
  'booking_cancelled',
  'booking_failed',
] as const;

const scriptTag = document.currentScript as HTMLScriptElement | null;
const ORIGIN = new URL(scriptTag?.src || location.href).origin;

/** `escape`: what Escape pressed inside the frame does (a popup closes). */
const frames = new Map<string, { iframe: HTMLIFrameElement; options: Options; escape?: () => void }>();
const handlers = new Map<string, Set<Handler>>();
let seq = 0;

function css(el: HTMLElement, styles: Partial<Record<keyof CSSStyleDeclaration, string>>): void {
  // CSSOM assignments, not a style attribute: allowed under a CSP without 'unsafe-inline'.
  for (const [k, v] of Object.entries(styles)) {
    if (v !== undefined) (el.style as unknown as Record<string, string>)[k] = v;
  }
}

function fullName(name: string): string {
  return name.startsWith('kairos:v1:') ? name : `kairos:v1:${name}`;
}

function frameUrl(o: Options): string {
  const q = new URLSearchParams({ embed: '1' });
  if (o.theme && o.theme !== 'light') q.set('theme', o.theme);
  if (o.brand) q.set('brand', o.brand);
  if (o.hideDetails) q.set('hide_details', '1');
  if (o.key) q.set('key', o.key);
  return `${ORIGIN}/book/${encodeURIComponent(o.link)}?${q}`;
}

function makeFrame(o: Options): HTMLIFrameElement {
  if (!o?.link) throw new Error('Kairos.v1: options.link (a booking link slug) is required');
  const id = `kairos-${++seq}`;
  const iframe = document.createElement('iframe');
  iframe.src = frameUrl(o);
  iframe.title = 'Book a time';
  iframe.name = id;
  iframe.setAttribute('allow', 'payment');
  iframe.setAttribute('referrerpolicy', 'no-referrer');
  css(iframe, { border: '0', width: '100%', height: '640px', display: 'block', colorScheme: 'normal' });
  frames.set(id, { iframe, options: o });
  // Every page the iframe loads (the booking page, then the manage page) is told where it is.
  iframe.addEventListener('load', () => {
    iframe.contentWindow?.postMessage(
      { type: 'kairos:v1:init', frame: id, prefill: o.prefill ?? {} },
      ORIGIN,
    );
  });
  return iframe;
}

function inline(target: Element | string, o: Options): Handle {
  const el = typeof target === 'string' ? document.querySelector(target) : target;
  if (!el) throw new Error(`Kairos.v1.inline: no element ${String(target)}`);
  const iframe = makeFrame(o);
  el.appendChild(iframe);
  return { iframe, close: () => remove(iframe) };
}

function remove(iframe: HTMLIFrameElement): void {
  for (const [id, f] of frames) if (f.iframe === iframe) frames.delete(id);
  iframe.remove();
}

function popup(o: Options): Handle {
  const backdrop = document.createElement('div');
  css(backdrop, {
    position: 'fixed',
    inset: '0',
    background: 'rgba(0,0,0,0.55)',
    zIndex: '2147483000',
    display: 'flex',
    alignItems: 'flex-start',
    justifyContent: 'center',
    overflowY: 'auto',
    padding: '3vh 12px',
  });
  const dialog = document.createElement('div');
  dialog.setAttribute('role', 'dialog');
  dialog.setAttribute('aria-modal', 'true');
  dialog.setAttribute('aria-label', 'Book a time');
  css(dialog, { position: 'relative', width: '100%', maxWidth: '960px' });
  const close = document.createElement('button');
  close.type = 'button';
  close.textContent = '×';
  close.setAttribute('aria-label', 'Close');
  css(close, {
    position: 'absolute',
    top: '-10px',
    right: '-6px',
    width: '36px',
    height: '36px',
    borderRadius: '18px',
    border: '0',
    background: '#fff',
    color: '#111',
    font: '600 22px/36px system-ui, sans-serif',
    cursor: 'pointer',
    boxShadow: '0 2px 8px rgba(0,0,0,.3)',
    zIndex: '1',
  });
  const iframe = makeFrame(o);
  css(iframe, { borderRadius: '12px' });
  const before = document.activeElement as HTMLElement | null;
  const overflow = document.documentElement.style.overflow;
  const shut = () => {
    remove(iframe);
    backdrop.remove();
    document.removeEventListener('keydown', onKey);
    document.documentElement.style.overflow = overflow;
    before?.focus?.();
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape') shut();
  };
  close.addEventListener('click', shut);
  backdrop.addEventListener('click', (e) => {
    if (e.target === backdrop) shut();
  });
  document.addEventListener('keydown', onKey);
  // Escape pressed while focus is inside the booking page (another document) closes the popup too.
  for (const f of frames.values()) if (f.iframe === iframe) f.escape = shut;
  // Keyboard focus stays in the dialog: Tab past the booking page comes back to Close, Shift+Tab
  // before Close goes into the page.
  const wrap = (to: () => void) => {
    const edge = document.createElement('span');
    edge.tabIndex = 0;
    edge.addEventListener('focus', to);
    return edge;
  };
  dialog.append(
    wrap(() => iframe.focus()),
    close,
    iframe,
    wrap(() => close.focus()),
  );
  backdrop.appendChild(dialog);
  document.body.appendChild(backdrop);
  document.documentElement.style.overflow = 'hidden';
  close.focus();
  return { iframe, close: shut };
}

function floatingButton(o: Options): { button: HTMLButtonElement; remove(): void } {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = o.label ?? 'Book a time';
  css(button, {
    position: 'fixed',
    right: '20px',
    bottom: '20px',
    zIndex: '2147482999',
    padding: '12px 20px',
    border: '0',
    borderRadius: '999px',
    background: o.brand ?? '#1d4ed8',
    color: '#fff',
    font: '600 16px system-ui, sans-serif',
    cursor: 'pointer',
    boxShadow: '0 4px 14px rgba(0,0,0,.25)',
  });
  button.addEventListener('click', () => popup(o));
  document.body.appendChild(button);
  return { button, remove: () => button.remove() };
}

function on(name: string, handler: Handler): void {
  const full = fullName(name);
  let set = handlers.get(full);
  if (!set) {
    set = new Set();
    handlers.set(full, set);
  }
  set.add(handler);
}

function off(name: string, handler: Handler): void {
  handlers.get(fullName(name))?.delete(handler);
}

function install(): void {
  window.addEventListener('message', (e: MessageEvent) => {
    if (e.origin !== ORIGIN) return;
    const d = e.data as { type?: unknown; frame?: unknown; data?: unknown } | null;
    if (!d || typeof d.type !== 'string' || typeof d.frame !== 'string') return;
    const f = frames.get(d.frame);
    if (!f || e.source !== f.iframe.contentWindow) return;
    if (d.type === 'kairos:v1:escape') {
      f.escape?.();
      return;
    }
    if (d.type === 'kairos:v1:resize') {
      const h = Number((d.data as { height?: unknown } | null)?.height);
      if (Number.isFinite(h) && h > 0) f.iframe.style.height = `${Math.min(Math.ceil(h), 20_000)}px`;
      return;
    }
    if (!(EVENTS as readonly string[]).includes(d.type.slice('kairos:v1:'.length))) return;
    const event: KairosEvent = { type: d.type, data: d.data, frame: f.iframe };
    for (const h of handlers.get(d.type) ?? []) {
      try {
        h(event);
      } catch (err) {
        setTimeout(() => {
          throw err;
        });
      }
    }
    window.dispatchEvent(new CustomEvent(d.type, { detail: { data: d.data, frame: f.iframe } }));
  });

  /** Options from `data-kairos-*` attributes (an element's), over the script tag's defaults. */
  function optionsOf(el: HTMLElement | null, link: string): Options {
    const own = (name: string) => el?.getAttribute(`data-kairos-${name}`) ?? undefined;
    const tag = (name: string) => scriptTag?.getAttribute(`data-${name}`) ?? undefined;
    const pick = (name: string) => own(name) ?? tag(name);
    const o: Options = { link };
    const key = pick('key');
    const theme = pick('theme');
    const brand = pick('brand');
    if (key) o.key = key;
    if (theme === 'light' || theme === 'dark' || theme === 'auto') o.theme = theme;
    if (brand) o.brand = brand;
    if (pick('hide-details') !== undefined && pick('hide-details') !== 'false') o.hideDetails = true;
    const prefill: Prefill = {};
    const name = own('name');
    const email = own('email');
    const notes = own('notes');
    if (name) prefill.name = name;
    if (email) prefill.email = email;
    if (notes) prefill.notes = notes;
    if (Object.keys(prefill).length) o.prefill = prefill;
    const label = pick('label');
    if (label) o.label = label;
    return o;
  }

  function auto(): void {
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('[data-kairos-inline]'))) {
      if (el.dataset.kairosDone) continue;
      el.dataset.kairosDone = '1';
      inline(el, optionsOf(el, el.dataset.kairosInline ?? ''));
    }
    const button = scriptTag?.getAttribute('data-button');
    if (button) floatingButton(optionsOf(null, button));
  }

  document.addEventListener('click', (e) => {
    const el = (e.target as Element | null)?.closest?.('[data-kairos-link]') as HTMLElement | null;
    if (!el) return;
    e.preventDefault();
    popup(optionsOf(el, el.getAttribute('data-kairos-link') ?? ''));
  });

  const w = window as unknown as { Kairos?: Record<string, unknown> };
  w.Kairos = w.Kairos ?? {};
  w.Kairos.v1 = Object.freeze({ version: 1, origin: ORIGIN, inline, popup, floatingButton, on, off });
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', auto);
  else auto();
}

// Loaded twice (two snippets on one page): the first copy serves both.
if (!(window as unknown as { Kairos?: { v1?: unknown } }).Kairos?.v1) install();
