/**
 * The SDK in a real browser (Chromium, as the page tests: test/helpers/browser.ts): its bundle, loaded
 * by a page on another origin, books through the public surface with a domain-locked publishable key
 * (CORS preflights, the Idempotency-Key header, problem errors across origins).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { chromiumAvailable, launchChromium, openPage } from '../../../test/helpers/browser.js';
import { weekdaySlots } from '../../../test/helpers/slots.js';
import { bundleSdk } from '../scripts/bundle.js';
import { Kairos } from '../src/index.js';

const run = chromiumAvailable();

let t: TestApp;
let browser: Browser;
let site: Server;
let sitePort: number;
let publishable: string;
let owner: Kairos;

beforeAll(async () => {
  if (!run) return;
  t = await startTestApp();
  const acc = await t.account();
  owner = new Kairos({ apiKey: acc.key, baseUrl: t.url });
  await owner.bookingLinks.create({ slug: 'browser-call', title: 'Browser call' });
  const { api_key } = await owner.apiKeys.create({
    name: 'Site',
    key_type: 'publishable',
    allowed_domains: ['localhost'],
  });
  publishable = api_key.key!;
  const { code } = await bundleSdk();
  site = createServer((req, res) => {
    if (req.url === '/sdk.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(code);
    } else {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<!doctype html><title>Site</title><script type="module">import * as sdk from "/sdk.js"; window.sdk = sdk;</script>',
        );
    }
  });
  await new Promise<void>((resolve) => site.listen(0, resolve));
  sitePort = (site.address() as AddressInfo).port;
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (site ? site.close(resolve) : resolve(null)));
  await t?.close();
});

describe.skipIf(!run)('the SDK in a browser', () => {
  it('books through the public surface with a publishable key, and a taken slot is a SlotTakenError', async () => {
    const { context, page } = await openPage(browser, 'Europe/London');
    try {
      await page.goto(`http://localhost:${sitePort}/`);
      await page.waitForFunction('typeof window.sdk === "object"');
      const start = weekdaySlots().next().value!;
      const result = await page.evaluate(
        async ({ baseUrl, apiKey, start }) => {
          // biome-ignore lint/suspicious/noExplicitAny: the page's window holds the bundle's exports, untyped here
          const { Kairos, SlotTakenError } = (globalThis as any).sdk;
          const kairos = new Kairos({ apiKey, baseUrl });
          const { booking_link } = await kairos.public.link('browser-call');
          const to = new Date(Date.parse(start) + 86_400_000).toISOString();
          const open = await kairos.public.availability('browser-call', { from: start, to });
          const body = {
            customer_email: 'ada@example.com',
            customer_name: 'Ada Lovelace',
            start_time: open.slots[0].start,
            answers: {},
          };
          const { booking } = await kairos.public.book('browser-call', body);
          const again = await kairos.public.book('browser-call', body).catch((e: unknown) => e);
          return {
            title: booking_link.title,
            id: booking.id,
            start: booking.start_time,
            taken: again instanceof SlotTakenError,
            status: again.status,
            requestId: again.requestId,
          };
        },
        { baseUrl: t.url, apiKey: publishable, start },
      );
      expect(result).toMatchObject({ title: 'Browser call', taken: true, status: 409 });
      expect(result.requestId).toMatch(/^req_/);
      const { booking } = await owner.bookings.get(result.id);
      expect(booking).toMatchObject({ status: 'confirmed', start_time: result.start });
    } finally {
      await context.close();
    }
  });
});
