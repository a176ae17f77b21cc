/**
 * The console's bookings page in a real browser: a booking listed, rescheduled to a free slot and
 * cancelled, the status filter.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../helpers/app.js';
import { signInToConsole } from '../helpers/browser.js';
import { consoleApp, expectNoSeriousViolations, openHost } from '../helpers/console-app.js';

const { run, t, open, firstKey } = consoleApp({ owner: true });

describe('console: bookings', () => {
  it.skipIf(!run)(
    'lists a booking in Bookings, reschedules it to a free slot and cancels it',
    async () => {
      const api = async (method: string, path: string, body?: unknown, status = 200): Promise<Json> => {
        const res = await t.call(method, path, { token: firstKey(), body });
        const json = await res.json();
        expect(res.status, JSON.stringify(json)).toBe(status);
        return json;
      };
      const hostId = await openHost(t, firstKey(), 'Dr Ada');
      const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
      const created = await api(
        'POST',
        '/v1/bookings',
        {
          principal_id: hostId,
          start_time: `${day}T10:00:00Z`,
          duration_minutes: 30,
          customer_email: 'grace@example.com',
          customer_name: 'Grace Hopper',
        },
        201,
      );
      const id = created.booking.id as string;

      const { context, page, csp } = await open('UTC');
      try {
        await signInToConsole(page, t.url);
        await page.getByRole('link', { name: 'Bookings' }).click();
        const row = page.locator('li.booking', { hasText: 'Grace Hopper' });
        await row.waitFor();
        await expectNoSeriousViolations(page, 'bookings');
        await row.getByRole('button', { name: /Details/ }).click();
        await row.getByText('Dr Ada', { exact: true }).waitFor();

        await row.getByRole('button', { name: 'Reschedule' }).click();
        await row.getByRole('radio', { name: '12:00' }).check();
        await expectNoSeriousViolations(page, 'reschedule');
        await row.getByRole('button', { name: 'Move the booking' }).click();
        await expect
          .poll(async () => (await api('GET', `/v1/bookings/${id}`)).booking.start_time)
          .toBe(`${day}T12:00:00.000Z`);

        const moved = page.locator('li.booking', { hasText: 'Grace Hopper' });
        await moved.getByRole('button', { name: /Cancel booking/ }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel the booking' }).click();
        await moved.getByText('cancelled', { exact: true }).waitFor();
        expect((await api('GET', `/v1/bookings/${id}`)).booking.status).toBe('cancelled');

        // The status filter: no confirmed booking is left.
        await page.getByLabel('Status').selectOption('confirmed');
        await page.getByRole('button', { name: 'Show bookings' }).click();
        await page.getByText('No booking matches.').waitFor();
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );
});
