/**
 * The console's series and seats in a real browser, at 390 px wide: an occurrence of a weekly series
 * shown as "Series · 2 of 4" with its occurrences, cancelled with "This and following" by keyboard
 * alone; seats of a seated link marked with their session's seats; a seated link made through the
 * editor (the API's refusal shown at the seats first) and a link allowed to repeat (its count's
 * error at its field first), the list showing "Seats: 12" and "Repeats".
 */
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/app.js';
import { signInToConsole } from '../helpers/browser.js';
import { consoleApp, expectNoSeriousViolations, openHost } from '../helpers/console-app.js';

const { run, t, open, firstKey } = consoleApp({ owner: true });

let hostId = '';
beforeAll(async () => {
  hostId = await openHost(t, firstKey(), 'Dr Ada');
});

async function api(method: string, path: string, body?: unknown, status = 200): Promise<Json> {
  const res = await t.call(method, path, { token: firstKey(), body });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(status);
  return json;
}

/** Tab until the element has the focus (at most 60 presses), as a keyboard user would. */
async function tabTo(page: Page, target: Locator): Promise<void> {
  for (let i = 0; i < 60; i++) {
    if (await target.evaluate((el) => el.matches(':focus'))) return;
    await page.keyboard.press('Tab');
  }
  throw new Error('never reached by Tab');
}

async function fitsPhone(page: Page): Promise<void> {
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
}

