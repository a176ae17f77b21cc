/**
 * The console (README.md, Console), in a real browser and over plain HTTP: a one-time setup link
 * creates the first account, its owner and its first secret key, shown once (and not after a
 * reload); sign out and in again; the overview's requests-per-hour chart and its table; a publishable
 * key for a domain; a key created with the keyboard alone; a key revoked after confirmation; a booking
 * link's questions edited (an error beside its field, reordered); a public booking on it listed in
 * Bookings, also filtered by link; an invitation to connect sent from the network page; axe-core finds
 * no serious or critical violation on any console page. Over HTTP: the link's token is random and stored hashed; the session is an httpOnly
 * SameSite=Strict cookie scoped to /console; a cross-site form post, a request from another port and
 * a request without the CSRF proof are refused; sign-out ends the session for the API too.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, launchChromium, openPage, seriousViolations } from '../helpers/browser.js';
import { serveCalendar, vcalendar } from '../helpers/ics.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const run = chromiumAvailable();
const PASSWORD = 'correct horse battery staple';

let t: TestApp;
let browser: Browser | undefined;
let receiver: Receiver;
/** The first account's first secret key, from the setup walk. */
let firstKey = '';

beforeAll(async () => {
  t = await startTestApp({
    workers: true,
    env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true', KAIROS_WEBHOOK_RETRY_SCHEDULE: '200ms' },
  });
  receiver = await startReceiver();
  if (run) browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await t?.close();
});

function cookieFrom(res: Response): string {
  const header = res.headers.get('set-cookie') ?? '';
  const m = /kairos_console=([^;]*)/.exec(header);
  if (!m?.[1]) throw new Error(`no console cookie in ${header}`);
  return m[1];
}

async function csrfOf(cookie: string): Promise<string> {
  const res = await fetch(`${t.url}/console/keys`, { headers: { cookie: `kairos_console=${cookie}` } });
  expect(res.status).toBe(200);
  const m = /<script type="application\/json" id="console-data">(.*?)<\/script>/s.exec(await res.text());
  return (JSON.parse(m?.[1] ?? '{}') as Json).csrf;
}

async function noSeriousViolations(page: Page, what: string): Promise<void> {
  const v = await seriousViolations(page);
  expect(v, `${what}: ${JSON.stringify(v, null, 1)}`).toEqual([]);
}

