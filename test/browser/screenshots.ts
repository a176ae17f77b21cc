/**
 * `npm run screenshots`: pictures of every page Kairos serves to people, at desktop (1280 px) and
 * phone (390 px) widths, into docs/screenshots/ (the console's pages: test/browser/console-screenshots.ts;
 * `npm run screenshots -- console` takes those alone). A throwaway embedded store and server with a clock
 * that stands still (Monday 2 March 2026, 08:00 UTC), and the browser's clock set to the same
 * instant, so every run draws the same pages. Needs Chromium (test/helpers/browser.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { benchDatabase, REPO } from '../../bench/lib.js';
import { loadConfig } from '../../src/config.js';
import { createDb, createPool, migrate } from '../../src/db/store.js';
import { FakeClock } from '../../src/platform/clock.js';
import { startRuntime } from '../../src/runtime.js';
import type { Json } from '../helpers/app.js';
import { CHROMIUM_INSTALL_HINT, chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { consoleData, consoleSetupShots, consoleShots, type ShotKit } from './console-screenshots.js';

const NOW = '2026-03-02T08:00:00.000Z';
const OUT = join(REPO, 'docs', 'screenshots');
/** `console`: the console's pictures only (the same data is made; the other pages are not taken). */
const ONLY_CONSOLE = process.argv[2] === 'console';
const WIDTHS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } } as const;

if (!chromiumAvailable()) {
  console.error(CHROMIUM_INSTALL_HINT);
  process.exit(1);
}

// An empty calendar feed: proposals and polls need their requester's calendar connected.
const feed = createServer((_req, res) =>
  res
    .writeHead(200, { 'content-type': 'text/calendar' })
    .end('BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//shots//EN\r\nEND:VCALENDAR\r\n'),
);
await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
const feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/cal.ics`;

const store = await benchDatabase('screenshots');
const masterKey = randomBytes(32).toString('base64');
const config = {
  ...loadConfig({
    DATABASE_URL: store.url,
    KAIROS_MASTER_KEY: masterKey,
    LOG_LEVEL: 'silent',
    KAIROS_ALLOW_PRIVATE_NETWORK: 'true',
  }),
  port: 0,
  host: '127.0.0.1',
};
const pool = createPool(store.url, 5);
const db = createDb(pool);
await migrate(pool);
const runtime = await startRuntime({
  config,
  log: { info: () => {}, warn: () => {}, error: () => {} },
  store: { db, pool, url: store.url, masterKey },
  clock: new FakeClock(NOW),
  workers: false,
  listen: true,
  baseUrlFromAddress: true,
});
const base = runtime.url as string;
let browser: Browser | null = null;

async function call(method: string, path: string, key: string | null, body?: unknown): Promise<Json> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json: Json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function shot(page: Page, name: string, width: keyof typeof WIDTHS): Promise<void> {
  const file = join(OUT, `${name}-${WIDTHS[width].width}.png`);
  await page.screenshot({ path: file, fullPage: width === 'phone' });
  console.log(`${file.slice(REPO.length + 1)}  ${Math.round(statSync(file).size / 1024)} KB`);
}

/** A user with a password and a session (and an empty ICS calendar when asked). */
async function user(name: string, email: string, calendar: boolean): Promise<{ id: string; token: string }> {
  const acc = await runtime.modules.accounts.createAccount({
    name,
    plan: 'enterprise',
    rateLimitPerHour: 1_000_000,
  });
  await runtime.modules.accounts.createUser({
    accountId: acc.account.id,
    email,
    password: 'correct horse battery',
    name,
  });
  const { session } = await call('POST', '/v1/sessions', null, { email, password: 'correct horse battery' });
  if (calendar) await call('POST', '/v1/calendars/ics', session.token, { url: feedUrl });
  return { id: session.user.id, token: session.token };
}

/** The last link under `path` mailed to `to` (the outbox keeps every mail's text). */
async function mailed(to: string, path: string): Promise<string> {
  await runtime.jobs.drain();
  const rows = await db
    .selectFrom('mail_outbox')
    .select('text_body')
    .where('to_address', '=', to)
    .orderBy('seq', 'desc')
    .execute();
  for (const r of rows) {
    const m = new RegExp(`${path}[A-Za-z0-9_-]{43}`).exec(r.text_body);
    if (m) return `${base}${m[0]}`;
  }
  throw new Error(`no ${path} link mailed to ${to}`);
}

const at = (iso: string, minutes = 30) => ({
  start: new Date(iso).toISOString(),
  end: new Date(Date.parse(iso) + minutes * 60_000).toISOString(),
});

// The embedding site of the embed's picture: another origin, loading /embed.js.
const site = createServer((req, res) => {
  if ((req.url ?? '').startsWith('/site.css')) {
    res
      .writeHead(200, { 'content-type': 'text/css' })
      .end(
        'body{margin:0;padding:24px;font:16px system-ui,sans-serif;background:#0b1220;color:#e8eaed}h1{font-size:1.4rem;margin:0 0 16px}',
      );
    return;
  }
  if ((req.url ?? '').startsWith('/site.js')) {
    res
      .writeHead(200, { 'content-type': 'text/javascript' })
      .end(
        "window.Kairos.v1.inline('#booking', { link: 'intro-call', theme: 'dark', brand: '#0f766e', hideDetails: false });",
      );
    return;
  }
  res
    .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    .end(`<!doctype html><html lang="en"><head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme Physio</title>
