/**
 * The site's front (docs/design.md#pages): `/`, a landing page leading to the API reference and the
 * console; `/errors` and `/errors/{slug}`, the pages a problem's `type` names; the favicon, at
 * `/favicon.svg` (named by every page) and `/favicon.ico` (what browsers ask for by themselves). The
 * pages carry the pages' stylesheet and the same strict Content-Security-Policy as every page.
 */
import { DESCRIPTIONS, TITLES } from '../../platform/errors.js';
import type { TypedApp } from '../../platform/routes.js';
import { prepareAssets } from './assets.js';
import { escapeHtml } from '../../lib/html.js';
import { frameAncestors, page, pageHeaders } from './html.js';

/** The favicon: a clock face on the pages' brand blue. */
export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d4ed8"/><circle cx="16" cy="16" r="9.5" fill="none" stroke="#fff" stroke-width="3"/><path d="M16 10.5V16l3.5 3" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>`;

/** Escaped text with `backticks` shown as code. */
function prose(t: string): string {
  return escapeHtml(t).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function card(body: string): string {
  return `<div class="card site"><main class="body">${body}</main></div>`;
}

const PROBLEMS = `<p>Every error body is <code>application/problem+json</code> with <code>type</code>, <code>title</code>,
<code>status</code>, <code>detail</code> and <code>request_id</code>; machine-readable reasons are in
<code>code</code>. See the <a href="/docs">API reference</a>.</p>`;

export function siteRoutes(app: TypedApp, baseUrl: () => string): void {
  const hide = { hide: true };
  const icon = (path: string) =>
    app.get(path, { config: { access: 'unmetered' }, schema: hide }, async (_request, reply) =>
      reply
        .type('image/svg+xml')
        .header('content-security-policy', "default-src 'none'")
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'public, max-age=86400')
        .send(FAVICON),
    );
  icon('/favicon.svg');
  icon('/favicon.ico');

  app.get('/', { config: { access: 'unmetered' }, schema: hide }, async (_request, reply) => {
    const assets = await prepareAssets();
    pageHeaders(reply, frameAncestors(null), 'no-cache');
    return reply.send(
      page({
        assets,
        title: 'Kairos',
        body: card(`<h1>Kairos</h1>
<p>A scheduling and booking API server.</p>
<ul class="site-links">
<li><a href="/console">Console</a>: API keys, hosts and their calendars, booking links, bookings,
webhooks, in the browser. On a new server it says how to make the first account.</li>
<li><a href="/docs">API reference</a>: every operation with its schemas and examples (the OpenAPI
document is <a href="/v1/openapi.json">/v1/openapi.json</a>).</li>
<li><a href="/errors">Error types</a>: what each problem <code>type</code> means.</li>
</ul>`),
      }),
    );
  });

  app.get('/errors', { config: { access: 'unmetered' }, schema: hide }, async (_request, reply) => {
    const assets = await prepareAssets();
    const items = Object.entries(TITLES)
      .map(
        ([slug, title]) =>
          `<li><a href="/errors/${escapeHtml(slug)}"><code>${escapeHtml(slug)}</code></a>: ${escapeHtml(title)}. ${prose(DESCRIPTIONS[slug] ?? '')}</li>`,
      )
      .join('\n');
    pageHeaders(reply, frameAncestors(null), 'no-cache');
    return reply.send(
      page({
        assets,
        title: 'Errors · Kairos',
        body: card(
          `<h1>Errors</h1><p>Every <code>type</code> an error body can carry:</p><ul>\n${items}\n</ul>\n${PROBLEMS}`,
        ),
      }),
    );
  });

  app.get<{ Params: { slug: string } }>(
    '/errors/:slug',
    { config: { access: 'unmetered' }, schema: hide },
    async (request, reply) => {
      const slug = request.params.slug;
      const title = TITLES[slug];
      if (!title) return reply.callNotFound();
      const assets = await prepareAssets();
      pageHeaders(reply, frameAncestors(null), 'no-cache');
      return reply.send(
        page({
          assets,
          title: `${title} · Kairos`,
          body: card(`<h1>${escapeHtml(title)}</h1><p><code>${escapeHtml(`${baseUrl()}/errors/${slug}`)}</code></p>
<p>${prose(DESCRIPTIONS[slug] ?? '')}</p>
<p><a href="/errors">Every error type</a></p>
${PROBLEMS}`),
        }),
      );
    },
  );
}
