/**
 * The first minute with a fresh server, in a real browser: `/` is a landing page leading to the API
 * reference and the console; `/console` on a server with no account says so and where the setup link
 * is printed, without showing any setup token; a used, expired or no longer needed setup link says so
 * at once, with no form; the problem type pages (`/errors/…`) have the site's style; every page names
 * the favicon. Once signed in, at 390 px the console's header and navigation leave the page's heading
 * near the top, and each page lists its items before its form to create one.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, launchChromium, openPage, seriousViolations } from '../helpers/browser.js';

const run = chromiumAvailable();
const PASSWORD = 'correct horse battery staple';

let t: TestApp;
let browser: Browser | undefined;

beforeAll(async () => {
  t = await startTestApp();
  if (run) browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function noSeriousViolations(page: Page, what: string): Promise<void> {
  const v = await seriousViolations(page);
  expect(v, `${what}: ${JSON.stringify(v, null, 1)}`).toEqual([]);
}

/** A setup token stored as the console stores one (hashed), valid until `expires`. */
async function storedToken(expires: Date): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const hash = createHash('sha256').update(token).digest('hex');
  await t.ctx.db
    .insertInto('console_setup_tokens')
    .values({
      token_hash: hash,
      created_at: new Date(expires.getTime() - 86_400_000),
      expires_at: expires,
      used_at: null,
    })
    .execute();
  return token;
}

