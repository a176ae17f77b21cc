/**
 * `npm run screenshots`: pictures of every page Kairos serves to people, at desktop (1280 px) and
 * phone (390 px) widths, into docs/screenshots/. A throwaway embedded store and server with a clock
 * that stands still (Monday 2 March 2026, 08:00 UTC), and the browser's clock set to the same
 * instant, so every run draws the same pages. Needs Chromium (test/helpers/browser.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import type { Browser, Page } from 'playwright-core';
import { benchDatabase, REPO } from '../../bench/lib.js';
import { loadConfig } from '../../src/config.js';
import { createPool, migrate } from '../../src/db/store.js';
import type { DB } from '../../src/db/types.js';
import { FakeClock } from '../../src/platform/clock.js';
import { startRuntime } from '../../src/runtime.js';
import type { Json } from '../helpers/app.js';
import { CHROMIUM_INSTALL_HINT, chromiumAvailable, launchChromium } from '../helpers/browser.js';

const NOW = '2026-03-02T08:00:00.000Z';
const OUT = join(REPO, 'docs', 'screenshots');
const WIDTHS = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } } as const;

if (!chromiumAvailable()) {
  console.error(CHROMIUM_INSTALL_HINT);
  process.exit(1);
}

const store = await benchDatabase('screenshots');
const masterKey = randomBytes(32).toString('base64');
const config = {
  ...loadConfig({ DATABASE_URL: store.url, KAIROS_MASTER_KEY: masterKey, LOG_LEVEL: 'silent' }),
  port: 0,
  host: '127.0.0.1',
};
const pool = createPool(store.url, 5);
const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
await migrate(db);
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

try {
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
  mkdirSync(OUT, { recursive: true });
  browser = await launchChromium();

  for (const width of ['desktop', 'phone'] as const) {
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
    await context.close();
  }
} finally {
  await browser?.close();
  await runtime.close();
  await db.destroy();
  await store.stop();
}
process.exit(0);
