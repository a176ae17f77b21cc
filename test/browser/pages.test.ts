/**
 * The pages in a real browser (docs/api.md#e-mail-and-pages): book through `/book/{slug}`, lose a race
 * and be told so, join the waitlist, reschedule and cancel on `/b/{token}`; an axe-core scan of each
 * state with no serious or critical violation, and no Content-Security-Policy violation anywhere.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StripeEmulator, startStripeEmulator } from '../emulators/stripe.js';
import { type Json, startTestApp, type TestApp } from '../helpers/app.js';
import { chromiumAvailable, launchChromium, openPage, seriousViolations } from '../helpers/browser.js';

const run = chromiumAvailable();

let t: TestApp;
let stripe: StripeEmulator;
let browser: Browser;
let key: string;
let hostId: string;
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

async function makeHost(name: string, weekly: unknown[]): Promise<string> {
  const h = await ok(
    await t.call('POST', '/v1/hosts', { token: key, body: { display_name: name, timezone: 'UTC' } }),
  );
  const id = h.host.principal_id as string;
  await ok(
    await t.call('PUT', `/v1/principals/${id}/schedule`, {
      token: key,
      body: { timezone: 'UTC', weekly, overrides: [], minimum_notice_minutes: 0, max_days_ahead: 60 },
    }),
    200,
  );
  return id;
}

let linkSeq = 0;
async function makeLink(body: Record<string, unknown> = {}, host = hostId): Promise<string> {
  linkSeq += 1;
  const slug = `intro-${linkSeq}-${Date.now().toString(36)}`;
  await ok(
    await t.call('POST', '/v1/booking-links', {
      token: key,
      body: {
        slug,
        title: 'Intro call',
        description: 'Half an hour to get to know each other.',
        host_ids: [host],
        ...body,
      },
    }),
  );
  return slug;
}

async function firstSlot(slug: string, duration = 30): Promise<{ start: string; end: string }> {
  const from = new Date().toISOString();
  const to = new Date(Date.now() + 40 * 86_400_000).toISOString();
  const a = await ok(
    await t.call(
      'GET',
      `/v1/public/links/${slug}/availability?from=${from}&to=${to}&duration_minutes=${duration}`,
    ),
    200,
  );
  return a.slots[0];
}

async function expectAccessible(page: Page, state: string): Promise<void> {
  const violations = await seriousViolations(page);
  expect(violations, `${state}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
}

describe.skipIf(!run)('pages in Chromium', () => {
  beforeAll(async () => {
    stripe = await startStripeEmulator();
    [t, browser] = await Promise.all([
      startTestApp({
        env: {
          STRIPE_SECRET_KEY: stripe.secretKey,
          STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
          STRIPE_API_URL: stripe.url,
        },
      }),
      launchChromium(),
    ]);
    stripe.setWebhookUrl(`${t.url}/v1/payments/stripe/webhook`);
    key = (await t.account()).key;
    hostId = await makeHost('Grace Hopper', ALWAYS);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await stripe?.close();
  });

  it('books through /book/{slug}: a day, a time in the visitor’s zone, the questions, then the confirmation with .ics and the manage link', async () => {
    const slug = await makeLink({
      durations: [15, 30],
      duration_minutes: 30,
      questions: [
        { id: 'company', label: 'Company', type: 'text', required: true },
        { id: 'topic', label: 'Topic', type: 'select', required: false, options: ['Sales', 'Support'] },
        { id: 'agree', label: 'I agree to be contacted', type: 'checkbox', required: true },
      ],
    });
    const { context, page, csp } = await openPage(browser, 'Asia/Tokyo');
    const res = await page.goto(`${t.url}/book/${slug}`);
    expect(res?.status()).toBe(200);
    const headers = res!.headers();
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['content-security-policy']).toContain('frame-ancestors *');
    expect(headers['referrer-policy']).toBe('no-referrer');

    const first = page.locator('.slot').first();
    await first.waitFor();
    expect(await page.locator('#zone').inputValue()).toBe('Asia/Tokyo');
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/free time/);
    await expectAccessible(page, 'month view');

    const slot = await firstSlot(slug);
    const tokyo = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Asia/Tokyo',
      hour: 'numeric',
      minute: '2-digit',
    });
    expect(await first.textContent()).toBe(tokyo.format(new Date(slot.start)));

    await first.click();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@example.com');
    await page.getByLabel('Company').fill('Analytical Engines');
    await page.getByLabel('Topic').selectOption('Support');
    await page.getByLabel('I agree to be contacted').check();
    await expectAccessible(page, 'form');
    await page.getByRole('button', { name: 'Book' }).click();

    await page.getByRole('heading', { name: 'You are booked' }).waitFor();
    const ics = page.getByRole('link', { name: /Add to calendar/ });
    expect(await ics.getAttribute('download')).toBe('booking.ics');
    const manage = await page.getByRole('link', { name: 'Reschedule or cancel' }).getAttribute('href');
    expect(manage).toMatch(new RegExp(`^${t.url}/b/[A-Za-z0-9_-]{43}$`));
    await expectAccessible(page, 'confirmation');
    const download = page.waitForEvent('download');
    await ics.click();
    const file = await (await download).path();
    const text = (await import('node:fs')).readFileSync(file, 'utf8');
    expect(text).toContain(`DTSTART:${slot.start.replace(/[-:]|\.\d{3}/g, '')}`);
    expect(text).toContain('SUMMARY:Intro call');

    const list = await ok(await t.call('GET', '/v1/bookings', { token: key }), 200);
    const booked = list.bookings.find((b: Json) => b.start_time === slot.start);
    expect(booked).toMatchObject({
      customer_email: 'ada@example.com',
      customer_name: 'Ada Lovelace',
      customer_timezone: 'Asia/Tokyo',
      answers: { company: 'Analytical Engines', topic: 'Support', agree: true },
    });
    expect(csp).toEqual([]);
    await context.close();
  });

  it('a 409 (someone was faster) asks again and says so', async () => {
    // A host of its own (times other tests booked on the shared host do not shift its first slot),
    // free 14:00–16:00 UTC only: the same calendar day in UTC and New York (09:00–11:00), so switching
    // zones keeps the day the page shows, whatever the hour the test runs at.
    const daytime = ALWAYS.map((d) => ({ ...d, start: '14:00', end: '16:00' }));
    const slug = await makeLink({}, await makeHost('Ada Fresh', daytime));
    const { context, page, csp } = await openPage(browser, 'UTC');
    await page.goto(`${t.url}/book/${slug}`);
    const slot = await firstSlot(slug);
    // The visitor's zone can be changed: the times are shown again in it.
    const inZone = (zone: string) =>
      new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: 'numeric', minute: '2-digit' }).format(
        new Date(slot.start),
      );
    await expect.poll(() => page.locator('.slot').first().textContent()).toBe(inZone('UTC'));
    await page.locator('#zone').selectOption('America/New_York');
    await expect.poll(() => page.locator('.slot').first().textContent()).toBe(inZone('America/New_York'));
    await page.locator('.slot').first().click();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@example.com');
    // Someone else books that very time while the form is open.
    await ok(
      await t.call('POST', `/v1/public/links/${slug}/bookings`, {
        body: { customer_name: 'Bob', customer_email: 'bob@example.com', start_time: slot.start },
      }),
    );
    await page.getByRole('button', { name: 'Book' }).click();
    const notice = page.getByRole('alert');
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/just before you/);
    // The list was asked again: the taken time is gone, the next one is first.
    await expect.poll(() => page.locator('.slot').first().textContent()).not.toBe(inZone('America/New_York'));
    await expectAccessible(page, 'after a 409');
    expect(csp).toEqual([]);
    await context.close();
  });

  it('offers the waitlist when there is no free time, and joins it', async () => {
    const busy = await makeHost('Nobody Free', []);
    const slug = await makeLink({}, busy);
    const { context, page, csp } = await openPage(browser, 'Europe/Berlin');
    await page.goto(`${t.url}/book/${slug}`);
    await page.getByRole('heading', { name: 'Join the waitlist' }).waitFor();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@example.com');
    await expectAccessible(page, 'waitlist');
    await page.getByRole('button', { name: 'Join the waitlist' }).click();
    await page.getByRole('heading', { name: 'You are on the waitlist' }).waitFor();
    const rows = await t.ctx.db.selectFrom('waitlist_entries').select(['customer_email', 'status']).execute();
    expect(rows).toContainEqual({ customer_email: 'ada@example.com', status: 'waiting' });
    expect(csp).toEqual([]);
    await context.close();
  });

  it('reschedules and then cancels with a reason on /b/{token}', async () => {
    const slug = await makeLink();
    const slot = await firstSlot(slug);
    const created = await ok(
      await t.call('POST', `/v1/public/links/${slug}/bookings`, {
        body: { customer_name: 'Ada Lovelace', customer_email: 'ada@example.com', start_time: slot.start },
      }),
    );
    const manageUrl: string = created.booking.manage_url;
    const token = manageUrl.split('/').pop()!;
    const { context, page, csp } = await openPage(browser, 'America/New_York');
    const res = await page.goto(manageUrl);
    expect(res?.status()).toBe(200);
    expect(res!.headers()['cache-control']).toBe('no-store');
    expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(res!.headers()['referrer-policy']).toBe('no-referrer');
    await page.getByRole('heading', { name: 'Intro call' }).waitFor();
    await page.getByText('Confirmed').waitFor();
    await expectAccessible(page, 'booking view');

    await page.getByRole('button', { name: 'Reschedule' }).click();
    // Any free time is later than the booking's own (the earliest, and now taken); the day the picker
    // opens on may have only one left, late in its working hours.
    await page.locator('.slot').first().waitFor();
    await expectAccessible(page, 'reschedule');
    await page.locator('.slot').first().click();
    await page.getByRole('button', { name: /^Move to / }).click();
    await page.getByText(/Your booking was moved to/).waitFor();
    const moved = await ok(await t.call('GET', `/v1/public/bookings/${token}`), 200);
    expect(Date.parse(moved.booking.start_time)).toBeGreaterThan(Date.parse(slot.start));

    await page.getByRole('button', { name: 'Cancel booking' }).click();
    await page.getByLabel(/Reason/).fill('Something came up');
    await expectAccessible(page, 'cancel form');
    await page.locator('form').getByRole('button', { name: 'Cancel booking' }).click();
    await page.getByText(/Your booking is cancelled/).waitFor();
    const cancelled = await ok(await t.call('GET', `/v1/public/bookings/${token}`), 200);
    expect(cancelled.booking).toMatchObject({
      status: 'cancelled',
      cancellation_reason: 'Something came up',
    });
    expect(await page.getByRole('button', { name: 'Reschedule' }).count()).toBe(0);
    await expectAccessible(page, 'cancelled');
    expect(csp).toEqual([]);
    await context.close();
  });

  it('a priced link goes to Checkout and comes back to a success page; a cancelled payment frees the time', async () => {
    const slug = await makeLink({ price_amount: 4500, price_currency: 'eur' });
    const { context, page, csp } = await openPage(browser, 'UTC');
    const fill = async () => {
      await page.locator('.slot').first().click();
      await page.getByLabel('Name').fill('Ada Lovelace');
      await page.getByLabel('E-mail').fill('ada@example.com');
      await page.getByRole('button', { name: 'Continue to payment' }).click();
      await page.waitForURL(`${stripe.url}/pay/**`);
      const session = stripe.sessions().at(-1)!;
      expect(session.amount_total).toBe(4500);
      return session;
    };
    await page.goto(`${t.url}/book/${slug}`);
    await page.getByText('€45.00').waitFor();
    const paid = await fill();
    await stripe.pay(paid.id);
    await page.goto(paid.success_url);
    await page.getByRole('heading', { name: 'You are booked' }).waitFor();
    expect(await page.getByRole('link', { name: 'Reschedule or cancel' }).getAttribute('href')).toMatch(
      /\/b\//,
    );
    expect(page.url()).toBe(`${t.url}/book/${slug}`); // the booking id left the address bar
    await expectAccessible(page, 'paid');

    await page.goto(`${t.url}/book/${slug}`);
    const abandoned = await fill();
    const id = abandoned.metadata.booking_id!;
    await page.goto(abandoned.cancel_url!);
    await page.getByText(/payment was cancelled/).waitFor();
    const booking = await t.ctx.db
      .selectFrom('bookings')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirst();
    expect(booking?.status).toBe('cancelled');
    expect(csp).toEqual([]);
    await context.close();
  });

  it('an unknown token is a clear 404 page without script', async () => {
    const { context, page } = await openPage(browser, 'UTC');
    const res = await page.goto(`${t.url}/b/${'x'.repeat(43)}`);
    expect(res?.status()).toBe(404);
    expect(res!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.getByRole('heading', { name: 'Booking link not valid' }).waitFor();
    expect(await page.locator('script').count()).toBe(0);
    await expectAccessible(page, '404 page');
    await context.close();
  });
});
