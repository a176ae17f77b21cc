/**
 * The API reference at /docs: Scalar's standalone renderer, served from the installed
 * `@scalar/api-reference` package (no CDN, nothing built into the repository), reading
 * /v1/openapi.json. The page's Content-Security-Policy allows only this origin's scripts and the one
 * inline script that carries a fresh nonce. Styles may be inline: the renderer (Vue and the libraries
 * it bundles) sets style elements and attributes without a nonce, and a style cannot run code.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { contentSecurityPolicy } from './csp.js';

export const REFERENCE_TITLE = 'Kairos API reference';

/** The standalone bundle and its version (the version is in its URL, so it can be cached for good). */
function locateBundle(): { path: string; version: string } {
  const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
  const dist = entry.slice(0, entry.lastIndexOf('/dist/') + '/dist/'.length);
  const pkg = JSON.parse(readFileSync(`${dist}../package.json`, 'utf8')) as { version: string };
  return { path: `${dist}browser/standalone.js`, version: pkg.version };
}

/** The reference's settings: nothing fetched from elsewhere (fonts, telemetry, proxies). */
function rendererConfig(specUrl: string) {
  return {
    url: specUrl,
    pageTitle: REFERENCE_TITLE,
    withDefaultFonts: false,
    telemetry: false,
    hideClientButton: false,
    showOperationId: true,
    showDeveloperTools: 'never',
    defaultOpenAllTags: false,
    mcp: { disabled: true },
    agent: { disabled: true },
  };
}

function page(nonce: string, scriptUrl: string, specUrl: string): string {
  // JSON in a script element: `<` escaped so no string in it can close the element.
  const config = JSON.stringify(rendererConfig(specUrl)).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${REFERENCE_TITLE}</title>
</head>
<body>
<noscript><p>The API reference needs JavaScript. The OpenAPI document is at <a href="${specUrl}">${specUrl}</a>.</p></noscript>
<div id="app"></div>
<script src="${scriptUrl}"></script>
<script nonce="${nonce}">Scalar.createApiReference('#app', ${config});</script>
</body>
</html>
`;
}

/**
 * The page's Content-Security-Policy: scripts from this origin plus the nonce'd inline one, inline
 * styles, requests (the document, "try it") to this origin and the API's base URL only.
 */
function referencePolicy(nonce: string, apiOrigin: string): string {
  return contentSecurityPolicy({
    'default-src': "'none'",
    'script-src': `'self' 'nonce-${nonce}'`,
    'style-src': "'self' 'unsafe-inline'",
    'img-src': "'self' data:",
    'font-src': "'self' data:",
    'connect-src': `'self' ${apiOrigin}`,
    'base-uri': "'none'",
    'form-action': "'none'",
    'frame-ancestors': "'none'",
  });
}

/**
 * Registers GET /docs (the page) and GET /docs/scalar-<version>.js (the renderer). Both are
 * `unmetered`: static, no credential, not rate-limited.
 */
export function registerApiReference(app: FastifyInstance, opts: { specUrl: string; baseUrl: string }): void {
  const bundle = locateBundle();
  const scriptUrl = `/docs/scalar-${bundle.version}.js`;
  const apiOrigin = new URL(opts.baseUrl).origin;
  let body: { plain: Buffer; gzip: Buffer } | null = null;

  app.get('/docs', { config: { access: 'unmetered' }, schema: { hide: true } }, async (_request, reply) => {
    const nonce = randomBytes(18).toString('base64');
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', referencePolicy(nonce, apiOrigin))
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store');
    return page(nonce, scriptUrl, opts.specUrl);
  });
  app.get('/docs/', { config: { access: 'unmetered' }, schema: { hide: true } }, async (_request, reply) =>
    reply.redirect('/docs', 301),
  );

  app.get(
    scriptUrl,
    { config: { access: 'unmetered' }, schema: { hide: true } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      if (body === null) {
        const plain = readFileSync(bundle.path);
        body = { plain, gzip: gzipSync(plain) };
      }
      const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
      reply
        .type('text/javascript; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('vary', 'accept-encoding');
      if (gzip) reply.header('content-encoding', 'gzip');
      return reply.send(gzip ? body.gzip : body.plain);
    },
  );
}
