/**
 * The pages over HTTP, without a browser (docs/api.md#e-mail-and-pages; the browser tests are in
 * test/browser): headers (CSP, frame-ancestors from the account's allowed domains, no Referer,
 * caching), the bundles and their size budget, 404 and 410 for links that do not work (a page for a
 * browser, problem+json for anyone else), nothing of other parties on the pages, no token in the logs.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createTestDatabase } from '../../../test/helpers/db.js';
import { waitUntil } from '../../../test/helpers/promises.js';
import { loadConfig } from '../../config.js';
import { createDb, createPool } from '../../db/store.js';
import { startRuntime } from '../../runtime.js';
import * as fixtures from '../../../test/helpers/fixtures.js';

let t: TestApp;
let key: string;
let accountId: string;
let hostId: string;
const HTML = { accept: 'text/html,application/xhtml+xml' };

beforeAll(async () => {
  t = await startTestApp();
  const acc = await t.account();
  key = acc.key;
  accountId = acc.id;
  const h = await t.call('POST', '/v1/hosts', {
    token: key,
    body: { display_name: 'Grace Hopper', timezone: 'UTC', email: 'grace@example.com' },
  });
  hostId = (await h.json()).host.principal_id;
  await link('intro-call');
});
afterAll(async () => {
  await t?.close();
});

async function link(slug: string, body: Record<string, unknown> = {}): Promise<Json> {
  const res = await t.call('POST', '/v1/booking-links', {
    token: key,
    body: { slug, title: 'Intro <call>', host_ids: [hostId], ...body },
  });
  expect(res.status).toBe(201);
  return (await res.json()).booking_link;
}

async function book(slug: string): Promise<{ token: string; id: string }> {
  const start_time = await fixtures.firstSlot(t, slug);
  const booking = await fixtures.book(
    t,
    { slug },
    { customer_name: 'Ada', customer_email: 'ada@example.com', start_time },
  );
  return { token: booking.manage_url.split('/').pop(), id: booking.id };
}

const frameAncestors = (res: Response) =>
  /frame-ancestors ([^;]*)/.exec(res.headers.get('content-security-policy') ?? '')?.[1];

describe('/book/{slug}', () => {
  it('is a page with a strict CSP, no Referer, and the link’s public view inline (no ids, no e-mails)', async () => {
    const res = await t.call('GET', '/book/intro-call', { headers: HTML });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
        "form-action 'self'; base-uri 'none'; frame-ancestors *",
    );
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).toMatch(/<script type="module" src="\/assets\/book-[A-Z0-9]+\.js"><\/script>/);
    // The only inline <script> is a JSON data block, which browsers never run.
    expect([...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>/g)].map((m) => m[0])).toEqual([
      '<script type="application/json" id="kairos-data">',
    ]);
    expect(html).toContain('<title>Intro &lt;call&gt; · Book a time</title>');
    expect(html).toContain('"title":"Intro \\u003ccall>"');
    expect(html).toContain('"display_name":"Grace Hopper"');
    for (const secret of [hostId, accountId, 'grace@example.com']) expect(html).not.toContain(secret);
  });

  it('may be framed by the account’s allowed domains (live publishable keys), by anyone when none are set', async () => {
    expect(frameAncestors(await t.call('GET', '/book/intro-call'))).toBe('*');
    const pk = await t.call('POST', '/v1/api-keys', {
      token: key,
      body: { name: 'Widget', key_type: 'publishable', allowed_domains: ['Example.com', 'shop.test'] },
    });
    const { api_key } = await pk.json();
    await t.call('POST', '/v1/api-keys', { token: key, body: { name: 'Server' } }); // secret keys have none
    expect(frameAncestors(await t.call('GET', '/book/intro-call'))).toBe(
      "'self' example.com:* *.example.com:* shop.test:* *.shop.test:*",
    );
    await t.call('DELETE', `/v1/api-keys/${api_key.id}`, { token: key });
    expect(frameAncestors(await t.call('GET', '/book/intro-call'))).toBe('*');
  });

  it('is a 404 page for an unknown or switched-off link, and problem+json for a client that is not a browser', async () => {
    await link('switched-off', { active: false });
    for (const slug of ['no-such-link', 'switched-off', 'UPPER', 'x']) {
      const page = await t.call('GET', `/book/${slug}`, { headers: HTML });
      expect(page.status, slug).toBe(404);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(frameAncestors(page)).toBe("'none'");
      const html = await page.text();
      expect(html).toContain('<h1>Booking page not found</h1>');
      expect(html).not.toContain('<script');
      const api = await t.call('GET', `/book/${slug}`);
      expect(api.status).toBe(404);
      expect(api.headers.get('content-type')).toContain('application/problem+json');
      expect((await api.json()).request_id).toMatch(/^req_/);
    }
  });
});

describe('/assets', () => {
  it('serves the bundles immutable, gzipped when asked, the booking page’s JavaScript within 30 KB gzipped', async () => {
    const html = await (await t.call('GET', '/book/intro-call')).text();
    const paths = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(paths).toHaveLength(2);
    for (const path of paths) {
      const plain = await t.call('GET', path, { headers: { 'accept-encoding': 'identity' } });
      expect(plain.status).toBe(200);
      expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(plain.headers.get('content-type')).toMatch(/^text\/(javascript|css); charset=utf-8$/);
      const body = Buffer.from(await plain.arrayBuffer());
      // fetch itself asks for gzip and decodes; read the raw size from a plain request.
      const { request } = await import('node:http');
      const gz = await new Promise<Buffer>((resolve, reject) => {
        request(`${t.url}${path}`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
          expect(res.headers['content-encoding']).toBe('gzip');
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks)));
        })
          .on('error', reject)
          .end();
      });
      expect(gunzipSync(gz).equals(body)).toBe(true);
      if (path.endsWith('.js')) expect(gz.length).toBeLessThanOrEqual(30 * 1024);
    }
    expect((await t.call('GET', '/assets/book-NOPE.js')).status).toBe(404);
    expect(await (await t.call('GET', '/assets/licenses.txt')).text()).toContain('preact');
  });
});

describe('/b/{token}', () => {
  it('is the attendee’s page for a live token (no-store, the link’s slug for rescheduling)', async () => {
    const { token } = await book('intro-call');
    const res = await t.call('GET', `/b/${token}`, { headers: HTML });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(frameAncestors(res)).toBe('*');
    const html = await res.text();
    expect(html).toMatch(/<script type="module" src="\/assets\/manage-[A-Z0-9]+\.js"><\/script>/);
    expect(html).toContain('{"slug":"intro-call"}');
    expect(html).not.toContain(token);
  });

  it('is 404 for an unknown token and 410 once the booking’s link has expired; problem+json for non-browsers', async () => {
    const { token, id } = await book('intro-call');
    // The real token with its last character changed (to another one, whatever it was).
    const altered = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of ['x'.repeat(43), 'short', altered]) {
      const page = await t.call('GET', `/b/${bad}`, { headers: HTML });
      expect(page.status, bad).toBe(404);
      expect(await page.text()).toContain('<h1>Booking link not valid</h1>');
    }
    const ago = Date.now() - 40 * 86_400_000;
    await t.ctx.db
      .updateTable('bookings')
      .set({ start_time: new Date(ago), end_time: new Date(ago + 1_800_000) })
      .where('id', '=', id)
      .execute();
    const page = await t.call('GET', `/b/${token}`, { headers: HTML });
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('<h1>Booking link expired</h1>');
    const api = await t.call('GET', `/b/${token}`);
    expect(api.status).toBe(410);
    expect(await api.json()).toMatchObject({ status: 410, type: expect.stringMatching(/\/errors\/gone$/) });
  });
});

describe('/p/{token}, /w/{token}, /invitations/{token}', () => {
  it('are 404 pages without script for unknown or malformed tokens; problem+json for non-browsers', async () => {
    const cases: [string, string][] = [
      ['p', 'Proposal link not valid'],
      ['w', 'Waitlist link not valid'],
      ['invitations', 'Invitation link not valid'],
    ];
    for (const [prefix, title] of cases) {
      for (const bad of ['x'.repeat(43), 'short']) {
        const page = await t.call('GET', `/${prefix}/${bad}`, { headers: HTML });
        expect(page.status, `${prefix}/${bad}`).toBe(404);
        expect(page.headers.get('referrer-policy')).toBe('no-referrer');
        expect(page.headers.get('cache-control')).toBe('no-store');
        expect(frameAncestors(page)).toBe("'none'");
        const html = await page.text();
        expect(html).toContain(`<h1>${title}</h1>`);
        expect(html).not.toContain('<script');
        const api = await t.call('GET', `/${prefix}/${bad}`);
        expect(api.status).toBe(404);
        expect(api.headers.get('content-type')).toContain('application/problem+json');
      }
    }
  });

  it('/w/ shows a held offer (inline, no ids, no-store), and is 410 once the hold has ended', async () => {
    const from = new Date().toISOString();
    const to = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const slots = await (
      await t.call('GET', `/v1/public/links/intro-call/availability?from=${from}&to=${to}`)
    ).json();
    const start = Date.parse(slots.slots[1].start);
    const made = await t.call('POST', '/v1/public/links/intro-call/bookings', {
      body: { customer_name: 'Bob', customer_email: 'bob@example.com', start_time: slots.slots[1].start },
    });
    const { booking } = await made.json();
    const joined = await t.call('POST', '/v1/public/links/intro-call/waitlist', {
      body: {
        customer_name: 'Wendy',
        customer_email: 'wendy@example.com',
        preferred_from: new Date(start - 3_600_000).toISOString(),
        preferred_to: new Date(start + 7_200_000).toISOString(),
      },
    });
    expect(joined.status).toBe(201);
    expect((await t.call('DELETE', `/v1/bookings/${booking.id}`, { token: key })).status).toBe(200);
    await t.ctx.jobs.drain();
    const mail = await t.ctx.db
      .selectFrom('mail_outbox')
      .select('text_body')
      .where('to_address', '=', 'wendy@example.com')
      .executeTakeFirstOrThrow();
    const token = /\/w\/([A-Za-z0-9_-]{43})/.exec(mail.text_body)![1]!;
    const res = await t.call('GET', `/w/${token}`, { headers: HTML });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toMatch(/<script type="module" src="\/assets\/claim-[A-Z0-9]+\.js"><\/script>/);
    expect(html).toContain('"customer_name":"Wendy"');
    expect(html).toContain(`"start":"${new Date(start).toISOString()}"`);
    expect(html).not.toContain('wendy@example.com');
    expect(html).not.toMatch(/wl_|host_|"id"/);
    await t.ctx.db
      .updateTable('waitlist_entries')
      .set({ offer_expires_at: new Date(Date.now() - 1000) })
      .where('customer_email', '=', 'wendy@example.com')
      .execute();
    const gone = await t.call('GET', `/w/${token}`, { headers: HTML });
    expect(gone.status).toBe(410);
    expect(await gone.text()).toContain('<h1>Offer expired</h1>');
  });
});

describe('the embed', () => {
  it('/embed.js is one classic script: JavaScript, nosniff, cached briefly with an ETag (304), gzipped, no eval', async () => {
    const res = await t.call('GET', '/embed.js', { headers: { 'accept-encoding': 'identity' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300, stale-while-revalidate=86400');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(res.headers.get('content-security-policy')).toBeNull();
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    const js = await res.text();
    expect(js).toContain('kairos:v1:init');
    expect(js).not.toMatch(/\beval\(|new Function|setAttribute\("style"|\.innerHTML/);
    expect(js).not.toMatch(/^export |^import /m);
    expect(Buffer.byteLength(js)).toBeLessThan(12 * 1024);
    const again = await t.call('GET', '/embed.js', { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
  });

  it('a page with an embed’s publishable key may be framed by that key’s domains only; a key not good for the link is a 403 page', async () => {
    const create = async (token: string, body: Record<string, unknown>) =>
      (await (await t.call('POST', '/v1/api-keys', { token, body })).json()).api_key;
    const locked = await create(key, {
      name: 'Shop',
      key_type: 'publishable',
      allowed_domains: ['shop.test'],
    });
    const open = await create(key, { name: 'Anywhere', key_type: 'publishable' });
    const secret = await create(key, { name: 'Server' });
    const other = await t.account();
    const foreign = await create(other.key, {
      name: 'Theirs',
      key_type: 'publishable',
      allowed_domains: ['evil.test'],
    });
    const page = (k: string) =>
      t.call('GET', `/book/intro-call?embed=1&theme=dark&key=${encodeURIComponent(k)}`, { headers: HTML });
    const res = await page(locked.key);
    expect(res.status).toBe(200);
    expect(frameAncestors(res)).toBe("'self' shop.test:* *.shop.test:*");
    const html = await res.text();
    expect(html).toContain('<html lang="en" class="embedded theme-dark">');
    expect(html).not.toContain('slots-preload'); // its requests carry the key: a preload would not match
    expect(frameAncestors(await page(open.key))).toBe('*');
    for (const bad of [secret.key, foreign.key, 'svc_pk_live_nope']) {
      const refused = await page(bad);
      expect(refused.status).toBe(403);
      expect(frameAncestors(refused)).toBe("'none'");
      expect(await refused.text()).toContain('<h1>This page cannot be embedded with this key</h1>');
    }
    await t.call('DELETE', `/v1/api-keys/${locked.id}`, { token: key });
    expect((await page(locked.key)).status).toBe(403);
    await t.call('DELETE', `/v1/api-keys/${open.id}`, { token: key });
  });

  it('the key’s Origin rule: foreign origins are refused, Kairos’s own pages (the iframe) are not', async () => {
    const pk = (
      await (
        await t.call('POST', '/v1/api-keys', {
          token: key,
          body: { name: 'Shop', key_type: 'publishable', allowed_domains: ['shop.test'] },
        })
      ).json()
    ).api_key;
    const path = '/v1/public/links/intro-call';
    const asOrigin = (origin: string) => t.call('GET', path, { token: pk.key, headers: { origin } });
    expect((await asOrigin('https://evil.test')).status).toBe(403);
    expect((await asOrigin('https://www.shop.test')).status).toBe(200);
    expect((await asOrigin(new URL(t.url).origin)).status).toBe(200);
    await t.call('DELETE', `/v1/api-keys/${pk.id}`, { token: key });
  });
});

describe('logs', () => {
  it('name the route of a page, never its token', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const database = await createTestDatabase();
    const masterKey = randomBytes(32).toString('base64');
    const config = {
      ...loadConfig({ DATABASE_URL: database.url, KAIROS_MASTER_KEY: masterKey, LOG_LEVEL: 'info' }),
      port: 0,
      host: '127.0.0.1',
    };
    const pool = createPool(database.url, 4);
    const db = createDb(pool);
    const runtime = await startRuntime({
      config,
      log: { info: () => {}, warn: () => {}, error: () => {} },
      httpLogger: pino({ level: 'info' }, sink),
      store: { db, pool, url: database.url, masterKey },
      workers: false,
      listen: true,
    });
    try {
      const token = randomBytes(32).toString('base64url');
      for (const path of [
        `/b/${token}`,
        `/b/${token}?x=1`,
        `/w/${token}`,
        `/p/${token}`,
        `/invitations/${token}`,
        `/book/${token.slice(0, 20)}?embed=1&key=svc_pk_live_${token}`,
      ]) {
        await fetch(`${runtime.url}${path}`, { headers: HTML });
      }
      // Each access line is written once its answer has gone out: wait for all six.
      const accessLines = () => lines.filter((l) => l.includes('"msg":"request"')).length;
      await waitUntil('an access line per page request', () => accessLines() >= 6);
      const log = lines.join('');
      expect(log).toContain('"route":"/b/:token"');
      expect(log).toContain('"route":"/p/:token"');
      expect(log).toContain('"route":"/invitations/:token"');
      expect(log).not.toContain(token);
      expect(log).not.toContain(token.slice(0, 20));
    } finally {
      await runtime.close();
      await db.destroy();
      await database.drop();
    }
  });
});
