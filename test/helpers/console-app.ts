/**
 * What the console's browser tests (test/browser/console-*.test.ts) share: one app and one browser a
 * file, the owner made before the tests, axe-core's verdict as an assertion. Apart from
 * test/helpers/browser.ts because it registers vitest hooks, and browser.ts is also loaded by scripts
 * run outside vitest (bench/, npm run screenshots).
 */
import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { type Json, startTestApp, type TestApp } from './app.js';
import {
  chromiumAvailable,
  launchChromium,
  openPage,
  seriousViolations,
  setUpConsoleOwner,
} from './browser.js';
import { serveCalendar, vcalendar } from './ics.js';
import { startedLater } from './started.js';

/** Fails the test, naming `what`, when axe-core finds a serious or critical violation on the page. */
export async function expectNoSeriousViolations(page: Page | Frame, what: string): Promise<void> {
  const v = await seriousViolations(page);
  expect(v, `${what}: ${JSON.stringify(v, null, 1)}`).toEqual([]);
}

/**
 * One app (with its job runner, as `serve`) and, where Chromium is, one browser for the calling test
 * file, started before its tests and closed after them. With `owner`, the first account, its owner
 * (CONSOLE_OWNER) and its first secret key (`firstKey()`) are made through the setup link before the
 * tests; without, the file starts with no account (to walk the setup itself). `browser: false` for a
 * file over plain HTTP.
 */
export function consoleApp(opts: { owner?: boolean; browser?: boolean } = {}) {
  const run = opts.browser !== false && chromiumAvailable();
  let app: TestApp | undefined;
  let browser: Browser | undefined;
  let firstKey = '';
  beforeAll(async () => {
    app = await startTestApp({
      workers: true,
      env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true', KAIROS_WEBHOOK_RETRY_SCHEDULE: '200ms' },
    });
    if (opts.owner) firstKey = await setUpConsoleOwner(app);
    if (run) browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });
  return {
    /** Whether Chromium is here: the browser tests are `it.skipIf(!run)`. */
    run,
    t: startedLater(() => app),
    /** The owner's first secret key (with `owner`). */
    firstKey: (): string => firstKey,
    /** A fresh context and page of the file's browser (openPage). */
    open(zone: string): ReturnType<typeof openPage> {
      if (!browser) throw new Error('the browser starts in beforeAll (where Chromium is)');
      return openPage(browser, zone);
    },
  };
}

/**
 * A host (`name`, UTC) bookable every day from 09:00 to 17:00 with no notice, its calendar an empty ICS
 * feed (free whenever the schedule says so), made with the account's `key`: its principal id.
 */
export async function openHost(t: TestApp, key: string, name: string): Promise<string> {
  const api = async (method: string, path: string, body: unknown, status: number): Promise<Json> => {
    const res = await t.call(method, path, { token: key, body });
    const json = await res.json();
    expect(res.status, JSON.stringify(json)).toBe(status);
    return json;
  };
  const host = await api('POST', '/v1/hosts', { display_name: name, timezone: 'UTC' }, 201);
  const hostId = host.host.principal_id as string;
  const weekly = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({
    day,
    start: '09:00',
    end: '17:00',
  }));
  await api(
    'PUT',
    `/v1/principals/${hostId}/schedule`,
    { timezone: 'UTC', weekly, overrides: [], minimum_notice_minutes: 0, max_days_ahead: 60 },
    200,
  );
  const feed = await serveCalendar(vcalendar('\r\n'));
  await api('POST', '/v1/calendars/ics', { url: feed.url, principal_id: hostId }, 201);
  await feed.close();
  return hostId;
}
