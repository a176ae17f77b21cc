/**
 * The HTML around the pages' client code, and the headers every page carries
 * (docs/design.md#pages): a strict Content-Security-Policy (scripts and styles from Kairos
 * itself only, no inline script, no style attribute), no Referer (tokens sit in the paths), and
 * `frame-ancestors` from the account's allowed domains.
 */
import type { FastifyReply } from 'fastify';
import { escapeHtml } from '../../lib/html.js';
import { contentSecurityPolicy, SAME_ORIGIN_ASSETS } from '../../platform/csp.js';
import type { Assets, PageScript } from './assets.js';
import { HOUR } from '../../lib/time.js';

const HOSTNAME =
  /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Who may frame a page: the account's allowed domains (each hostname and its subdomains, on the
 * page's own scheme or https, on any port, as the Origin rule of a publishable key compares hostnames
 * only), or anyone when the account has none; `'none'` for pages of no account.
 */
export function frameAncestors(domains: readonly string[] | null): string {
  if (domains === null) return "'none'";
  const valid = domains.filter((d) => HOSTNAME.test(d));
  if (valid.length === 0) return '*';
  return ["'self'", ...valid.flatMap((d) => [`${d}:*`, `*.${d}:*`])].join(' ');
}

/** A page's policy: nothing but this server's assets, framed only where `ancestors` allows. */
export function pagePolicy(ancestors: string): string {
  return contentSecurityPolicy({
    'default-src': "'none'",
    ...SAME_ORIGIN_ASSETS,
    'base-uri': "'none'",
    'frame-ancestors': ancestors,
  });
}

/** The headers of every page; `store: false` pages (tokens) are never cached. */
export function pageHeaders(reply: FastifyReply, ancestors: string, cache: 'no-store' | 'no-cache'): void {
  reply
    .header('content-security-policy', pagePolicy(ancestors))
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', cache)
    .type('text/html; charset=utf-8');
}

/** JSON for a `<script type="application/json">` data block: never closes the element. */
function dataBlock(data: unknown): string {
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return `<script type="application/json" id="kairos-data">${json}</script>`;
}

/**
 * `<link rel="preload">` of the free times the booking page asks for first, so the browser fetches
 * them while it loads the script: this UTC month's window widened by 14 hours each side (every zone's
 * month, as src/web/booking/shared/time.ts monthWindow computes it) from this minute on. The script uses the
 * link's URL as is when the visitor's month is the one named here.
 */
export function slotsPreload(slug: string, duration: number, nowMs: number): string {
  const now = new Date(nowMs);
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const from = Math.max(Date.UTC(y, m, 1) - 14 * HOUR, Math.floor(nowMs / 60_000) * 60_000);
  const to = Date.UTC(y, m + 1, 1) + 14 * HOUR;
  const q = new URLSearchParams({
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    duration_minutes: String(duration),
  });
  const href = `/v1/public/links/${encodeURIComponent(slug)}/availability?${q}`;
  const month = `${y}-${String(m + 1).padStart(2, '0')}`;
  return `<link rel="preload" as="fetch" crossorigin="anonymous" id="slots-preload" href="${escapeHtml(href)}" data-month="${month}" data-duration="${duration}">`;
}

export function page(o: {
  assets: Assets;
  title: string;
  /** More of <head> (already HTML). */
  head?: string;
  script?: PageScript;
  attrs?: Record<string, string>;
  data?: unknown;
  body: string;
  /** Classes of <html> (the embed's theme and options). */
  htmlClass?: string;
}): string {
  const script = o.script ? `<script type="module" src="${o.assets[o.script].path}"></script>` : '';
  const attrs = Object.entries(o.attrs ?? {})
    .map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`)
    .join('');
  return `<!doctype html>
<html lang="en"${o.htmlClass ? ` class="${escapeHtml(o.htmlClass)}"` : ''}><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(o.title)}</title>
<link rel="icon" type="image/svg+xml" href="/favicon.svg">
<link rel="stylesheet" href="${o.assets.css.path}">
${script}${o.head ?? ''}</head>
<body><div id="app"${attrs}>${o.body}</div>
${o.data === undefined ? '' : dataBlock(o.data)}
</body></html>`;
}

/** The wait before the script runs, and what a browser without JavaScript is told. */
export function loading(what: string): string {
  return `<div class="card"><main class="body"><p>Loading ${escapeHtml(what)}…</p>
<noscript><p>This page needs JavaScript to show free times and book.</p></noscript></main></div>`;
}

/** A page that says why there is nothing to show (404, 410), with no script at all. */
export function errorPage(assets: Assets, title: string, message: string): string {
  return page({
    assets,
    title,
    body: `<div class="card page-error"><main class="body"><h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(message)}</p></main></div>`,
  });
}