<link rel="stylesheet" href="/site.css"></head><body><h1>Acme Physio: book a first visit</h1><div id="booking"></div>
<script src="${base}/embed.js"></script><script src="/site.js"></script></body></html>`);
});
await new Promise<void>((resolve) => site.listen(0, resolve));
const siteUrl = `http://localhost:${(site.address() as AddressInfo).port}/`;

const kit: ShotKit = {
  base,
  now: NOW,
  widths: WIDTHS,
  shot,
  call,
  mailed,
  drain: () => runtime.jobs.drain(),
};
let closeConsoleData = () => {};

try {
  mkdirSync(OUT, { recursive: true });
  browser = await launchChromium();
  // The console's setup page, while the server still has no account.
  const setupPath = await runtime.modules.console.setupLink();
  if (setupPath === null) throw new Error('no setup link: the store already has an account');
  await consoleSetupShots(browser, kit, setupPath);

  const created = await runtime.modules.accounts.createAccount({
    name: 'Acme',
    plan: 'enterprise',
    rateLimitPerHour: 1_000_000,
  });
  const key = created.api_key.key;
  const host = await call('POST', '/v1/hosts', key, {
    display_name: 'Grace Hopper',
    timezone: 'Europe/London',
  });
  const link = await call('POST', '/v1/booking-links', key, {
    slug: 'intro-call',
    title: 'Intro call',
    description: 'Half an hour to see whether we can help: bring your questions.',
    host_ids: [host.host.principal_id],
    durations: [30, 60],
    duration_minutes: 30,
    questions: [
      { id: 'company', label: 'Company', type: 'text', required: true },
      {
        id: 'topic',
        label: 'What would you like to talk about?',
        type: 'select',
        required: false,
        options: ['Pricing', 'Integration', 'Something else'],
      },
    ],
  });
  const slug: string = link.booking_link.slug;

  // A standard proposal and an open poll from Lin; a waitlist offer for Wendy; an invitation for Sam.
  const lin = await user('Lin Okafor', 'lin@example.com', true);
  const sam = await user('Sam Rivera', 'sam@example.com', false);
  await call('POST', '/v1/consents', sam.token, { grantee_id: lin.id, scopes: ['booking:propose'] });
  await call('POST', '/v1/proposals', lin.token, {
    mode: 'standard',
    participant_ids: [sam.id],
    title: 'Quarterly review',
    message: 'Two options next week; propose others if neither works.',
    slots: [at('2026-03-04T10:00:00Z', 60), at('2026-03-05T14:00:00Z', 60)],
  });
  const proposalUrl = await mailed('sam@example.com', '/p/');
  const poll = await call('POST', '/v1/proposals', lin.token, {
    mode: 'poll',
    title: 'Team dinner',
    message: 'Vote for the evening that suits you.',
    slots: [
      at('2026-03-05T18:00:00Z', 120),
      at('2026-03-06T18:00:00Z', 120),
      at('2026-03-09T18:00:00Z', 120),
    ],
  });
  for (const [name, email, i] of [
    ['Ana', 'ana@example.com', 0],
    ['Ben', 'ben@example.com', 1],
    ['Cy', 'cy@example.com', 1],
  ] as const) {
    await call('POST', `/v1/proposals/${poll.proposal.id}/response`, null, {
      action: 'accept',
      token: poll.magic_link_url.split('/').pop(),
      selected_slot_id: poll.proposal.slots[i].id,
      voter_name: name,
      voter_email: email,
    });
  }
  const taken = await call('POST', `/v1/public/links/${slug}/bookings`, null, {
    customer_name: 'Bob',
    customer_email: 'bob@example.com',
    start_time: '2026-03-03T10:00:00.000Z',
    answers: { company: 'Bob & Co' },
  });
  await call('POST', `/v1/public/links/${slug}/waitlist`, null, {
    customer_name: 'Wendy',
    customer_email: 'wendy@example.com',
    preferred_from: '2026-03-03T09:00:00.000Z',
    preferred_to: '2026-03-03T12:00:00.000Z',
  });
  await call('DELETE', `/v1/bookings/${taken.booking.id}`, key);
  const claimUrl = await mailed('wendy@example.com', '/w/');
  await call('POST', '/v1/network/invitations', lin.token, {
    invitee_email: 'sam@example.com',
    invitee_name: 'Sam',
    relationship_type: 'colleague',
    message: 'Let us share free time for the review cycle.',
  });
  const invitationUrl = await mailed('sam@example.com', '/invitations/');

  // A week of the key's traffic for the console's usage chart: busier in working hours, a few
  // requests refused over the limit one afternoon (the recorder keeps hourly buckets).
  const hour = 3_600_000;
  await db
    .insertInto('api_key_usage')
    .values(
      Array.from({ length: 167 }, (_, i) => {
        const at = Date.parse(NOW) - (i + 1) * hour;
        const h = new Date(at).getUTCHours();
        const day = new Date(at).getUTCDay();
        const working = day > 0 && day < 6 && h >= 8 && h < 18;
        const refused = i === 20 ? 12 : 0;
        const requests = (working ? 40 : 4) + ((i * 37) % 23) + refused;
        return {
          key_id: created.api_key.id,
          bucket: new Date(at).toISOString(),
          requests,
          rate_limited: refused,
          s2xx: requests - refused - 1,
          s4xx: 1 + refused,
          s5xx: 0,
          last_used_at: new Date(at + 50 * 60_000).toISOString(),
        };
      }),
    )
    .execute();
  closeConsoleData = await consoleData(
    kit,
    {
      accountId: created.account.id,
      key,
      linkSlug: slug,
      feedUrl,
      sam: { ...sam, email: 'sam@example.com' },
    },
    (input) => runtime.modules.accounts.createUser(input),
  );

  for (const width of ONLY_CONSOLE ? [] : (['desktop', 'phone'] as const)) {
    const context = await browser.newContext({
      viewport: WIDTHS[width],
      timezoneId: 'Europe/London',
      locale: 'en-GB',
    });
    const page = await context.newPage();
    await page.clock.setFixedTime(NOW);

    await page.goto(`${base}/book/${slug}`);
    await page.locator('.slot').first().waitFor();
    await shot(page, 'book', width);

    await page.locator('.slot').nth(3).click();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@example.com');
    await page.getByLabel('Company').fill('Analytical Engines Ltd');
    await shot(page, 'book-form', width);

    await page.getByRole('button', { name: 'Book' }).click();
    await page.getByRole('heading', { name: 'You are booked' }).waitFor();
    await shot(page, 'book-confirmed', width);

    const manage = await page.getByRole('link', { name: 'Reschedule or cancel' }).getAttribute('href');
    await page.goto(manage as string);
    await page.getByText('Confirmed').waitFor();
    await shot(page, 'manage', width);

    await page.getByRole('button', { name: 'Reschedule' }).click();
    await page.locator('.slot').nth(6).click();
    await shot(page, 'manage-reschedule', width);

    await page.getByRole('button', { name: 'Keep the current time' }).click();
    await page.getByRole('button', { name: 'Cancel booking' }).click();
    await page.getByLabel(/Reason/).fill('Something came up, sorry.');
    await shot(page, 'manage-cancel', width);

    await page.goto(`${base}/b/${'x'.repeat(43)}`);
    await shot(page, 'not-found', width);

    await page.goto(proposalUrl);
    await page.locator('input[name="accept"]').first().waitFor();
    await shot(page, 'proposal', width);
    await page.getByRole('button', { name: 'Propose other times' }).click();
    await shot(page, 'proposal-counter', width);

    await page.goto(poll.magic_link_url);
    await page.locator('input[name="vote"]').nth(1).check();
    await page.getByLabel('Your name').fill('Dee');
    await shot(page, 'poll', width);

    await page.goto(claimUrl);
    await page.getByRole('button', { name: /^Claim / }).waitFor();
    await shot(page, 'claim', width);

    await page.goto(invitationUrl);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await shot(page, 'invitation', width);

    await page.goto(siteUrl);
    await page.frameLocator('#booking iframe').locator('.slot').first().waitFor();
    await page.waitForTimeout(200); // the iframe's height follows its page
    await shot(page, 'embed', width);
    await context.close();
  }

  await consoleShots(browser, kit);
} finally {
  closeConsoleData();
  await browser?.close();
  await runtime.close();
  site.close();
  feed.close();
  await db.destroy();
  await store.stop();
}
process.exit(0);
