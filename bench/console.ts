/**
 * The console's budget (README.md, Console): its JavaScript gzipped (≤ 60 KB; its stylesheet beside
 * it), and how long after navigation the Bookings page lists its first booking (≤ 500 ms on
 * loopback), for a signed-in user. Runs the server in this process on a throwaway embedded store (an
 * account with an owner, one host, a booking link and 30 bookings made on its public page) and
 * Debian's Chromium through playwright-core. "Listed" is the page's own
 * `performance.mark('kairos:bookings-listed')`, set once the first booking is in the document; its
 * `startTime` counts from the start of navigation, which includes the server's page (it asks the
 * API who is signed in), the script, and the hosts and bookings calls through the console's proxy.
 * Every load fetches everything again (the HTTP cache off), the median of the measured loads is shown.
 * Without Chromium the timing is skipped, not failed.
 * BENCH_CONSOLE_LOADS: measured loads (default 15). Run alone with `npm run bench -- console`.
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.js';
import { createDb, createPool, migrate } from '../src/db/store.js';
import { clientBundle } from '../src/platform/assets.js';
import { startRuntime } from '../src/runtime.js';
import type { Json } from '../test/helpers/app.js';
import { chromiumAvailable, launchChromium } from '../test/helpers/browser.js';
import { benchDatabase, fmt, median, type Row } from './lib.js';

const LOADS = Number(process.env.BENCH_CONSOLE_LOADS ?? 15);
const BOOKINGS = 30;
const PASSWORD = 'correct horse battery staple';

export async function benchConsole(): Promise<Row[]> {
  const rows: Row[] = [];
  const bundle = await clientBundle('console');
  const script = bundle.entries.get('app');
  const css = bundle.entries.get('console');
  if (!script || !css) throw new Error('src/web/console has no app.ts or console.css');
  rows.push(
    { name: 'console JS, gzipped (target ≤ 60)', value: fmt(script.gzip.length / 1024, 1), unit: 'KB' },
    { name: 'console JS, minified', value: fmt(script.body.length / 1024, 1), unit: 'KB' },
    { name: 'console CSS, gzipped', value: fmt(css.gzip.length / 1024, 1), unit: 'KB' },
  );
  if (!chromiumAvailable()) {
    rows.push({ name: 'first booking listed (Bookings page)', value: 'skipped: no chromium', unit: '' });
    return rows;
  }

  const store = await benchDatabase('console');
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
  try {
    const base = runtime.url as string;
    const call = async (method: string, path: string, key: string | null, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Json;
    };
    const created = await runtime.modules.accounts.createAccount({
      name: 'Bench',
      plan: 'enterprise',
      rateLimitPerHour: 10_000_000,
    });
    await runtime.modules.accounts.createUser({
      accountId: created.account.id,
      email: 'owner@bench.example',
      password: PASSWORD,
    });
    const key = created.api_key.key;
    const host = await call('POST', '/v1/hosts', key, { display_name: 'Grace Hopper', timezone: 'UTC' });
    const principal: string = host.host.principal_id;
    await call('POST', '/v1/booking-links', key, {
      slug: 'bench-console',
      title: 'Intro call',
      host_ids: [principal],
      durations: [30],
      duration_minutes: 30,
    });
    const from = new Date(Date.now() + 86_400_000).toISOString();
    const to = new Date(Date.now() + 15 * 86_400_000).toISOString();
    const free = await call(
      'GET',
      `/v1/public/links/bench-console/availability?duration_minutes=30&from=${from}&to=${to}`,
      null,
    );
    const starts: string[] = free.slots.map((s: { start: string }) => s.start);
    for (let i = 0; i < BOOKINGS && i * 2 < starts.length; i++) {
      await call('POST', '/v1/public/links/bench-console/bookings', null, {
        customer_name: `Customer ${i}`,
        customer_email: `customer${i}@bench.example`,
        start_time: starts[i * 2],
      });
    }

    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ timezoneId: 'Europe/Berlin', locale: 'en-GB' });
      // Sign in as the console's own page does; the context's requests share the browser's cookies.
      const signIn = await context.request.post(`${base}/console/session`, {
        data: { email: 'owner@bench.example', password: PASSWORD },
        headers: { origin: base },
      });
      if (signIn.status() !== 201) throw new Error(`sign-in: ${signIn.status()} ${await signIn.text()}`);
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      const load = async (): Promise<number> => {
        await page.goto('about:blank');
        await page.goto(`${base}/console/bookings`);
        await page.locator('li.booking').first().waitFor();
        await page.waitForFunction("performance.getEntriesByName('kairos:bookings-listed').length > 0");
        return (await page.evaluate(
          "performance.getEntriesByName('kairos:bookings-listed')[0].startTime",
        )) as number;
      };
      const cold = await load(); // the browser's and the server's first-use costs
      await load();
      const times: number[] = [];
      for (let i = 0; i < LOADS; i++) times.push(await load());
      rows.push(
        {
          name: `first booking listed on Bookings, median of ${LOADS} loads (target ≤ 500)`,
          value: fmt(median(times)),
          unit: 'ms',
        },
        { name: 'first booking listed, slowest load', value: fmt(Math.max(...times)), unit: 'ms' },
        { name: 'first booking listed, first load after start', value: fmt(cold), unit: 'ms' },
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
  console.table(await benchConsole());
  process.exit(0);
}