describe('the site’s front', () => {
  it('serves / as a landing page with the site’s style, its CSP and the favicon', async () => {
    const res = await fetch(`${t.url}/`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const body = await res.text();
    expect(body).toContain('name="viewport"');
    expect(body).toContain('href="/docs"');
    expect(body).toContain('href="/console"');
    expect(body).toMatch(/<link rel="icon"[^>]*href="\/favicon\.svg"/);
    expect(body).toMatch(/<link rel="stylesheet" href="\/assets\//);
  });

  it('serves a favicon at /favicon.svg and /favicon.ico', async () => {
    for (const path of ['/favicon.svg', '/favicon.ico']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(/^image\/svg\+xml/);
      expect(await res.text(), path).toMatch(/^<svg /);
    }
  });

  it('gives the problem type pages a viewport, the site’s style, a strict CSP and the favicon', async () => {
    for (const path of ['/errors', '/errors/not-found']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).not.toContain('unsafe-inline');
      const body = await res.text();
      expect(body, path).toContain('name="viewport"');
      expect(body, path).toMatch(/<link rel="stylesheet" href="\/assets\//);
      expect(body, path).toMatch(/<link rel="icon"[^>]*href="\/favicon\.svg"/);
      expect(body, path).not.toContain('style=');
    }
    expect(await (await fetch(`${t.url}/errors/not-found`)).text()).toContain(`${t.url}/errors/not-found`);
    expect((await fetch(`${t.url}/errors/no-such-thing`)).status).toBe(404);
  });

  it.skipIf(!run)('shows / and an error page at 390 px with no serious axe violation', async () => {
    const { context, page, csp } = await openPage(browser as Browser, 'Europe/London');
    try {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${t.url}/`);
      await page.getByRole('link', { name: /API reference/ }).waitFor();
      await page
        .getByRole('link', { name: /console/i })
        .first()
        .waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await noSeriousViolations(page, '/');
      await page.goto(`${t.url}/errors/not-found`);
      await page.getByRole('heading', { name: 'Not Found' }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await noSeriousViolations(page, '/errors/not-found');
      expect(csp).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('the console on a server with no account', () => {
  it('names the favicon on its pages', async () => {
    const body = await (await fetch(`${t.url}/console/sign-in`)).text();
    expect(body).toMatch(/<link rel="icon"[^>]*href="\/favicon\.svg"/);
  });

  it.skipIf(!run)(
    '/console says there is no account yet and where the setup link is printed, showing no token',
    async () => {
      const token = await storedToken(new Date(Date.now() + 3_600_000));
      const { context, page, csp } = await openPage(browser as Browser, 'Europe/London');
      try {
        await page.goto(`${t.url}/console`);
        await page.getByRole('heading', { name: 'Kairos has no account yet' }).waitFor();
        const text = (await page.locator('main').textContent()) ?? '';
        expect(text).toContain('No account yet: open');
        expect(text).toContain('setup_link');
        expect(text).toMatch(/restart the server/i);
        // No sign-in form that cannot work yet, and no setup token anywhere in the page.
        expect(await page.getByLabel('Password').count()).toBe(0);
        expect(await page.content()).not.toContain(token);
        await noSeriousViolations(page, 'no account');
        // The setup page without a token says the same.
        await page.goto(`${t.url}/console/setup`);
        await page.getByRole('heading', { name: 'Kairos has no account yet' }).waitFor();
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
      const html = await (await fetch(`${t.url}/console/sign-in`)).text();
      expect(html).not.toContain(token);
    },
  );

  it.skipIf(!run)('an expired setup link says so at once, with no form', async () => {
    const token = await storedToken(new Date(Date.now() - 60_000));
    const { context, page } = await openPage(browser as Browser, 'Europe/London');
    try {
      await page.goto(`${t.url}/console/setup?token=${token}`);
      await page.getByText('This setup link has expired.').waitFor();
      expect(await page.locator('main').textContent()).toMatch(/restart the server/i);
      expect(await page.getByLabel('Business name').count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});

describe('the console once the server has an account', () => {
  let liveToken = '';

  beforeAll(async () => {
    // A link made while the server had no account, then an account made another way (the CLI).
    liveToken = await storedToken(new Date(Date.now() + 3_600_000));
    const { accounts } = t.ctx.modules;
    const made = await accounts.createAccount({ name: 'Front Desk' });
    await accounts.createUser({
      accountId: made.account.id,
      email: 'owner@front.example',
      password: PASSWORD,
    });
  });

  it('answers a still-unused setup link’s state as set up', async () => {
    const res = await fetch(`${t.url}/console/setup/state?token=${liveToken}`);
    expect(((await res.json()) as { state: string }).state).toBe('set_up');
  });

  it.skipIf(!run)(
    'a setup link of a server already set up says so at once and leads to sign-in',
    async () => {
      const { context, page } = await openPage(browser as Browser, 'Europe/London');
      try {
        await page.goto(`${t.url}/console/setup?token=${liveToken}`);
        await page.getByText('This server is already set up.').waitFor();
        expect(await page.getByLabel('Business name').count()).toBe(0);
        await page.getByRole('link', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/console/sign-in`);
        await page.getByLabel('E-mail').waitFor();
      } finally {
        await context.close();
      }
    },
  );

  it.skipIf(!run)(
    'at 390 px the page’s heading starts near the top; lists come before create forms; keyboard reaches the form',
    async () => {
      const { context, page, csp } = await openPage(browser as Browser, 'Europe/London');
      try {
        await page.setViewportSize({ width: 390, height: 844 });
        await page.goto(`${t.url}/console/sign-in`);
        await page.getByLabel('E-mail').fill('owner@front.example');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/console`);
        await page.goto(`${t.url}/console/keys`);
        const h1 = page.getByRole('heading', { level: 1, name: 'API keys' });
        await h1.waitFor();
        const y = (await h1.boundingBox())?.y ?? Number.POSITIVE_INFINITY;
        console.log(`console at 390 px: the page's h1 starts at y = ${Math.round(y)}`);
        expect(y).toBeLessThan(160);
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
        await noSeriousViolations(page, 'keys at 390');

        for (const [path, list, create, empty] of [
          ['/console/keys', 'Keys', 'Create a key', false],
          ['/console/webhooks', 'Webhooks', 'Add a webhook', true],
          ['/console/hosts', 'Hosts', 'Add a host', false],
          ['/console/links', 'Booking links', 'Create a booking link', true],
          ['/console/polls', 'Proposals and polls', 'Create a poll', true],
        ] as const) {
          await page.goto(`${t.url}${path}`);
          const listHeading = page.getByRole('heading', { level: 2, name: list, exact: true });
          const createHeading = page.getByRole('heading', { level: 2, name: create, exact: true });
          await listHeading.waitFor();
          await createHeading.waitFor();
          const listY = (await listHeading.boundingBox())?.y ?? Number.POSITIVE_INFINITY;
          const createY = (await createHeading.boundingBox())?.y ?? 0;
          expect(listY, `${path}: the list comes first`).toBeLessThan(createY);
          // An empty list says what to do, pointing at the form after it.
          if (empty) expect(await page.locator('.empty').textContent(), path).toMatch(/\bbelow\b/);
          await page.getByRole('link', { name: create, exact: true }).first().focus();
          await page.keyboard.press('Enter');
          await expect.poll(() => page.evaluate('location.hash'), { timeout: 5_000 }).toBe('#create');
          // The next Tab lands in the form (the panel took the focus).
          await page.keyboard.press('Tab');
          expect(await page.evaluate('document.activeElement?.closest("#create") !== null'), path).toBe(true);
        }

        await page.goto(`${t.url}/console/links`);
        await page.getByRole('heading', { level: 2, name: 'Create a booking link' }).waitFor();
        const copy = (await page.locator('main').textContent()) ?? '';
        expect(copy).not.toMatch(/through the API/);
        expect(copy).toMatch(/Hosts page/);
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );
});
