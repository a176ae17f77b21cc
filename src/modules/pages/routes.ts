/**
 * The pages Kairos serves to people (docs/api.md#e-mail-and-pages): the booking page `/book/{slug}`,
 * the attendee's page `/b/{token}`, the proposal or poll page `/p/{token}`, the waitlist claim
 * `/w/{token}`, the network invitation `/invitations/{token}`, the embed's script `/embed.js`, and
 * the pages' client code under `/assets/`. Hidden from the OpenAPI document: they are pages, not API.
 * Each answers HTML to a browser; a client that does not accept text/html gets the usual
 * problem+json for a 403, 404 or 410.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Forbidden, NotFound } from '../../platform/errors.js';
import type { TypedApp } from '../../platform/routes.js';
import { type Assets, licenses, type PageScript, prepareAssets } from './assets.js';
import { errorPage, frameAncestors, loading, page, pageHeaders, slotsPreload } from './html.js';
import type { PageService, TokenPage } from './service.js';

function acceptsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').toLowerCase().includes('text/html');
}

/** A page that says why there is nothing here; problem+json for clients that are not browsers. */
function refuse(
  request: FastifyRequest,
  reply: FastifyReply,
  assets: Assets,
  status: 403 | 404 | 410,
  title: string,
  message: string,
) {
  if (!acceptsHtml(request)) {
    if (status === 403) throw new Forbidden(message);
    throw status === 404 ? new NotFound(message) : new AppError(410, 'gone', message);
  }
  pageHeaders(reply, frameAncestors(null), 'no-store');
  return reply.code(status).send(errorPage(assets, title, message));
}

/** What the embed asks of a page in its query (`?embed=1&theme=dark&hide_details=1&key=…`). */
interface EmbedQuery {
  embed?: string;
  theme?: string;
  hide_details?: string;
  key?: string;
}

/** Classes of <html> for a page inside the embed's iframe; '' for a page on its own. */
function embedClass(q: EmbedQuery): string {
  if (q.embed !== '1') return '';
  const theme = q.theme === 'dark' || q.theme === 'auto' ? q.theme : 'light';
  return `embedded theme-${theme}${q.hide_details === '1' ? ' hide-details' : ''}`;
}

/** The title and message of a refusal page. */
type Refusal = readonly [title: string, message: string];

const KEY_REFUSED: Refusal = [
  'This page cannot be embedded with this key',
  'The embed names a publishable key that is not valid for this booking page (revoked, expired, or of another account). The site owner should check the key in its embed code.',
];

