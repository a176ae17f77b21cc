/**
 * The pages Kairos serves to people (docs/api.md#e-mail-and-pages): the booking page `/book/{slug}`,
 * the attendee's page `/b/{token}`, and their client code under `/assets/`. Hidden from the OpenAPI
 * document: they are pages, not API. Each answers HTML to a browser; a client that does not accept
 * text/html gets the usual problem+json for a 404 or 410.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, NotFound } from '../../platform/errors.js';
import type { TypedApp } from '../../platform/routes.js';
import { type Assets, licenses, prepareAssets } from './assets.js';
import { errorPage, frameAncestors, loading, page, pageHeaders, slotsPreload } from './html.js';
import type { PageService } from './service.js';

function acceptsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').toLowerCase().includes('text/html');
}

/** A page that says why there is nothing here; problem+json for clients that are not browsers. */
function refuse(
  request: FastifyRequest,
  reply: FastifyReply,
  assets: Assets,
  status: 404 | 410,
  title: string,
  message: string,
) {
  if (!acceptsHtml(request)) {
    throw status === 404 ? new NotFound(message) : new AppError(410, 'gone', message);
  }
  pageHeaders(reply, frameAncestors(null), 'no-store');
  return reply.code(status).send(errorPage(assets, title, message));
}

export function pageRoutes(app: TypedApp, pages: PageService): void {
  const hide = { hide: true };

  app.get<{ Params: { slug: string } }>(
    '/book/:slug',
    { config: { access: 'public' }, schema: hide },
    async (request, reply) => {
      const assets = await prepareAssets();
      const found = await pages.bookingPage(request.caller, request.params.slug);
      if (!found) {
        return refuse(
          request,
          reply,
          assets,
          404,
          'Booking page not found',
          'There is no booking page at this address. It may have been renamed or switched off; ask whoever sent you the link for a new one.',
        );
      }
      pageHeaders(reply, frameAncestors(found.domains), 'no-cache');
      return reply.send(
        page({
          assets,
          title: `${found.view.booking_link.title} · Book a time`,
          script: 'book',
          head: slotsPreload(
            found.view.booking_link.slug,
            found.view.booking_link.duration_minutes,
            pages.nowMs(),
          ),
          attrs: { slug: found.view.booking_link.slug },
          data: found.view,
          body: loading('free times'),
        }),
      );
    },
  );

  app.get<{ Params: { token: string } }>(
    '/b/:token',
    { config: { access: 'public' }, schema: hide },
    async (request, reply) => {
      const assets = await prepareAssets();
      const found = await pages.managePage(request.params.token);
      if (found.kind === 'unknown') {
        return refuse(
          request,
          reply,
          assets,
          404,
          'Booking link not valid',
          'This link does not belong to a booking. Check that it was copied whole from your confirmation e-mail.',
        );
      }
      if (found.kind === 'expired') {
        return refuse(
          request,
          reply,
          assets,
          410,
          'Booking link expired',
          'This booking is long over, so its link no longer works. To meet again, book a new time.',
        );
      }
      pageHeaders(reply, frameAncestors(found.domains), 'no-store');
      return reply.send(
        page({
          assets,
          title: 'Your booking',
          script: 'manage',
          data: { slug: found.slug },
          body: loading('your booking'),
        }),
      );
    },
  );

  app.get<{ Params: { file: string } }>(
    '/assets/:file',
    { config: { access: 'unmetered' }, schema: hide },
    async (request, reply) => {
      if (request.params.file === 'licenses.txt') {
        return reply
          .type('text/plain; charset=utf-8')
          .header('cache-control', 'public, max-age=86400')
          .send(licenses());
      }
      const assets = await prepareAssets();
      const asset = assets.byPath.get(`/assets/${request.params.file}`);
      if (!asset) throw new NotFound(`No asset ${request.params.file}`);
      const gzip = /\bgzip\b/i.test(String(request.headers['accept-encoding'] ?? ''));
      reply
        .type(asset.type)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .header('vary', 'accept-encoding');
      if (gzip) reply.header('content-encoding', 'gzip');
      return reply.send(gzip ? asset.gzip : asset.body);
    },
  );
}
