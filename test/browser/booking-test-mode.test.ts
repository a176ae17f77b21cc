/**
 * The booking page of a test-mode link (docs/api.md#test-mode) in a real browser: a "Test mode — no
 * real booking" banner above everything, its slots still offered; a live link's page has none. Axe
 * finds no serious violation with the banner, and no Content-Security-Policy violation.
 * The link is made with a test key, so its public answer (served inline with the page) says
 * `livemode: false`.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, launchChromium, openPage, seriousViolations } from '../helpers/browser.js';
import { testKeyFor } from '../helpers/test-mode.js';

const run = chromiumAvailable();
let t: TestApp;
let browser: Browser;
let live: string;
let test: string;
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

/** A host open all day every day and a link on it, both made with `key`: the link's slug. */
async function linkWith(key: string, slug: string): Promise<string> {
  const h = await ok(
    await t.call('POST', '/v1/hosts', { token: key, body: { display_name: 'Grace', timezone: 'UTC' } }),
  );
  const host = h.host.principal_id as string;
  await ok(
    await t.call('PUT', `/v1/principals/${host}/schedule`, {
      token: key,
      body: { timezone: 'UTC', weekly: ALWAYS, overrides: [], minimum_notice_minutes: 0, max_days_ahead: 60 },
    }),
    200,
  );
  await ok(
    await t.call('POST', '/v1/booking-links', {
      token: key,
      body: { slug, title: 'Intro call', host_ids: [host], duration_minutes: 30 },
    }),
  );
  return slug;
}

describe.skipIf(!run)('the booking page in test mode', () => {
  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), launchChromium()]);
    live = (await t.account()).key;
    test = (await testKeyFor(t, live)).key;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows a test-mode link’s page with the "Test mode — no real booking" banner, and a live one without', async () => {
    const stamp = Date.now().toString(36);
    const testSlug = await linkWith(test, `test-intro-${stamp}`);
    const liveSlug = await linkWith(live, `live-intro-${stamp}`);
    const { context, page, csp } = await openPage(browser, 'UTC');
    try {
      const answer = await ok(await t.call('GET', `/v1/public/links/${testSlug}`), 200);
      expect(answer.booking_link.livemode).toBe(false);
      const res = await page.goto(`${t.url}/book/${testSlug}`);
      expect(res?.status()).toBe(200);
      const banner = page.locator('#test-mode');
      await banner.waitFor();
      expect(await banner.textContent()).toMatch(/^Test mode — no real booking/);
      // Above the link's header, and the page still works: its times are offered.
      expect(await page.evaluate('document.querySelector(".card").firstElementChild.id')).toBe('test-mode');
      await page.locator('.slot').first().waitFor();
      const violations = await seriousViolations(page);
      expect(violations, JSON.stringify(violations, null, 1)).toEqual([]);

      await page.goto(`${t.url}/book/${liveSlug}`);
      await page.locator('.slot').first().waitFor();
      expect(await page.locator('#test-mode').count()).toBe(0);
      expect(csp).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