export function pageRoutes(app: TypedApp, pages: PageService): void {
  const hide = { hide: true };

  /**
   * Who may frame a page of this account: with an embed's publishable key (`?key=`), that key's
   * allowed domains (anyone when it has none); without, the account's. null: the key is not good.
   */
  const framing = async (q: EmbedQuery, accountId: string, domains: string[]) => {
    if (!q.key) return frameAncestors(domains);
    const keyed = await pages.embedKeyDomains(q.key, accountId);
    return keyed === null ? null : frameAncestors(keyed);
  };

  app.get<{ Params: { slug: string }; Querystring: EmbedQuery }>(
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
      const ancestors = await framing(request.query, found.accountId, found.domains);
      if (ancestors === null) return refuse(request, reply, assets, 403, ...KEY_REFUSED);
      pageHeaders(reply, ancestors, 'no-cache');
      // With a key the page's requests carry it (Authorization), so they cannot match a preload.
      const keyed = Boolean(request.query.key);
      return reply.send(
        page({
          assets,
          title: `${found.view.booking_link.title} · Book a time`,
          script: 'book',
          htmlClass: embedClass(request.query),
          head: keyed
            ? ''
            : slotsPreload(
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

  app.get<{ Params: { token: string }; Querystring: EmbedQuery }>(
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
      const ancestors = await framing(request.query, found.accountId, found.domains);
      if (ancestors === null) return refuse(request, reply, assets, 403, ...KEY_REFUSED);
      pageHeaders(reply, ancestors, 'no-store');
      return reply.send(
        page({
          assets,
          title: 'Your booking',
          script: 'manage',
          htmlClass: embedClass(request.query),
          data: { slug: found.slug },
          body: loading('your booking'),
        }),
      );
    },
  );

  /**
   * A page behind a token from an e-mail: a clear 404 page when the token is unknown, a 410 page
   * saying why when it no longer works, else the page `show` describes.
   */
  const tokenPage = <F extends TokenPage<unknown>>(
    path: string,
    lookup: (token: string) => Promise<F>,
    texts: { unknown: Refusal; gone: (why: string) => Refusal },
    show: (found: Extract<F, { kind: 'live' }>) => {
      ancestors: string;
      title: string;
      script: PageScript;
      data?: unknown;
      body: string;
    },
  ) =>
    app.get<{ Params: { token: string } }>(
      path,
      { config: { access: 'public' }, schema: hide },
      async (request, reply) => {
        const assets = await prepareAssets();
        const found = await lookup(request.params.token);
        if (found.kind === 'unknown') return refuse(request, reply, assets, 404, ...texts.unknown);
        if (found.kind === 'gone') return refuse(request, reply, assets, 410, ...texts.gone(found.why));
        const { ancestors, ...shown } = show(found as Extract<F, { kind: 'live' }>);
        pageHeaders(reply, ancestors, 'no-store');
        return reply.send(page({ assets, ...shown }));
      },
    );

  tokenPage(
    '/p/:token',
    (token) => pages.proposalPage(token),
    {
      unknown: [
        'Proposal link not valid',
        'This link does not belong to a meeting proposal or poll. Check that it was copied whole from the e-mail.',
      ],
      gone: () => [
        'Proposal expired',
        'This proposal or poll is closed: its time to answer has passed. Ask whoever sent it for a new one.',
      ],
    },
    () => ({
      ancestors: frameAncestors(null),
      title: 'Meeting proposal',
      script: 'proposal',
      body: loading('the proposal'),
    }),
  );

  tokenPage(
    '/w/:token',
    (token) => pages.claimPage(token),
    {
      unknown: [
        'Waitlist link not valid',
        'This link does not belong to a waitlist offer. Check that it was copied whole from the e-mail.',
      ],
      gone: (why) =>
        why === 'claimed'
          ? [
              'Offer already claimed',
              'This time was claimed with this link already. Your confirmation e-mail has the booking and a link to reschedule or cancel it.',
            ]
          : [
              'Offer expired',
              'This time was held for you for a while and has now passed to someone else, or it has begun. You are still welcome to book another time.',
            ],
    },
    (found) => ({
      ancestors: frameAncestors(found.domains ?? []),
      title: 'A time freed up',
      script: 'claim',
      data: found.data,
      body: loading('the offer'),
    }),
  );

  tokenPage(
    '/invitations/:token',
    (token) => pages.invitationPage(token),
    {
      unknown: [
        'Invitation link not valid',
        'This link does not belong to an invitation. Check that it was copied whole from the e-mail.',
      ],
      gone: (why) =>
        why === 'expired'
          ? ['Invitation expired', 'This invitation is no longer valid. Ask whoever sent it for a new one.']
          : [
              'Invitation already answered',
              `This invitation was ${why} already, so its link no longer works.`,
            ],
    },
    (found) => ({
      ancestors: frameAncestors(null),
      title: 'Invitation to connect',
      script: 'invitation',
      data: found.data,
      body: loading('the invitation'),
    }),
  );

  app.get('/embed.js', { config: { access: 'unmetered' }, schema: hide }, async (request, reply) => {
    const { embed } = await prepareAssets();
    const gzip = /\bgzip\b/i.test(String(request.headers['accept-encoding'] ?? ''));
    // One stable URL (sites paste it): cached briefly, revalidated by its ETag.
    const etag = `"${embed.hash}"`;
    reply
      .type(embed.type)
      .header('cache-control', 'public, max-age=300, stale-while-revalidate=86400')
      .header('etag', etag)
      .header('x-content-type-options', 'nosniff')
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('vary', 'accept-encoding');
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    if (gzip) reply.header('content-encoding', 'gzip');
    return reply.send(gzip ? embed.gzip : embed.body);
  });

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
