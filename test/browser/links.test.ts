/**
 * The pages behind the other mailed links and the embed, in a real browser
 * (docs/api.md#e-mail-and-pages): vote on `/p/{token}` in an open poll, accept a standard proposal
 * there; claim a held waitlist offer on `/w/{token}`; sign in and accept a network invitation on
 * `/invitations/{token}`; book through `/embed.js` on a page served from another origin under a strict
 * CSP, with a domain-locked publishable key, and receive `kairos:v1:booking_succeeded` there; a page
 * on an origin outside the key's domains gets no booking page (frame-ancestors) and no booking (the
 * key's Origin rule). An axe-core scan of each page with no serious or critical violation.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, launchChromium, openPage, seriousViolations } from '../helpers/browser.js';
import { HOUR } from '../../src/lib/time.js';

const run = chromiumAvailable();

let t: TestApp;
let browser: Browser;
let key: string;
let hostId: string;
let feed: Server;
let feedUrl: string;
let site: Server;
let sitePort: number;
const ALWAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({
  day,
  start: '00:00',
  end: '24:00',
}));

async function ok(res: Response, status = 201): Promise<Json> {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body;
}

interface User {
  id: string;
  token: string;
  email: string;
}

let users = 0;
async function user(opts: { calendar?: boolean } = {}): Promise<User> {
  const acc = await t.account();
  const email = `page-user${++users}-${Date.now()}@example.com`;
  await t.ctx.modules.accounts.createUser({
    accountId: acc.id,
    email,
    password: 'correct horse battery',
  });
  const { session } = await ok(
    await t.call('POST', '/v1/sessions', { body: { email, password: 'correct horse battery' } }),
  );
  const u = { id: session.user.id, token: session.token, email };
  if (opts.calendar) {
    await ok(await t.call('POST', '/v1/calendars/ics', { token: u.token, body: { url: feedUrl } }));
  }
  return u;
}

/** The last link of a kind (`/p/`, `/w/`, `/invitations/`) mailed to an address (the outbox keeps the text). */
async function mailedToken(to: string, path: string): Promise<string> {
  await t.ctx.jobs.drain();
  const rows = await t.ctx.db
    .selectFrom('mail_outbox')
    .select('text_body')
    .where('to_address', '=', to)
    .orderBy('seq', 'desc')
    .execute();
  for (const r of rows) {
    const m = new RegExp(`${path}([A-Za-z0-9_-]{43})`).exec(r.text_body);
    if (m) return m[1]!;
  }
  throw new Error(`no ${path} link mailed to ${to}`);
}

/** A whole hour `hours` from now. */
function hourFromNow(hours: number, minutes = 30): { start: string; end: string } {
  const start = Math.ceil((Date.now() + hours * HOUR) / HOUR) * HOUR;
  return { start: new Date(start).toISOString(), end: new Date(start + minutes * 60_000).toISOString() };
}

