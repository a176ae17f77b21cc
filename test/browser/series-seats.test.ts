/**
 * Series and seats on the public pages in a real browser (docs/api.md#recurring-series, #seats), at
 * 390 px wide and by keyboard: "Repeat" on `/book/{slug}` books a weekly series and lists its dates in
 * the visitor's zone, a refused series names the dates that are not free and lets the visitor repeat
 * fewer times; a seated link's times say the seats left, a seat taken first (`slot_full`) asks for the
 * times again; `/b/{token}` cancels an occurrence with a scope. No sideways scroll, no serious or
 * critical axe violation, no CSP violation.
 */
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, launchChromium, openPage, seriousViolations } from '../helpers/browser.js';

const run = chromiumAvailable();
const WEEK = 7 * 86_400_000;

let t: TestApp;
let browser: Browser;
let key: string;
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

/** A host of its own for each test (what other tests book does not move its first slot). */
let hosts = 0;
async function makeHost(): Promise<string> {
  hosts += 1;
  const h = await ok(
    await t.call('POST', '/v1/hosts', {
      token: key,
      body: { display_name: `Grace ${hosts}`, timezone: 'UTC' },
    }),
  );
  const id = h.host.principal_id as string;
  await ok(
    await t.call('PUT', `/v1/principals/${id}/schedule`, {
      token: key,
      body: { timezone: 'UTC', weekly: ALWAYS, overrides: [], minimum_notice_minutes: 0, max_days_ahead: 60 },
    }),
    200,
  );
  return id;
}

async function makeLink(body: Record<string, unknown>): Promise<string> {
  const slug = `series-${hosts}-${Date.now().toString(36)}`;
  await ok(
    await t.call('POST', '/v1/booking-links', {
      token: key,
      body: { slug, title: 'Physio session', host_ids: [await makeHost()], ...body },
    }),
  );
  return slug;
}

async function slots(slug: string): Promise<{ start: string; end: string; seats_remaining?: number }[]> {
  const from = new Date().toISOString();
  const to = new Date(Date.now() + 40 * 86_400_000).toISOString();
  const a = await ok(await t.call('GET', `/v1/public/links/${slug}/availability?from=${from}&to=${to}`), 200);
  return a.slots;
}

const book = (slug: string, start: string, email: string, extra: Record<string, unknown> = {}) =>
  t.call('POST', `/v1/public/links/${slug}/bookings`, {
    body: { customer_name: email.split('@')[0], customer_email: email, start_time: start, ...extra },
  });

/** "3 March" of an instant in a zone: how the page's date labels name its day. */
function dayMonth(iso: string | number, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: zone, day: 'numeric', month: 'long' }).format(
    new Date(iso),
  );
}

async function narrowAndClean(page: Page, state: string): Promise<void> {
  expect(
    await page.evaluate('document.documentElement.scrollWidth'),
    `${state} scrolls sideways`,
  ).toBeLessThanOrEqual(390);
  const violations = await seriousViolations(page);
  expect(violations, `${state}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
}

/** Opens `/book/{slug}` at 390 px and picks the first time by keyboard. */
async function pickFirst(page: Page, slug: string): Promise<void> {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${t.url}/book/${slug}`);
  const first = page.locator('.slot').first();
  await first.waitFor();
  await first.focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Your details' }).waitFor();
}

async function fillDetails(page: Page, email: string): Promise<void> {
  await page.getByLabel('Name').fill('Ada Lovelace');
  await page.getByLabel('E-mail').fill(email);
}

async function submitByKeyboard(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name, exact: true }).focus();
  await page.keyboard.press('Enter');
}