describe('console: series and seats', () => {
  it.skipIf(!run)(
    'shows an occurrence as "Series · 2 of 4" with its occurrences, cancels it and the following by keyboard; marks seats with their session (390 px)',
    async () => {
      const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
      const { series } = await api(
        'POST',
        '/v1/bookings',
        {
          principal_id: hostId,
          start_time: `${day(2)}T10:00:00Z`,
          duration_minutes: 30,
          customer_email: 'grace@example.com',
          customer_name: 'Grace Hopper',
          recurrence: { frequency: 'weekly', count: 4 },
        },
        201,
      );
      const ids = series.occurrences.map((o: Json) => o.booking_id as string);
      expect(ids).toHaveLength(4);
      // A seated link with two seats taken in one slot, the day after the series' first occurrence.
      await api(
        'POST',
        '/v1/booking-links',
        { slug: 'yoga', title: 'Yoga class', durations: [60], host_ids: [hostId], seats: { capacity: 12 } },
        201,
      );
      for (const name of ['Ann Seat', 'Bob Seat']) {
        const res = await fetch(`${t.url}/v1/public/links/yoga/bookings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            start_time: `${day(3)}T14:00:00Z`,
            customer_email: `${name.split(' ')[0]?.toLowerCase()}@example.com`,
            customer_name: name,
          }),
        });
        expect(res.status, await res.clone().text()).toBe(201);
      }

      const { context, page, csp } = await open('UTC');
      try {
        await page.setViewportSize({ width: 390, height: 844 });
        await signInToConsole(page, t.url);
        await page.goto(`${t.url}/console/bookings`);
        const rows = page.locator('li.booking', { hasText: 'Grace Hopper' });
        await expect.poll(() => rows.count()).toBe(4);
        const second = rows.nth(1);
        await second.getByText('Series · 2 of 4').waitFor();
        await rows.nth(0).getByText('Series · 1 of 4').waitFor();
        await second.getByText('Repeats weekly · 4 occurrences').waitFor();

        // The seats: each marked, their session's two seats counted of the link's twelve.
        const seats = page.locator('li.booking.seat');
        await expect.poll(() => seats.count()).toBe(2);
        for (const seat of [seats.nth(0), seats.nth(1)]) {
          expect(await seat.locator('.badge.seat').textContent()).toBe('Seat');
          await seat.getByText('Group session: 2 of 12 seats booked in this list').waitFor();
        }
        expect(await seats.nth(0).getAttribute('data-session')).toBe(
          await seats.nth(1).getAttribute('data-session'),
        );

        // The occurrences, opened by keyboard.
        const occurrences = second.getByRole('button', { name: /occurrences of the series/i });
        await tabTo(page, occurrences);
        await page.keyboard.press('Enter');
        expect(await occurrences.getAttribute('aria-expanded')).toBe('true');
        const listed = second.getByRole('list', { name: 'Occurrences of the series' }).locator('li');
        await expect.poll(() => listed.count()).toBe(4);
        expect(await listed.nth(1).getAttribute('aria-current')).toBe('true');
        expect(await listed.nth(1).textContent()).toContain('(this one)');
        await expectNoSeriousViolations(page, 'bookings with a series and seats');
        await fitsPhone(page);

        // Cancel the second and the following: by keyboard, in the confirmation's scope choice.
        await tabTo(page, second.getByRole('button', { name: /^Cancel booking/ }));
        await page.keyboard.press('Enter');
        const dialog = page.getByRole('dialog');
        await dialog.waitFor();
        const thisOne = dialog.getByRole('radio', { name: 'This one' });
        expect(await thisOne.isChecked()).toBe(true);
        await thisOne.focus();
        await page.keyboard.press('ArrowDown');
        expect(await dialog.getByRole('radio', { name: 'This and following' }).isChecked()).toBe(true);
        await expectNoSeriousViolations(page, 'the scope of a cancellation');
        const confirm = dialog.getByRole('button', { name: 'Cancel this and the following' });
        await tabTo(page, confirm);
        await page.keyboard.press('Enter');
        await expect
          .poll(async () =>
            (await api('GET', `/v1/booking-series/${series.id}`)).series.occurrences.map(
              (o: Json) => o.status,
            ),
          )
          .toEqual(['confirmed', 'cancelled', 'cancelled', 'cancelled']);
        // The list follows: three cancelled, the first still confirmed and still "1 of 4".
        await expect.poll(() => page.locator('li.booking .badge.cancelled').count()).toBe(3);
        expect(await rows.nth(0).locator('.badge.confirmed').count()).toBe(1);
        await rows.nth(0).getByText('Series · 1 of 4').waitFor();
        await fitsPhone(page);
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    90_000,
  );

  it.skipIf(!run)(
    'creates a seated link through the editor (the seats rule shown first) and lets another repeat (its count refused first); the list shows "Seats: 12" and "Repeats" (390 px)',
    async () => {
      const { context, page, csp } = await open('UTC');
      try {
        await page.setViewportSize({ width: 390, height: 844 });
        await signInToConsole(page, t.url);
        await page.goto(`${t.url}/console/links`);
        await page.locator('#new-slug').waitFor();
        await page.getByLabel('Slug').fill('group-class');
        await page.getByLabel('Title', { exact: true }).fill('Group class');
        await page.getByLabel('Durations in minutes').fill('30, 60');
        await page.getByLabel('Seats per slot (optional)').fill('12');
        await page.getByLabel('Show the seats left on the booking page').check();
        await page.getByRole('button', { name: 'Create link' }).click();
        // Two durations: the API's rule, shown at the seats' group and read with it.
        await expect.poll(() => page.locator('#new-seats-error').textContent()).toMatch(/one duration/);
        const seatsGroup = page.getByRole('group', { name: 'Seats (group bookings)' });
        expect(await seatsGroup.getAttribute('aria-describedby')).toContain('new-seats-error');
        await expectNoSeriousViolations(page, 'links, seats refused');
        await fitsPhone(page);
        await page.getByLabel('Durations in minutes').fill('60');
        await page.getByRole('button', { name: 'Create link' }).click();
        const row = page.locator('li.row', { has: page.getByRole('heading', { name: 'Group class' }) });
        await row.waitFor();
        expect(await row.locator('.badge.seat').textContent()).toBe('Seats: 12');
        const made = (await api('GET', '/v1/booking-links')).booking_links.find(
          (l: Json) => l.slug === 'group-class',
        );
        expect(made).toMatchObject({ durations: [60], seats: { capacity: 12, show_remaining: true } });
        expect(made.recurrence).toBeNull();

        // Another link allowed to repeat weekly: 60 occurrences refused at the field, then 8.
        const weekly = await api(
          'POST',
          '/v1/booking-links',
          { slug: 'coaching', title: 'Coaching', durations: [45] },
          201,
        );
        await page.reload();
        const coaching = page.locator('li.row', { has: page.getByRole('heading', { name: 'Coaching' }) });
        await coaching.getByRole('button', { name: /^Edit/ }).click();
        await coaching.getByLabel('Weekly').check();
        await coaching.getByLabel('Most occurrences').fill('60');
        await coaching.getByRole('button', { name: 'Save changes' }).click();
        const max = coaching.getByLabel('Most occurrences');
        await expect.poll(() => max.getAttribute('aria-invalid')).toBe('true');
        expect(
          await coaching.locator(`#edit-${weekly.booking_link.id}-recurrence-max-error`).isVisible(),
        ).toBe(true);
        await expectNoSeriousViolations(page, 'links, recurrence refused');
        await max.fill('8');
        await coaching.getByRole('button', { name: 'Save changes' }).click();
        const repeating = page.locator('li.row', { has: page.getByRole('heading', { name: 'Coaching' }) });
        await repeating.locator('.badge.series').waitFor();
        expect(await repeating.locator('.badge.series').textContent()).toBe('Repeats');
        await repeating.getByText('Repeats weekly · up to 8 occurrences').waitFor();
        expect(
          (await api('GET', `/v1/booking-links/${weekly.booking_link.id}`)).booking_link.recurrence,
        ).toEqual({
          frequencies: ['weekly'],
          max_count: 8,
        });

        // Edited again: its form shows what is set; unticking Weekly takes the recurrence away.
        await repeating.getByRole('button', { name: /^Edit/ }).click();
        expect(await repeating.getByLabel('Weekly').isChecked()).toBe(true);
        expect(await repeating.getByLabel('Most occurrences').inputValue()).toBe('8');
        await repeating.getByLabel('Weekly').uncheck();
        await repeating.getByRole('button', { name: 'Save changes' }).click();
        await repeating.locator('form').waitFor({ state: 'detached' });
        await expect
          .poll(
            async () =>
              (await api('GET', `/v1/booking-links/${weekly.booking_link.id}`)).booking_link.recurrence,
          )
          .toBeNull();
        await fitsPhone(page);
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    90_000,
  );
});