describe('console: getting in', () => {
  let setupPath: string;

  it('makes setup links of 256 random bits, stored only as their hash', async () => {
    setupPath = (await t.ctx.modules.console.setupLink()) as string;
    const token = new URL(setupPath, t.url).searchParams.get('token') ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await t.ctx.db.selectFrom('console_setup_tokens').select(['token_hash']).execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((r) => r.token_hash)).not.toContain(token);
  });

  it('serves every console page with a strict Content-Security-Policy', async () => {
    for (const path of ['/console/setup', '/console/sign-in']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
    }
    const keys = await fetch(`${t.url}/console/keys`, { redirect: 'manual' });
    expect(keys.status).toBe(303);
    expect(keys.headers.get('location')).toBe('/console/sign-in');
  });

  it('refuses a setup post from another origin, leaving the link usable', async () => {
    const token = new URL(setupPath, t.url).searchParams.get('token');
    const res = await fetch(`${t.url}/console/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: JSON.stringify({ token, account_name: 'Evil', email: 'evil@example.com', password: PASSWORD }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).type).toMatch(/\/errors\/forbidden$/);
    const state: Json = await (await fetch(`${t.url}/console/setup/state?token=${token}`)).json();
    expect(state.state).toBe('valid');
    expect(await t.ctx.modules.accounts.listAccounts()).toEqual([]);
  });

  it.skipIf(!run)(
    'walks setup → first key shown once (not after a reload) → sign out and in → a publishable key for a domain → revoke, with no serious axe violation',
    async () => {
      const { context, page, csp } = await openPage(browser as Browser, 'Europe/Berlin');
      try {
        await page.goto(`${t.url}${setupPath}`);
        await page.getByLabel('Business name').fill('Acme Physio');
        await page.getByLabel('Your e-mail').fill('owner@acme.example');
        await noSeriousViolations(page, 'setup');
        await page.getByLabel('Password', { exact: true }).fill('short');
        await page.getByRole('button', { name: 'Create the account' }).click();
        // The API's field error shows beside the field; the link is not used up by a refused form.
        await expect.poll(() => page.locator('#password-error').textContent()).toMatch(/10|characters/);
        await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await page.getByRole('button', { name: 'Create the account' }).click();
        const shown = page.locator('#first-key');
        await shown.waitFor();
        firstKey = await shown.inputValue();
        expect(firstKey).toMatch(/^svc_sk_/);
        const me = await t.call('GET', '/v1/me', { token: firstKey });
        expect(me.status).toBe(200);
        expect((await me.json()).account.name).toBe('Acme Physio');
        await noSeriousViolations(page, 'setup done');

        // Reloading (the address no longer has the token) and opening the link again show no key.
        await page.reload();
        await page.getByRole('heading', { name: 'Set up Kairos' }).waitFor();
        expect(await page.content()).not.toContain(firstKey);
        await page.goto(`${t.url}${setupPath}`);
        await page.getByText('This setup link was already used.').waitFor();
        expect(await page.content()).not.toContain(firstKey);

        // No credential is readable by the page: the cookie is httpOnly.
        expect(await page.evaluate('document.cookie')).toBe('');
        const cookies = await context.cookies();
        const session = cookies.find((c) => c.name === 'kairos_console');
        expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });

        await page.goto(`${t.url}/console`);
        await page.getByRole('heading', { name: 'Acme Physio' }).waitFor();
        // The overview: one usage row (the first key, with what is left of this hour), no booking, no failing webhook.
        const usage = page.locator('table.usage tbody tr');
        await usage.first().waitFor();
        expect(await usage.count()).toBe(1);
        await expect.poll(() => usage.first().textContent()).toMatch(/of \d+/);
        // The chart: one bar an hour (a day, then a week), its figures as a table for screen readers.
        const bars = page.locator('.chart svg g');
        expect(await bars.count()).toBeGreaterThanOrEqual(24);
        await expect.poll(() => page.locator('.chart figcaption').textContent()).toMatch(/[1-9]\d* in all/);
        await page.getByText('The figures as a table').click();
        expect(await page.locator('table.hours tbody tr').count()).toBeGreaterThanOrEqual(1);
        await page.getByLabel('Last 7 days').check();
        await expect.poll(() => bars.count()).toBeGreaterThanOrEqual(168);
        await noSeriousViolations(page, 'overview, the chart’s table open');
        await page.getByText('No upcoming booking.').waitFor();
        await page.getByText('None: every webhook').waitFor();
        await noSeriousViolations(page, 'overview');
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.waitForURL(`${t.url}/console/sign-in`);
        expect((await context.cookies()).find((c) => c.name === 'kairos_console')).toBeUndefined();
        await noSeriousViolations(page, 'sign-in');

        await page.getByLabel('E-mail').fill('owner@acme.example');
        await page.getByLabel('Password').fill('not the password');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').waitFor();
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/console`);

        await page.getByRole('link', { name: 'API keys' }).click();
        await page.waitForURL(`${t.url}/console/keys`);
        await page.getByText('svc_sk_', { exact: false }).first().waitFor();
        await noSeriousViolations(page, 'keys');
        await page.getByLabel('Name').fill('Shop widget');
        await page.getByLabel('Publishable (web pages)').check();
        await page.getByLabel('Allowed domains').fill('shop.example.com');
        await page.getByRole('button', { name: 'Create key' }).click();
        const created = page.locator('#new-key');
        await created.waitFor();
        expect(await created.inputValue()).toMatch(/^svc_pk_/);
        await page.getByRole('heading', { name: 'Shop widget' }).waitFor();
        const listed = await (await t.call('GET', '/v1/api-keys', { token: firstKey })).json();
        const widget = listed.api_keys.find((k: Json) => k.name === 'Shop widget');
        expect(widget).toMatchObject({ key_type: 'publishable', allowed_domains: ['shop.example.com'] });
        await noSeriousViolations(page, 'keys with a new key');

        // Revoke, after the confirmation.
        const row = page.locator('li.row', { has: page.getByRole('heading', { name: 'Shop widget' }) });
        await row.getByRole('button', { name: /Revoke/ }).click();
        const dialog = page.getByRole('dialog');
        await dialog.waitFor();
        await noSeriousViolations(page, 'revoke dialog');
        await dialog.getByRole('button', { name: 'Revoke the key' }).click();
        await row.getByText('revoked').waitFor();
        const after = await (await t.call('GET', `/v1/api-keys/${widget.id}`, { token: firstKey })).json();
        expect(after.status ?? after.api_key?.status).toBe('revoked');

        // At 390 px wide nothing scrolls sideways.
        await page.setViewportSize({ width: 390, height: 844 });
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
        await page.goto(`${t.url}/console/webhooks`);
        await noSeriousViolations(page, 'webhooks');
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );

  it.skipIf(!run)(
    'creates a key with the keyboard alone',
    async () => {
      const { context, page } = await openPage(browser as Browser, 'UTC');
      try {
        await page.goto(`${t.url}/console/sign-in`);
        await page.keyboard.press('Tab');
        await page.keyboard.type('owner@acme.example');
        await page.keyboard.press('Tab');
        await page.keyboard.type(PASSWORD);
        await page.keyboard.press('Enter');
        await page.waitForURL(`${t.url}/console`);
        await page.goto(`${t.url}/console/keys`);
        await page.locator('#key-name').waitFor();
        for (let i = 0; i < 30; i++) {
          if (await page.evaluate('document.activeElement?.id === "key-name"')) break;
          await page.keyboard.press('Tab');
        }
        expect(await page.evaluate('document.activeElement?.id')).toBe('key-name');
        await page.keyboard.type('Keyboard key');
        await page.keyboard.press('Enter');
        await page.locator('#new-key').waitFor();
        expect(await page.evaluate('document.activeElement?.id')).toBe('new-key');
        expect(await page.locator('#new-key').inputValue()).toMatch(/^svc_sk_/);
      } finally {
        await context.close();
      }
    },
    30_000,
  );
  it.skipIf(!run)(
    'adds a webhook to a local receiver, sends a test event, shows its failed delivery with every attempt and retries it',
    async () => {
      const { context, page, csp } = await openPage(browser as Browser, 'UTC');
      try {
        // The receiver refuses the first two attempts (the first and its one scheduled retry).
        receiver.setBehaviour((n) => ({ status: n <= 2 ? 500 : 200 }));
        await page.goto(`${t.url}/console/sign-in`);
        await page.getByLabel('E-mail').fill('owner@acme.example');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/console`);
        await page.goto(`${t.url}/console/webhooks`);
        await page.getByText('No webhooks yet.').waitFor();
        await noSeriousViolations(page, 'webhooks, empty');
        await page.getByLabel('Receiver URL').fill(receiver.url);
        await page.getByLabel('booking.created').check();
        await page.getByRole('button', { name: 'Add webhook' }).click();
        const secret = page.locator('#new-secret');
        await secret.waitFor();
        expect(await secret.inputValue()).toMatch(/^whsec_/);
        await page.getByRole('heading', { name: receiver.url }).waitFor();
        await noSeriousViolations(page, 'webhooks with one');

        await page.getByRole('button', { name: 'Send test event' }).click();
        await receiver.waitFor(2, 10_000);
        // The deliveries list follows the pending delivery by itself until it has failed.
        const failed = page.locator('li.delivery', { hasText: 'failed' });
        await failed.waitFor();
        expect(await failed.locator('tbody tr').count()).toBe(2);
        await expect.poll(() => failed.locator('tbody').textContent()).toContain('HTTP 500');
        await noSeriousViolations(page, 'deliveries');
        await failed.getByRole('button', { name: /Retry/ }).click();
        await page.locator('li.delivery', { hasText: 'succeeded' }).waitFor();
        expect(receiver.received.length).toBe(3);
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );
  it.skipIf(!run)(
    'lists a booking in Bookings, reschedules it to a free slot and cancels it',
    async () => {
      const api = async (method: string, path: string, body?: unknown, status = 200): Promise<Json> => {
        const res = await t.call(method, path, { token: firstKey, body });
        const json = await res.json();
        expect(res.status, JSON.stringify(json)).toBe(status);
        return json;
      };
      const host = await api('POST', '/v1/hosts', { display_name: 'Dr Ada', timezone: 'UTC' }, 201);
      const hostId = host.host.principal_id as string;
      const weekly = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({
        day,
        start: '09:00',
        end: '17:00',
      }));
      await api('PUT', `/v1/principals/${hostId}/schedule`, {
        timezone: 'UTC',
        weekly,
        overrides: [],
        minimum_notice_minutes: 0,
        max_days_ahead: 60,
      });
      // An ICS calendar (empty: the host is free whenever the schedule says so).
      const feed = await serveCalendar(vcalendar('\r\n'));
      await api('POST', '/v1/calendars/ics', { url: feed.url, principal_id: hostId }, 201);
      await feed.close();
      const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
      const created = await api(
        'POST',
        '/v1/bookings',
        {
          principal_id: hostId,
          start_time: `${day}T10:00:00Z`,
          duration_minutes: 30,
          customer_email: 'grace@example.com',
          customer_name: 'Grace Hopper',
        },
        201,
      );
      const id = created.booking.id as string;

      const { context, page, csp } = await openPage(browser as Browser, 'UTC');
      try {
        await page.goto(`${t.url}/console/sign-in`);
        await page.getByLabel('E-mail').fill('owner@acme.example');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/console`);
        await page.getByRole('link', { name: 'Bookings' }).click();
        const row = page.locator('li.booking', { hasText: 'Grace Hopper' });
        await row.waitFor();
        await noSeriousViolations(page, 'bookings');
        await row.getByRole('button', { name: /Details/ }).click();
        await row.getByText('Dr Ada', { exact: true }).waitFor();

        await row.getByRole('button', { name: 'Reschedule' }).click();
        await row.getByRole('radio', { name: '12:00' }).check();
        await noSeriousViolations(page, 'reschedule');
        await row.getByRole('button', { name: 'Move the booking' }).click();
        await expect
          .poll(async () => (await api('GET', `/v1/bookings/${id}`)).booking.start_time)
          .toBe(`${day}T12:00:00.000Z`);

        const moved = page.locator('li.booking', { hasText: 'Grace Hopper' });
        await moved.getByRole('button', { name: /Cancel booking/ }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel the booking' }).click();
        await moved.getByText('cancelled', { exact: true }).waitFor();
        expect((await api('GET', `/v1/bookings/${id}`)).booking.status).toBe('cancelled');

        // The status filter: no confirmed booking is left.
        await page.getByLabel('Status').selectOption('confirmed');
        await page.getByRole('button', { name: 'Show bookings' }).click();
        await page.getByText('No booking matches.').waitFor();
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );
  it.skipIf(!run)(
    'creates a booking link (its field error shown first), edits it, generates its embed snippets with a live preview; a public booking on it appears in Bookings',
    async () => {
      const { context, page, csp } = await openPage(browser as Browser, 'UTC');
      try {
        await page.goto(`${t.url}/console/sign-in`);
        await page.getByLabel('E-mail').fill('owner@acme.example');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/console`);
        await page.getByRole('link', { name: 'Booking links' }).click();
        await page.getByText('No booking link yet.').waitFor();
        await noSeriousViolations(page, 'links, empty');
        await page.getByLabel('Slug').fill('Not A Slug');
        await page.getByLabel('Title', { exact: true }).fill('Intro call');
        await page.getByRole('button', { name: 'Create link' }).click();
        await page.locator('#new-slug-error').waitFor();
        await page.getByLabel('Slug').fill('intro-call');
        await page.getByLabel('Durations in minutes').fill('30, 60');
        await page.getByRole('button', { name: 'Create link' }).click();
        const row = page.locator('li.row', { has: page.getByRole('heading', { name: 'Intro call' }) });
        await row.waitFor();
        await noSeriousViolations(page, 'links');
        const listed = await (await t.call('GET', '/v1/booking-links', { token: firstKey })).json();
        const link = listed.booking_links.find((l: Json) => l.slug === 'intro-call');
        expect(link).toMatchObject({ title: 'Intro call', durations: [30, 60] });
        expect(link.host_ids.length).toBe(1);

        await row.getByRole('button', { name: /^Edit/ }).click();
        await row.getByLabel('Title', { exact: true }).fill('Intro call (30 or 60)');
        await row.getByRole('button', { name: 'Save changes' }).click();
        const edited = page.locator('li.row', {
          has: page.getByRole('heading', { name: 'Intro call (30 or 60)' }),
        });
        await edited.waitFor();

        // Questions: two with the same answer key are refused beside the second one's key; then the
        // second is given its own key, moved up, and saved in that order.
        await edited.getByRole('button', { name: /^Edit/ }).click();
        await edited.getByRole('button', { name: 'Add a question' }).click();
        await edited.getByLabel('Question 1', { exact: true }).fill('Company');
        await edited.getByRole('button', { name: 'Add a question' }).click();
        await edited.getByLabel('Question 2', { exact: true }).fill('Topic');
        const second = edited.locator('li.question').nth(1);
        await second.getByLabel('Answer', { exact: true }).selectOption('select');
        await second.getByLabel('Choices, one a line').fill('Pricing\nSupport');
        await second.getByLabel(/^Answer key/).fill('company');
        await noSeriousViolations(page, 'links, question editor');
        await edited.getByRole('button', { name: 'Save changes' }).click();
        await expect.poll(() => second.locator('.error').textContent()).toMatch(/another question/);
        expect(await second.getByLabel(/^Answer key/).getAttribute('aria-invalid')).toBe('true');
        await noSeriousViolations(page, 'links, question error');
        await second.getByLabel(/^Answer key/).fill('topic');
        await second.getByRole('button', { name: 'Move up question 2' }).click();
        await edited.getByRole('button', { name: 'Save changes' }).click();
        // The form closes once the save is answered (its button reads "Saving…" while in flight).
        await edited.locator('form').waitFor({ state: 'detached' });
        const withQuestions = await (
          await t.call('GET', `/v1/booking-links/${link.id}`, { token: firstKey })
        ).json();
        expect(withQuestions.booking_link.questions).toMatchObject([
          { id: 'topic', label: 'Topic', type: 'select', options: ['Pricing', 'Support'] },
          { id: 'company', label: 'Company', type: 'text' },
        ]);

        await edited.getByRole('button', { name: /^Embed/ }).click();
        const code = edited.getByLabel('Snippet', { exact: true });
        expect(await code.inputValue()).toContain('data-kairos-inline="intro-call"');
        await edited.getByLabel('Floating button').check();
        expect(await code.inputValue()).toContain('data-button="intro-call"');
        const preview = edited.frameLocator('iframe.preview');
        await preview.getByRole('heading', { name: 'Intro call (30 or 60)' }).waitFor();
        await noSeriousViolations(page, 'links with the embed');

        // A booking made through the public booking surface (what the page calls) appears in Bookings.
        const from = new Date(Date.now() + 86_400_000).toISOString();
        const to = new Date(Date.now() + 4 * 86_400_000).toISOString();
        const free: Json = await (
          await fetch(
            `${t.url}/v1/public/links/intro-call/availability?from=${from}&to=${to}&duration_minutes=30`,
          )
        ).json();
        const slot = free.slots[0];
        const booked = await fetch(`${t.url}/v1/public/links/intro-call/bookings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            start_time: slot.start,
            duration_minutes: 30,
            customer_email: 'linus@example.com',
            customer_name: 'Linus Public',
          }),
        });
        expect(booked.status).toBe(201);
        await page.getByRole('link', { name: 'Bookings', exact: true }).click();
        const publicRow = page.locator('li.booking', { hasText: 'Linus Public' });
        await publicRow.waitFor();
        expect(await publicRow.textContent()).toContain('Intro call (30 or 60)');
        // Filtered by the link (also what the link's own "Bookings" leads to); another link's list is empty.
        await page.getByLabel('Booking link').selectOption(link.id);
        await page.getByRole('button', { name: 'Show bookings' }).click();
        // The unfiltered list stays until the filtered one arrives: wait for the list to change.
        await expect.poll(() => page.locator('li.booking').count()).toBe(1);
        await publicRow.waitFor();
        const other = await t.call('POST', '/v1/booking-links', {
          token: firstKey,
          body: { slug: 'other-call', title: 'Other call', durations: [30] },
        });
        expect(other.status).toBe(201);
        const otherId = (await other.json()).booking_link.id;
        await page.goto(`${t.url}/console/bookings?link=${otherId}`);
        await page.getByText('No booking matches.').waitFor();
        expect(await page.getByLabel('Booking link').inputValue()).toBe(otherId);
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );
  it.skipIf(!run)(
    'adds a host, edits its weekly schedule with an exception, adds an ICS calendar and makes a connect link',
    async () => {
      const feed = await serveCalendar(vcalendar('\r\n'));
      const { context, page, csp } = await openPage(browser as Browser, 'UTC');
      try {
        await page.goto(`${t.url}/console/sign-in`);
        await page.getByLabel('E-mail').fill('owner@acme.example');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/console`);
        await page.getByRole('link', { name: 'Hosts' }).click();
        await page.getByLabel('Name').fill('Dr Bob');
        await page.getByLabel('E-mail (optional)').fill('bob@acme.example');
        await page.getByRole('button', { name: 'Add host' }).click();
        const row = page.locator('li.row', { has: page.getByRole('heading', { name: 'Dr Bob' }) });
        await row.waitFor();
        await noSeriousViolations(page, 'hosts');

        await row.getByRole('button', { name: /^Schedule/ }).click();
        const form = row.getByRole('form', { name: 'Schedule of Dr Bob' });
        await form.waitFor();
        // Start from no hours: remove whatever the default schedule has.
        for (let i = 0; i < 20 && (await form.getByRole('button', { name: /^Remove/ }).count()) > 0; i++) {
          await form
            .getByRole('button', { name: /^Remove/ })
            .first()
            .click();
        }
        await form.getByRole('button', { name: 'Add hours' }).click();
        await form.getByLabel('Day', { exact: true }).selectOption('tue');
        await form.getByLabel('From', { exact: true }).fill('10:00');
        await form.getByRole('button', { name: 'Add an exception' }).click();
        await form.getByLabel('Date', { exact: true }).fill('2030-01-01');
        await form.getByLabel('Time zone').fill('Europe/Berlin');
        await noSeriousViolations(page, 'schedule editor');
        await form.getByRole('button', { name: 'Save schedule' }).click();
        await form.getByText('Schedule saved.').waitFor();
        const hosts = await (await t.call('GET', '/v1/hosts', { token: firstKey })).json();
        const bob = hosts.hosts.find((h: Json) => h.display_name === 'Dr Bob');
        const saved = await (
          await t.call('GET', `/v1/principals/${bob.principal_id}/schedule`, { token: firstKey })
        ).json();
        expect(saved.schedule).toMatchObject({
          timezone: 'Europe/Berlin',
          weekly: [{ day: 'tue', start: '10:00', end: '17:00' }],
          overrides: [{ date: '2030-01-01', unavailable: true }],
        });

        await row.getByRole('button', { name: /^Calendars/ }).click();
        await row.getByText('No calendar connected').waitFor();
        await row.getByLabel('ICS feed address').fill(feed.url);
        await row.getByRole('button', { name: 'Add ICS feed' }).click();
        await row
          .locator('.calendars li.row', { hasText: 'ics' })
          .getByText('connected', { exact: true })
          .waitFor();
        await row.getByRole('button', { name: 'Make a connect link' }).click();
        const link = row.getByLabel('Connect link to send the host');
        await link.waitFor();
        expect(await link.inputValue()).toContain('/connect/');
        await noSeriousViolations(page, 'calendars');
        expect(csp).toEqual([]);
      } finally {
        await context.close();
        await feed.close();
      }
    },
    60_000,
  );
  it.skipIf(!run)(
    'creates an open poll (its link shown once), shows its slots and votes, and closes it',
    async () => {
      // The owner proposes as themself: their own calendar must be connected first.
      const signedIn = await (
        await t.call('POST', '/v1/sessions', { body: { email: 'owner@acme.example', password: PASSWORD } })
      ).json();
      const feed = await serveCalendar(vcalendar('\r\n'));
      const added = await t.call('POST', '/v1/calendars/ics', {
        token: signedIn.session.token,
        body: { url: feed.url },
      });
      expect(added.status).toBe(201);
      await feed.close();
      const { context, page, csp } = await openPage(browser as Browser, 'UTC');
      try {
        await page.goto(`${t.url}/console/sign-in`);
        await page.getByLabel('E-mail').fill('owner@acme.example');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/console`);
        await page.getByRole('link', { name: 'Polls' }).click();
        await page.getByText('No proposal or poll yet.').waitFor();
        await noSeriousViolations(page, 'polls, empty');
        await page.getByLabel('Title').fill('Team lunch');
        await page.getByRole('button', { name: 'Add a time' }).click();
        await page.getByRole('button', { name: 'Create poll' }).click();
        const shared = page.getByLabel('The poll’s shared link', { exact: true });
        await shared.waitFor();
        expect(await shared.inputValue()).toContain('/p/');
        const row = page.locator('li.row', { has: page.getByRole('heading', { name: 'Team lunch' }) });
        await row.waitFor();
        await noSeriousViolations(page, 'polls');
        await row.getByRole('button', { name: /^Details/ }).click();
        expect(await row.locator('tbody tr').count()).toBe(2);
        await row.getByRole('button', { name: /^Close poll/ }).click();
        const closed = page.locator('li.row', { has: page.getByRole('heading', { name: 'Team lunch' }) });
        await expect.poll(() => closed.locator('.badge').textContent()).not.toBe('proposed');
        const list = await (await t.call('GET', '/v1/proposals', { token: signedIn.session.token })).json();
        const poll = list.proposals.find((x: Json) => x.title === 'Team lunch');
        expect(poll.status).not.toBe('proposed');
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );
  it.skipIf(!run)(
    'shows the network and consents pages with their empty states, and every page passes axe at 390 px wide',
    async () => {
      const { context, page, csp } = await openPage(browser as Browser, 'UTC');
      try {
        await page.setViewportSize({ width: 390, height: 844 });
        await page.goto(`${t.url}/console/sign-in`);
        await page.getByLabel('E-mail').fill('owner@acme.example');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/console`);
        await page.getByRole('link', { name: 'Network' }).click();
        await page.getByText('No connection yet.').waitFor();
        await page.getByText('No consent here yet.').waitFor();
        await page.getByText('No invitation here.').waitFor();
        await page.getByLabel('Show', { exact: true }).selectOption('grantee');
        await page.getByText('No consent here yet.').waitFor();
        // An invitation to connect: the address's error beside it, then sent (its mail in the outbox).
        await page.getByLabel('Their e-mail').fill('not an address');
        await page.getByRole('button', { name: 'Send invitation' }).click();
        await page.locator('#invitee-email-error').waitFor();
        await page.getByLabel('Their e-mail').fill('lee@partner.example');
        await page.getByLabel('Their name (optional)').fill('Lee');
        await page.getByLabel('They are your').selectOption('partner');
        await page.getByRole('button', { name: 'Send invitation' }).click();
        await page.getByText('Invitation sent to lee@partner.example').waitFor();
        // The list of invitations sent (from the API) shows it, waiting for an answer; and under All.
        const sent = page.locator('li.row', { hasText: 'Lee · lee@partner.example' });
        await sent.getByText('pending').waitFor();
        await page.getByLabel('Invitations to show').selectOption('');
        await sent.waitFor();
        await page.getByLabel('Invitations to show').selectOption('declined');
        await page.getByText('No invitation here.').waitFor();
        await noSeriousViolations(page, 'network, invitation sent');
        const mails = await t.ctx.db
          .selectFrom('mail_outbox')
          .select('to_address')
          .where('to_address', '=', 'lee@partner.example')
          .execute();
        expect(mails.length).toBe(1);
        for (const path of [
          '/console',
          '/console/keys',
          '/console/webhooks',
          '/console/hosts',
          '/console/links',
          '/console/bookings',
          '/console/polls',
          '/console/network',
        ]) {
          await page.goto(`${t.url}${path}`);
          await page.locator('main h1').waitFor();
          await page.waitForLoadState('networkidle');
          await noSeriousViolations(page, `${path} at 390 px`);
          const wide = await page.evaluate('document.documentElement.scrollWidth');
          expect(wide, `${path} scrolls sideways`).toBeLessThanOrEqual(390);
        }
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    90_000,
  );
});

describe('console: sessions and CSRF', () => {
  let email: string;
  beforeAll(async () => {
    const acc = await t.account();
    email = `csrf-${Date.now()}@example.com`;
    await t.ctx.modules.accounts.createUser({ accountId: acc.id, email, password: PASSWORD });
  });

  async function signIn(): Promise<string> {
    const res = await fetch(`${t.url}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: t.url },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(res.status).toBe(201);
    const header = res.headers.get('set-cookie') ?? '';
    expect(header).toMatch(/HttpOnly/);
    expect(header).toMatch(/SameSite=Strict/);
    expect(header).toMatch(/Path=\/console(;|$)/);
    return cookieFrom(res);
  }

  it('refuses a cross-site form post, a request from another port and one without the CSRF proof', async () => {
    const cookie = await signIn();
    const csrf = await csrfOf(cookie);
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const keys = `${t.url}/console/api/v1/api-keys`;
    const count = async () =>
      ((await (await fetch(keys, { headers: { cookie: `kairos_console=${cookie}` } })).json()) as Json)
        .api_keys.length;
    const before = await count();

    const form = await fetch(keys, {
      method: 'POST',
      headers: {
        cookie: `kairos_console=${cookie}`,
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'http://evil.example',
        'sec-fetch-site': 'cross-site',
      },
      body: 'name=evil',
    });
    expect(form.status).toBe(403);
    expect(form.headers.get('content-type')).toMatch(/application\/problem\+json/);

    const otherPort = new URL(t.url);
    otherPort.port = String(Number(otherPort.port) + 1);
    const samesite = await fetch(keys, {
      method: 'POST',
      headers: {
        cookie: `kairos_console=${cookie}`,
        'content-type': 'application/json',
        origin: otherPort.origin,
        'sec-fetch-site': 'same-site',
        'x-csrf-token': csrf,
      },
      body: JSON.stringify({ name: 'other port' }),
    });
    expect(samesite.status).toBe(403);

    const noProof = await fetch(keys, {
      method: 'POST',
      headers: { cookie: `kairos_console=${cookie}`, 'content-type': 'application/json', origin: t.url },
      body: JSON.stringify({ name: 'no proof' }),
    });
    expect(noProof.status).toBe(403);
    const wrongProof = await fetch(keys, {
      method: 'POST',
      headers: {
        cookie: `kairos_console=${cookie}`,
        'content-type': 'application/json',
        origin: t.url,
        // One character changed (a proof's last character is 'A' one time in 16: then 'B').
        'x-csrf-token': `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`,
      },
      body: JSON.stringify({ name: 'wrong proof' }),
    });
    expect(wrongProof.status).toBe(403);
    expect(await count()).toBe(before);

    // The same request with the proof, from the console's own origin, goes through.
    const good = await fetch(keys, {
      method: 'POST',
      headers: {
        cookie: `kairos_console=${cookie}`,
        'content-type': 'application/json',
        origin: t.url,
        'sec-fetch-site': 'same-origin',
        'x-csrf-token': csrf,
      },
      body: JSON.stringify({ name: 'with proof' }),
    });
    expect(good.status).toBe(201);
    expect(await count()).toBe(before + 1);
  });

  it('ends the session everywhere on sign-out', async () => {
    const cookie = await signIn();
    const csrf = await csrfOf(cookie);
    const me = await t.call('GET', '/v1/me', { token: cookie });
    expect(me.status).toBe(200);
    const noProof = await fetch(`${t.url}/console/session`, {
      method: 'DELETE',
      headers: { cookie: `kairos_console=${cookie}`, origin: t.url },
    });
    expect(noProof.status).toBe(403);
    const out = await fetch(`${t.url}/console/session`, {
      method: 'DELETE',
      headers: { cookie: `kairos_console=${cookie}`, origin: t.url, 'x-csrf-token': csrf },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await t.call('GET', '/v1/me', { token: cookie })).status).toBe(401);
    const proxied = await fetch(`${t.url}/console/api/v1/api-keys`, {
      headers: { cookie: `kairos_console=${cookie}` },
    });
    expect(proxied.status).toBe(401);
  });

  it('does not count console requests against the account’s hourly API limit', async () => {
    const acc = await t.account({ plan: 'free' });
    const freeEmail = `free-${Date.now()}@example.com`;
    await t.ctx.modules.accounts.createUser({ accountId: acc.id, email: freeEmail, password: PASSWORD });
    const res = await fetch(`${t.url}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: t.url },
      body: JSON.stringify({ email: freeEmail, password: PASSWORD }),
    });
    const cookie = cookieFrom(res);
    for (let i = 0; i < 110; i++) {
      const r = await fetch(`${t.url}/console/api/v1/api-keys?limit=1`, {
        headers: { cookie: `kairos_console=${cookie}` },
      });
      expect(r.status, `request ${i + 1}`).toBe(200);
    }
    const direct = await t.call('GET', '/v1/me', { token: cookie });
    expect(direct.status).toBe(200);
    expect(Number(direct.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(90);
  }, 30_000);
});