describe.skipIf(!run)('series and seats on the pages in Chromium', () => {
  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestApp(), launchChromium()]);
    key = (await t.account()).key;
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('books a weekly series of 3 by keyboard at 390 px and lists the three dates in the visitor’s zone', async () => {
    const slug = await makeLink({ recurrence: { frequencies: ['weekly', 'monthly'], max_count: 6 } });
    const [slot] = await slots(slug);
    const zone = 'Europe/Berlin';
    const { context, page, csp } = await openPage(browser, zone);
    await pickFirst(page, slug);
    await fillDetails(page, 'ada.series@example.com');

    // "Repeat" is off by default; the checkbox turns it on, the selects say how often and how many times.
    const repeat = page.getByLabel('Repeat this booking');
    expect(await repeat.isChecked()).toBe(false);
    expect(await page.locator('#repeat-count').count()).toBe(0);
    await repeat.focus();
    await page.keyboard.press('Space');
    expect(await page.getByLabel('How often').inputValue()).toBe('weekly');
    const count = page.getByLabel('For', { exact: true });
    expect(await count.locator('option').allTextContents()).toEqual([
      '2 weeks',
      '3 weeks',
      '4 weeks',
      '5 weeks',
      '6 weeks',
    ]);
    await count.focus();
    await count.selectOption('3');
    expect(await count.inputValue()).toBe('3');
    await expect
      .poll(() => page.locator('.repeat-summary').textContent())
      .toMatch(/^3 bookings, every week at/);
    await narrowAndClean(page, 'form with Repeat');

    await submitByKeyboard(page, 'Book');
    await page.getByRole('heading', { name: 'You are booked' }).waitFor();
    await page.getByRole('heading', { name: 'All 3 dates, every week' }).waitFor();
    const dates = await page.locator('.occurrences li').allTextContents();
    expect(dates).toHaveLength(3);
    for (let i = 0; i < 3; i++) {
      expect(dates[i]).toContain(dayMonth(Date.parse(slot!.start) + i * WEEK, zone));
    }
    await narrowAndClean(page, 'series booked');
    const { bookings } = await ok(await t.call('GET', '/v1/bookings?limit=100', { token: key }), 200);
    const mine = bookings.filter((b: Json) => b.customer_email === 'ada.series@example.com');
    expect(mine).toHaveLength(3);
    expect(new Set(mine.map((b: Json) => b.series_id)).size).toBe(1);
    expect(mine.every((b: Json) => b.customer_timezone === zone)).toBe(true);
    // "Add to calendar" is the series' one event, as its mail invite is: its UID, the zone's wall clock, the rule.
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: /Add to calendar/ }).click();
    const ics = readFileSync((await (await download).path())!, 'utf8');
    expect(ics.match(/^BEGIN:VEVENT/gm)).toHaveLength(1);
    expect(ics).toContain(`UID:${mine[0].series_id}@kairos`);
    expect(ics).toContain('RRULE:FREQ=WEEKLY;INTERVAL=1;COUNT=3');
    const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit' })
      .format(new Date(slot!.start))
      .replace(':', '');
    expect(ics).toMatch(new RegExp(`^DTSTART;TZID=Europe/Berlin:\\d{8}T${berlin}00\r$`, 'm'));

    expect(csp).toEqual([]);
    await context.close();
  });

  it('a refused series names the date that is not free and books once the visitor repeats fewer times', async () => {
    const slug = await makeLink({ recurrence: { frequencies: ['weekly'], max_count: 4 } });
    const [slot] = await slots(slug);
    const third = new Date(Date.parse(slot!.start) + 2 * WEEK).toISOString();
    await ok(await book(slug, third, 'bob@example.com'));
    const zone = 'America/New_York';
    const { context, page, csp } = await openPage(browser, zone);
    await pickFirst(page, slug);
    await fillDetails(page, 'ada.refused@example.com');
    await page.getByLabel('Repeat this booking').check();
    await page.getByLabel('For', { exact: true }).selectOption('3');
    await submitByKeyboard(page, 'Book');

    const alert = page.locator('#form-error');
    await alert.waitFor();
    expect(await alert.getAttribute('role')).toBe('alert');
    const text = (await alert.textContent()) ?? '';
    expect(text).toContain('Nothing was booked');
    expect(text).toContain(dayMonth(third, zone));
    expect(text).toContain('already booked');
    await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('form-error');
    await narrowAndClean(page, 'series refused');

    // Fewer times: the refused date is left out, and the series is booked.
    const count = page.getByLabel('For', { exact: true });
    await count.focus();
    await count.selectOption('2');
    expect(await page.locator('#form-error').count()).toBe(0);
    await submitByKeyboard(page, 'Book');
    await page.getByRole('heading', { name: 'All 2 dates, every week' }).waitFor();
    expect(await page.locator('.occurrences li').count()).toBe(2);
    expect(csp).toEqual([]);
    await context.close();
  });

  it('shows the seats left on a seated link, says when a slot just filled, and books a seat', async () => {
    const slug = await makeLink({ seats: { capacity: 2, show_remaining: true } });
    const [slot] = await slots(slug);
    await ok(await book(slug, slot!.start, 'first@example.com'));
    // Asked again: times meeting the first one's session are no longer offered.
    const [again, next] = await slots(slug);
    expect(again).toMatchObject({ start: slot!.start, seats_remaining: 1 });
    const zone = 'UTC';
    const { context, page, csp } = await openPage(browser, zone);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${t.url}/book/${slug}`);
    const first = page.locator('.slot').first();
    await first.waitFor();
    const time = (iso: string) =>
      new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: 'numeric', minute: '2-digit' }).format(
        new Date(iso),
      );
    await expect.poll(() => first.textContent()).toBe(`${time(slot!.start)}, 1 seat left`);
    expect(await page.locator('.slot').nth(1).textContent()).toBe(`${time(next!.start)}, 2 seats left`);
    expect(await first.getAttribute('aria-pressed')).toBe('false');
    await narrowAndClean(page, 'seated slots');

    // The last seat of the first time goes to someone else while the form is open: 409 slot_full.
    await first.focus();
    await page.keyboard.press('Enter');
    await page.getByText('1 seat left').waitFor();
    await fillDetails(page, 'ada.seat@example.com');
    await ok(await book(slug, slot!.start, 'second@example.com'));
    await submitByKeyboard(page, 'Book');
    const notice = page.locator('.notice');
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/just filled up/);
    await expect
      .poll(() => page.locator('.slot').first().textContent())
      .toBe(`${time(next!.start)}, 2 seats left`);
    await narrowAndClean(page, 'after slot_full');

    // A seat of the next time.
    await page.locator('.slot').first().focus();
    await page.keyboard.press('Enter');
    await fillDetails(page, 'ada.seat@example.com');
    await submitByKeyboard(page, 'Book');
    await page.getByRole('heading', { name: 'You are booked' }).waitFor();
    expect(await page.locator('.occurrences').count()).toBe(0);
    const after = await slots(slug);
    expect(after.find((s) => s.start === slot!.start)).toBeUndefined();
    expect(after.find((s) => s.start === next!.start)?.seats_remaining).toBe(1);
    expect(csp).toEqual([]);
    await context.close();
  });

  it('cancels an occurrence and the following ones on /b/{token}, the scope chosen by keyboard at 390 px', async () => {
    const slug = await makeLink({ recurrence: { frequencies: ['weekly'], max_count: 4 } });
    const [slot] = await slots(slug);
    const created = await ok(
      await book(slug, slot!.start, 'ada.manage@example.com', {
        recurrence: { frequency: 'weekly', count: 3 },
      }),
    );
    const ids = created.series.occurrences.map((o: Json) => o.booking_id as string);
    const { context, page, csp } = await openPage(browser, 'Asia/Tokyo');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(created.booking.manage_url);
    await page.getByText('One date of a recurring series.').waitFor();
    await page.getByRole('button', { name: 'Cancel booking' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Cancel this booking' }).waitFor();
    await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('cancel-h');
    const group = page.getByRole('group', { name: /one of a series/ });
    expect(await group.getByRole('radio').count()).toBe(3);
    expect(await page.getByLabel('Only this one').isChecked()).toBe(true);
    await narrowAndClean(page, 'cancel with scope');

    // Tab reaches the checked radio; an arrow moves the choice; Tab on to the reason and the button.
    await page.keyboard.press('Tab');
    await expect.poll(() => page.evaluate('document.activeElement?.value')).toBe('single');
    await page.keyboard.press('ArrowDown');
    expect(await page.getByLabel('This and the following').isChecked()).toBe(true);
    await page.keyboard.press('Tab');
    await page.keyboard.type('Moving away');
    await page.keyboard.press('Tab');
    await expect.poll(() => page.evaluate('document.activeElement?.textContent')).toBe('Cancel booking');
    await page.keyboard.press('Enter');
    await page.getByText(/This booking and the following dates of the series are cancelled/).waitFor();
    await narrowAndClean(page, 'cancelled with scope');

    const statuses = await Promise.all(
      ids.map(
        async (id: string) =>
          (await ok(await t.call('GET', `/v1/bookings/${id}`, { token: key }), 200)).booking,
      ),
    );
    expect(statuses.map((b) => b.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(statuses[0].cancellation_reason).toBe('Moving away');
    expect(csp).toEqual([]);
    await context.close();
  });
});
