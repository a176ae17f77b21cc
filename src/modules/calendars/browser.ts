/**
 * The calendars module's answers to a person's browser (OAuth callbacks and connect links): a small HTML
 * page or a redirect, never cached, never leaking a token through Referer; problem+json instead of a
 * page for clients that do not accept HTML.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../../lib/html.js';
import { AppError } from '../../platform/errors.js';
import type { BrowserOutcome } from './service.js';

/** What the OpenAPI document shows for a page (platform/openapi.ts). */
export const PAGE_EXAMPLE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Calendar connected</title></head>' +
  '<body><h1>Calendar connected</h1><p>Your calendar is connected. You can close this page.</p></body></html>';

export function renderPage(outcome: Extract<BrowserOutcome, { kind: 'page' }>): string {
  const links = (outcome.links ?? [])
    .map((l) => `<p><a href="${escapeHtml(l.url)}">${escapeHtml(l.label)}</a></p>`)
    .join('');
  const forms = (outcome.forms ?? [])
    .map(
      (f) =>
        `<form method="post" action="${escapeHtml(f.action)}"><h2>${escapeHtml(f.title)}</h2>` +
        f.fields
          .map(
            (x) =>
              `<p><label>${escapeHtml(x.label)}<br><input name="${escapeHtml(x.name)}" type="${x.type}" required ` +
              `autocomplete="${x.type === 'password' ? 'current-password' : 'off'}" style="width:100%"></label></p>`,
          )
          .join('') +
        `<p><button type="submit">${escapeHtml(f.submit)}</button></p></form>`,
    )
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(outcome.title)}</title></head>
<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;line-height:1.5">
<h1>${escapeHtml(outcome.title)}</h1><p>${escapeHtml(outcome.message)}</p>${links}${forms}</body></html>`;
}

/** The problem slug of a failed browser outcome, for clients that ask for JSON. */
function outcomeSlug(status: number): string {
  if (status === 404 || status === 410) return 'not-found';
  if (status === 403) return 'forbidden';
  if (status === 409) return 'conflict';
  return 'bad-request';
}

/**
 * Browser answers: no caching, and no Referer carrying a token to the next site. A failure is a page
 * for a person's browser (which accepts text/html), and problem+json for any other client.
 */
export function sendOutcome(request: FastifyRequest, reply: FastifyReply, outcome: BrowserOutcome) {
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  if (outcome.cookies?.length) reply.header('set-cookie', outcome.cookies);
  if (outcome.kind === 'page' && outcome.status >= 400 && !acceptsHtml(request)) {
    throw new AppError(outcome.status, outcomeSlug(outcome.status), `${outcome.title}: ${outcome.message}`);
  }
  if (outcome.kind === 'redirect') return reply.redirect(outcome.location, 302);
  return reply.code(outcome.status).type('text/html; charset=utf-8').send(renderPage(outcome));
}

/** The request's cookies by name (RFC 6265 `Cookie` header; the first of a repeated name wins). */
export function cookiesOf(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !(name in out)) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

function acceptsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').toLowerCase().includes('text/html');
}

export function wantsJson(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').toLowerCase().includes('application/json');
}
