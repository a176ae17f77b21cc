/**
 * The booking page's budget (docs/design.md#pages): its JavaScript gzipped (≤ 30 KB; the other pages' and
 * `/embed.js`'s sizes beside it), and how long after
 * navigation its free times are visible (≤ 300 ms on loopback). Runs the server in this process on a
 * throwaway embedded store (one host, Mon–Fri 09:00–17:00 UTC, a link with two durations and a
 * question) and Debian's Chromium through playwright-core. "Visible" is the page's own
 * `performance.mark('kairos:slots-visible')`, set when the month's days with free time and the first
 * day's times are in the document; its `startTime` counts from the start of navigation. Every visit
 * loads everything again (one tab with its HTTP cache off: a first-time visitor). The first visit
 * after start-up also pays for bundling the client code (esbuild, once per process) and is shown
 * apart.
 * BENCH_PAGE_VISITS: measured visits (default 20). Run alone with `npm run bench -- pages`.
 */
import { randomBytes } from 'node:crypto';
import { chromiumAvailable, launchChromium } from '../test/helpers/browser.js';
import { loadConfig } from '../src/config.js';
import { createDb, createPool, migrate } from '../src/db/store.js';
import { prepareAssets } from '../src/modules/pages/assets.js';
import { startRuntime } from '../src/runtime.js';
import { benchDatabase, fmt, type Row } from './lib.js';

const VISITS = Number(process.env.BENCH_PAGE_VISITS ?? 20);

export async function benchPages(): Promise<Row[]> {
  const store = await benchDatabase('pages');
  const masterKey = randomBytes(32).toString('base64');
  const config = {
    ...loadConfig({ DATABASE_URL: store.url, KAIROS_MASTER_KEY: masterKey, LOG_LEVEL: 'silent' }),
    port: 0,
    host: '127.0.0.1',
  };
  const pool = createPool(store.url, 10);
  const db = createDb(pool);
  await migrate(pool);
  const runtime = await startRuntime({
    config,
    log: { info: () => {}, warn: () => {}, error: () => {} },
    store: { db, pool, url: store.url, masterKey },
    workers: false,
    listen: true,
    baseUrlFromAddress: true,
  });
  const rows: Row[] = [];
  try {
    const base = runtime.url as string;
    const call = async (path: string, key: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { host: { principal_id: string } };
    };
    const { api_key } = await runtime.modules.accounts.createAccount({
      name: 'Bench',
      plan: 'enterprise',
      rateLimitPerHour: 10_000_000,
    });
    const host = await call('/v1/hosts', api_key.key, { display_name: 'Grace Hopper', timezone: 'UTC' });
    await call('/v1/booking-links', api_key.key, {
      slug: 'bench-intro',
      title: 'Intro call',
      host_ids: [host.host.principal_id],
      durations: [30, 60],
      duration_minutes: 30,
      questions: [{ id: 'company', label: 'Company', type: 'text', required: true }],
    });

    if (!chromiumAvailable()) {
      const assets = await prepareAssets();
      rows.push({
        name: 'booking page JS, gzipped',
        value: fmt(assets.book.gzip.length / 1024, 1),
        unit: 'KB',
      });
      rows.push({ name: 'slots visible after navigation', value: 'skipped: no chromium', unit: '' });
      return rows;
    }
    const browser = await launchChromium();
    try {
      // One tab, its HTTP cache off: every visit downloads page, script, stylesheet and slots again
      // (a first-time visitor), without timing the start of a browser process as part of the page.
      const context = await browser.newContext({ timezoneId: 'Europe/Berlin', locale: 'en-GB' });
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      const visit = async (): Promise<number> => {
        await page.goto('about:blank');
        await page.goto(`${base}/book/bench-intro`);
        await page.locator('.slot').first().waitFor();
        const ms = (await page.evaluate(
          "performance.getEntriesByName('kairos:slots-visible')[0]?.startTime ?? -1",
        )) as number;
        if (ms < 0) throw new Error('the page set no kairos:slots-visible mark');
        return ms;
      };
      const cold = await visit();
      await visit(); // the browser's own first-use costs
      const times: number[] = [];
      for (let i = 0; i < VISITS; i++) times.push(await visit());
      times.sort((a, b) => a - b);
      const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
      const assets = await prepareAssets();
      rows.push(
        {
          name: 'booking page JS, gzipped (budget 30)',
          value: fmt(assets.book.gzip.length / 1024, 1),
          unit: 'KB',
        },
        { name: 'booking page JS, minified', value: fmt(assets.book.body.length / 1024, 1), unit: 'KB' },
        { name: '/b/ page JS, gzipped', value: fmt(assets.manage.gzip.length / 1024, 1), unit: 'KB' },
        { name: '/p/ page JS, gzipped', value: fmt(assets.proposal.gzip.length / 1024, 1), unit: 'KB' },
        { name: '/w/ page JS, gzipped', value: fmt(assets.claim.gzip.length / 1024, 1), unit: 'KB' },
        {
          name: '/invitations/ page JS, gzipped',
          value: fmt(assets.invitation.gzip.length / 1024, 1),
          unit: 'KB',
        },
        { name: '/embed.js, gzipped', value: fmt(assets.embed.gzip.length / 1024, 1), unit: 'KB' },
        { name: 'pages CSS, gzipped', value: fmt(assets.css.gzip.length / 1024, 1), unit: 'KB' },
        {
          name: `slots visible after navigation, p50 / max of ${VISITS} (budget 300)`,
          value: `${fmt(at(0.5))} / ${fmt(times[times.length - 1]!)}`,
          unit: 'ms',
        },
        { name: 'slots visible, first visit after start (bundles built)', value: fmt(cold), unit: 'ms' },
      );
    } finally {
      await browser.close();
    }
  } finally {
    await runtime.close();
    await db.destroy();
    await store.stop();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchPages());
  process.exit(0);
}