async function expectAccessible(page: Parameters<typeof seriousViolations>[0], state: string): Promise<void> {
  const violations = await seriousViolations(page);
  expect(violations, `${state}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
}

/** The embedding site: a page on another origin, under a strict CSP, that loads /embed.js. */
function hostPage(kairos: string, slug: string, key: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme Physio</title></head>
<body><main><h1>Acme Physio</h1><button type="button" data-kairos-link="${slug}" data-kairos-key="${key}">Book in a popup</button>
<div id="booking"></div></main>
<script src="${kairos}/embed.js"></script><script src="/host.js"></script></body></html>`;
}

const esc = (v: string) => v.replace(/[^A-Za-z0-9_-]/g, '');

const HOST_JS = `
const q = new URLSearchParams(location.search);
window.kairosEvents = [];
for (const name of ['ready', 'slot_selected', 'booking_succeeded', 'booking_failed'])
  window.Kairos.v1.on(name, (e) => window.kairosEvents.push({ type: e.type, data: e.data }));
window.Kairos.v1.inline('#booking', {
  link: q.get('slug'),
  key: q.get('key'),
  theme: 'dark',
  brand: '#0f766e',
  prefill: { name: 'Ada Lovelace', email: 'ada.embed@example.com', notes: 'From the site', metadata: { campaign: 'spring' } },
});
window.Kairos.v1.floatingButton({ link: q.get('slug'), key: q.get('key'), label: 'Book now' });
`;

describe.skipIf(!run)('token pages and the embed in Chromium', () => {
  beforeAll(async () => {
    feed = createServer((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/calendar' })
        .end('BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nEND:VCALENDAR\r\n'),
    );
    await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
    feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/cal.ics`;
    [t, browser] = await Promise.all([
      startTestApp({ env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' } }),
      launchChromium(),
    ]);
    const kairos = t.url;
    site = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://site');
      const path = url.pathname;
      if (path === '/host.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(HOST_JS);
        return;
      }
      res
        .writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          // Strict: no inline script or style; Kairos only as a script, a frame and (the test's own
          // direct call) a fetch.
          'content-security-policy': `default-src 'none'; script-src 'self' ${kairos}; frame-src ${kairos}; connect-src ${kairos}; style-src 'self'`,
        })
        .end(
          hostPage(kairos, esc(url.searchParams.get('slug') ?? ''), esc(url.searchParams.get('key') ?? '')),
        );
    });
    // Every interface: the site is reached as localhost (allowed) and as 127.0.0.1 (not allowed).
    await new Promise<void>((resolve) => site.listen(0, resolve));
    sitePort = (site.address() as AddressInfo).port;
    key = (await t.account()).key;
    const h = await ok(
      await t.call('POST', '/v1/hosts', {
        token: key,
        body: { display_name: 'Grace Hopper', timezone: 'UTC' },
      }),
    );
    hostId = h.host.principal_id;
    await ok(
      await t.call('PUT', `/v1/principals/${hostId}/schedule`, {
        token: key,
        body: {
          timezone: 'UTC',
          weekly: ALWAYS,
          overrides: [],
          minimum_notice_minutes: 0,
          max_days_ahead: 60,
        },
      }),
      200,
    );
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (feed ? feed.close(() => resolve()) : resolve()));
  });

  it('votes on /p/{token} in an open poll (name and e-mail), then shows the vote; a second vote by the address is refused', async () => {
    const requester = await user({ calendar: true });
    const slots = [hourFromNow(50), hourFromNow(74), hourFromNow(98)];
    const made = await ok(
      await t.call('POST', '/v1/proposals', {
        token: requester.token,
        body: { mode: 'poll', title: 'Team dinner', message: 'Pick what suits you.', slots },
      }),
    );
    const url: string = made.magic_link_url;
    expect(url).toMatch(/\/p\/[A-Za-z0-9_-]{43}$/);
    const { context, page, csp } = await openPage(browser, 'America/New_York');
    const res = await page.goto(url);
    expect(res?.status()).toBe(200);
    expect(res!.headers()['referrer-policy']).toBe('no-referrer');
    expect(res!.headers()['cache-control']).toBe('no-store');
    expect(res!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.getByRole('heading', { name: 'Team dinner' }).waitFor();
    // The times in the visitor's zone.
    const ny = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'America/New_York',
      hour: 'numeric',
      minute: '2-digit',
    });
    await page
      .getByText(ny.format(new Date(slots[1]!.start)), { exact: false })
      .first()
      .waitFor();
    await expectAccessible(page, 'poll');
    await page.locator('input[name="vote"]').nth(1).check();
    await page.getByLabel('Your name').fill('Ada Lovelace');
    await page.getByLabel('Your e-mail').fill('ada.poll@example.com');
    await page.getByRole('button', { name: 'Vote' }).click();
    await page.getByText(/your vote for .* is counted/).waitFor();
    await page.getByText('1 vote', { exact: true }).waitFor();
    await expectAccessible(page, 'voted');
    const { proposal } = await ok(
      await t.call('GET', `/v1/proposals/${made.proposal.id}`, { token: requester.token }),
      200,
    );
    expect(proposal.slots.map((s: Json) => s.votes)).toEqual([0, 1, 0]);

    // The same address again, in a new visit: refused with a clear reason.
    await page.goto(url);
    await page.locator('input[name="vote"]').first().check();
    await page.getByLabel('Your name').fill('Ada again');
    await page.getByLabel('Your e-mail').fill('ADA.poll@example.com');
    await page.getByRole('button', { name: 'Vote' }).click();
    await page.getByText('This e-mail address has already voted in this poll.').waitFor();
    expect(csp).toEqual([]);
    // Past its expires_at the link is a clear 410 page, never a stack trace.
    await t.ctx.db
      .updateTable('proposals')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', made.proposal.id)
      .execute();
    const gone = await page.goto(url);
    expect(gone?.status()).toBe(410);
    await page.getByRole('heading', { name: 'Proposal expired' }).waitFor();
    await expectAccessible(page, '410 page');
    await context.close();
  });

  it('accepts a standard proposal on /p/{token}: picks one of two times; both parties are booked; the used link shows the answer', async () => {
    const requester = await user({ calendar: true });
    const participant = await user();
    await ok(
      await t.call('POST', '/v1/consents', {
        token: participant.token,
        body: { grantee_id: requester.id, scopes: ['booking:propose'] },
      }),
    );
    const slots = [hourFromNow(30), hourFromNow(54)];
    const made = await ok(
      await t.call('POST', '/v1/proposals', {
        token: requester.token,
        body: { mode: 'standard', participant_ids: [participant.id], slots, title: 'Quarterly review' },
      }),
    );
    const token = await mailedToken(participant.email, '/p/');
    const { context, page, csp } = await openPage(browser, 'Asia/Tokyo');
    await page.goto(`${t.url}/p/${token}`);
    await page.getByRole('heading', { name: 'Quarterly review' }).waitFor();
    await expectAccessible(page, 'standard proposal');
    await page.getByRole('button', { name: 'Propose other times' }).click();
    await page.getByLabel('Day').waitFor();
    await expectAccessible(page, 'counter form');
    await page.getByRole('button', { name: 'Decline' }).first().click();
    await expectAccessible(page, 'decline form');
    await page.getByRole('button', { name: 'Accept', exact: true }).click();
    await page.locator('input[name="accept"]').nth(1).check();
    await page.getByRole('button', { name: 'Accept this time' }).click();
    await page.getByText(/Everyone has accepted: the meeting is booked/).waitFor();
    await expectAccessible(page, 'accepted');
    const { proposal } = await ok(
      await t.call('GET', `/v1/proposals/${made.proposal.id}`, { token: requester.token }),
      200,
    );
    expect(proposal.status).toBe('accepted');
    expect(proposal.slots.find((s: Json) => s.is_selected).start).toBe(slots[1]!.start);

    // The link again: what was answered, no form.
    await page.goto(`${t.url}/p/${token}`);
    await page.getByText('You accepted this proposal.').waitFor();
    await page.getByText(/Everyone accepted/).waitFor();
    expect(await page.getByRole('button', { name: 'Accept this time' }).count()).toBe(0);
    expect(csp).toEqual([]);
    await context.close();
  });

  it('claims a held waitlist offer on /w/{token}; the used link is a 410 page', async () => {
    const slug = `wl-${Date.now().toString(36)}`;
    await ok(
      await t.call('POST', '/v1/booking-links', {
        token: key,
        body: { slug, title: 'Physio session', host_ids: [hostId] },
      }),
    );
    const at = hourFromNow(30);
    const booked = await ok(
      await t.call('POST', `/v1/public/links/${slug}/bookings`, {
        body: { customer_name: 'Bob', customer_email: 'bob@example.com', start_time: at.start },
      }),
    );
    await ok(
      await t.call('POST', `/v1/public/links/${slug}/waitlist`, {
        body: {
          customer_name: 'Ada Lovelace',
          customer_email: 'ada.wait@example.com',
          preferred_from: new Date(Date.parse(at.start) - HOUR).toISOString(),
          preferred_to: new Date(Date.parse(at.end) + HOUR).toISOString(),
        },
      }),
    );
    await ok(await t.call('DELETE', `/v1/bookings/${booked.booking.id}`, { token: key }), 200);
    const token = await mailedToken('ada.wait@example.com', '/w/');
    const { context, page, csp } = await openPage(browser, 'Europe/Berlin');
    const res = await page.goto(`${t.url}/w/${token}`);
    expect(res?.status()).toBe(200);
    expect(res!.headers()['referrer-policy']).toBe('no-referrer');
    await page.getByRole('heading', { name: /A time freed up for you, Ada Lovelace/ }).waitFor();
    await expectAccessible(page, 'offer');
    await page.getByRole('button', { name: /^Claim / }).click();
    await page.getByRole('heading', { name: 'You are booked' }).waitFor();
    await expectAccessible(page, 'claimed');
    const list = await ok(await t.call('GET', '/v1/bookings', { token: key }), 200);
    expect(list.bookings.find((b: Json) => b.customer_email === 'ada.wait@example.com')).toMatchObject({
      status: 'confirmed',
      start_time: at.start,
    });
    const again = await page.goto(`${t.url}/w/${token}`);
    expect(again?.status()).toBe(410);
    await page.getByRole('heading', { name: 'Offer already claimed' }).waitFor();
    expect(csp).toEqual([]);
    await context.close();
  });

  it('accepts a network invitation on /invitations/{token} after signing in (a wrong address is told so)', async () => {
    const inviter = await user();
    const invitee = await user();
    const other = await user();
    await ok(
      await t.call('POST', '/v1/network/invitations', {
        token: inviter.token,
        body: { invitee_email: invitee.email, relationship_type: 'colleague', message: 'Let us meet' },
      }),
    );
    const token = await mailedToken(invitee.email, '/invitations/');
    const { context, page, csp } = await openPage(browser, 'UTC');
    const res = await page.goto(`${t.url}/invitations/${token}`);
    expect(res?.status()).toBe(200);
    expect(res!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.getByRole('heading', { name: /invites you to connect/ }).waitFor();
    await expectAccessible(page, 'invitation');
    // Signed in as someone else: the invitation says it is not theirs.
    await page.getByLabel('E-mail').fill(other.email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.getByText(/sent to another e-mail address/).waitFor();
    await page.getByLabel('E-mail').fill(invitee.email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: `Signed in as ${invitee.email}` }).waitFor();
    await expectAccessible(page, 'signed in');
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.getByRole('heading', { name: /You are connected with/ }).waitFor();
    // The session token stayed in the page's memory: nothing in storage, nothing in the address.
    const stored = await page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]');
    expect(stored).toEqual([0, 0, '']);
    const connections = await ok(await t.call('GET', '/v1/network', { token: invitee.token }), 200);
    expect(JSON.stringify(connections)).toContain(inviter.id);
    const used = await page.goto(`${t.url}/invitations/${token}`);
    expect(used?.status()).toBe(410);
    expect(csp).toEqual([]);
    await context.close();
  });

  it('books through /embed.js on another origin with a domain-locked publishable key and tells the host page; a foreign origin gets neither page nor booking', async () => {
    const slug = `embed-${Date.now().toString(36)}`;
    await ok(
      await t.call('POST', '/v1/booking-links', {
        token: key,
        body: { slug, title: 'Embedded intro', description: 'Thirty minutes.', host_ids: [hostId] },
      }),
    );
    const pk = (
      await ok(
        await t.call('POST', '/v1/api-keys', {
          token: key,
          body: { name: 'Site widget', key_type: 'publishable', allowed_domains: ['localhost'] },
        }),
      )
    ).api_key.key as string;
    const query = `?slug=${slug}&key=${encodeURIComponent(pk)}`;

    const { context, page, csp } = await openPage(browser, 'Europe/London');
    await page.goto(`http://localhost:${sitePort}/${query}`);
    const frame = page.frameLocator('#booking iframe');
    await frame.locator('.slot').first().waitFor();
    await expect
      .poll(() => page.evaluate('window.kairosEvents.map((e) => e.type)'))
      .toContain('kairos:v1:ready');
    // Auto-resize: the iframe took its page's height.
    await expect
      .poll(() => page.evaluate('document.querySelector("#booking iframe").style.height'))
      .not.toBe('640px');
    const inner = page.frames().find((f) => f.url().startsWith(`${t.url}/book/`))!;
    expect(await inner.evaluate('document.documentElement.className')).toContain('theme-dark');
    await expectAccessible(inner, 'embedded booking page (dark)');
    await frame.locator('.slot').first().click();
    // Prefilled by the host page (polled: reading an input's value does not wait for it).
    await expect.poll(() => frame.getByLabel('Name').inputValue()).toBe('Ada Lovelace');
    await expect.poll(() => frame.getByLabel('E-mail').inputValue()).toBe('ada.embed@example.com');
    await frame.getByRole('button', { name: 'Book' }).click();
    await frame.getByRole('heading', { name: 'You are booked' }).waitFor();
    await expect
      .poll(() => page.evaluate('window.kairosEvents.map((e) => e.type)'))
      .toContain('kairos:v1:booking_succeeded');
    const events = (await page.evaluate('window.kairosEvents')) as { type: string; data: Json }[];
    expect(events.map((e) => e.type)).toEqual([
      'kairos:v1:ready',
      'kairos:v1:slot_selected',
      'kairos:v1:booking_succeeded',
    ]);
    const succeeded = events[2]!.data;
    expect(succeeded.booking).toMatchObject({
      status: 'confirmed',
      title: 'Embedded intro',
      customer_email: 'ada.embed@example.com',
    });
    expect(succeeded.booking.manage_url).toBeUndefined();
    expect(succeeded.booking.checkout_url).toBeUndefined();
    expect(succeeded.metadata).toEqual({ campaign: 'spring' });
    const list = await ok(await t.call('GET', '/v1/bookings', { token: key }), 200);
    expect(list.bookings.find((b: Json) => b.customer_email === 'ada.embed@example.com')).toMatchObject({
      notes: 'From the site',
      metadata: { campaign: 'spring' },
    });
    // The popup: any element with data-kairos-link opens the page in a dialog; Escape closes it.
    await page.getByRole('button', { name: 'Book in a popup' }).click();
    const dialog = page.getByRole('dialog', { name: 'Book a time' });
    await dialog.frameLocator('iframe').locator('.slot').first().waitFor();
    // Focus stays in the dialog: leaving the booking page forwards comes back to Close, leaving Close
    // backwards goes into the booking page (the edges of the dialog pass focus on).
    const edges = await page.evaluate(`(() => {
      const d = document.querySelector('[role=dialog]');
      d.lastElementChild.focus();
      const afterLast = document.activeElement.getAttribute('aria-label');
      d.firstElementChild.focus();
      return { afterLast, afterFirst: document.activeElement.tagName };
    })()`);
    expect(edges).toEqual({ afterLast: 'Close', afterFirst: 'IFRAME' });
    // Escape pressed inside the booking page (another document) closes it too. (Dispatched in the
    // frame: a real key press whose handler removes the focused frame never completes in Playwright.)
    await dialog
      .frameLocator('iframe')
      .locator('body')
      .evaluate((body) =>
        body.ownerDocument.dispatchEvent(
          new body.ownerDocument.defaultView!.KeyboardEvent('keydown', { key: 'Escape' }),
        ),
      );
    await dialog.waitFor({ state: 'detached' });
    // The floating button opens the same dialog; Close shuts it and gives focus back to the button.
    await page.getByRole('button', { name: 'Book now' }).click();
    await dialog.frameLocator('iframe').locator('.slot').first().waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Book now');
    expect(csp).toEqual([]);
    await context.close();

    // The same page on an origin outside the key's domains: the browser refuses to show the booking
    // page (frame-ancestors), and a direct call with the key is refused (the Origin rule).
    const blocked = await openPage(browser, 'Europe/London');
    const refused: string[] = [];
    blocked.page.on('console', (m) => {
      if (/frame-ancestors/.test(m.text())) refused.push(m.text());
    });
    await blocked.page.goto(`http://127.0.0.1:${sitePort}/${query}`);
    await expect.poll(() => refused.length).toBeGreaterThan(0);
    const start = (
      await ok(
        await t.call(
          'GET',
          `/v1/public/links/${slug}/availability?from=${new Date().toISOString()}&to=${new Date(Date.now() + 5 * 86_400_000).toISOString()}`,
        ),
        200,
      )
    ).slots[0].start;
    const direct = await blocked.page.evaluate(
      async ([url, k, s]) => {
        try {
          const r = await fetch(url!, {
            method: 'POST',
            headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              customer_name: 'Mallory',
              customer_email: 'mallory@example.com',
              start_time: s,
            }),
          });
          return r.status;
        } catch {
          return 'blocked';
        }
      },
      [`${t.url}/v1/public/links/${slug}/bookings`, pk, start],
    );
    expect(direct).toBe('blocked');
    expect(await blocked.page.evaluate('window.kairosEvents.length')).toBe(0);
    const after = await ok(await t.call('GET', '/v1/bookings', { token: key }), 200);
    expect(after.bookings.some((b: Json) => b.customer_email === 'mallory@example.com')).toBe(false);
    await blocked.context.close();
  });
});
