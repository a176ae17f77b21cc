/**
 * The console's hosts page in a real browser: a host added, its weekly schedule with an exception,
 * an ICS calendar and a connect link.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../helpers/app.js';
import { signInToConsole } from '../helpers/browser.js';
import { consoleApp, expectNoSeriousViolations } from '../helpers/console-app.js';
import { serveCalendar, vcalendar } from '../helpers/ics.js';

const { run, t, open, firstKey } = consoleApp({ owner: true });

describe('console: hosts', () => {
  it.skipIf(!run)(
    'adds a host, edits its weekly schedule with an exception, adds an ICS calendar and makes a connect link',
    async () => {
      const feed = await serveCalendar(vcalendar('\r\n'));
      const { context, page, csp } = await open('UTC');
      try {
        await signInToConsole(page, t.url);
        await page.getByRole('link', { name: 'Hosts' }).click();
        await page.getByLabel('Name').fill('Dr Bob');
        await page.getByLabel('E-mail (optional)').fill('bob@acme.example');
        await page.getByRole('button', { name: 'Add host' }).click();
        const row = page.locator('li.row', { has: page.getByRole('heading', { name: 'Dr Bob' }) });
        await row.waitFor();
        await expectNoSeriousViolations(page, 'hosts');

        await row.getByRole('button', { name: /^Schedule/ }).click();
        const form = row.getByRole('form', { name: 'Schedule of Dr Bob' });
        await form.waitFor();
        // Start from no hours: remove whatever the default schedule has.
        for (let i = 0; i < 20 && (await form.getByRole('button', { name: /^Remove/ }).count()) > 0; i++) {
          await form
            .getByRole('button', { name: /^Remove/ })
            .first()
            .click();
        }
        await form.getByRole('button', { name: 'Add hours' }).click();
        await form.getByLabel('Day', { exact: true }).selectOption('tue');
        await form.getByLabel('From', { exact: true }).fill('10:00');
        await form.getByRole('button', { name: 'Add an exception' }).click();
        await form.getByLabel('Date', { exact: true }).fill('2030-01-01');
        await form.getByLabel('Time zone').fill('Europe/Berlin');
        await expectNoSeriousViolations(page, 'schedule editor');
        await form.getByRole('button', { name: 'Save schedule' }).click();
        await form.getByText('Schedule saved.').waitFor();
        const hosts = await (await t.call('GET', '/v1/hosts', { token: firstKey() })).json();
        const bob = hosts.hosts.find((h: Json) => h.display_name === 'Dr Bob');
        const saved = await (
          await t.call('GET', `/v1/principals/${bob.principal_id}/schedule`, { token: firstKey() })
        ).json();
        expect(saved.schedule).toMatchObject({
          timezone: 'Europe/Berlin',
          weekly: [{ day: 'tue', start: '10:00', end: '17:00' }],
          overrides: [{ date: '2030-01-01', unavailable: true }],
        });

        await row.getByRole('button', { name: /^Calendars/ }).click();
        await row.getByText('No calendar connected').waitFor();
        await row.getByLabel('ICS feed address').fill(feed.url);
        await row.getByRole('button', { name: 'Add ICS feed' }).click();
        await row
          .locator('.calendars li.row', { hasText: 'ics' })
          .getByText('connected', { exact: true })
          .waitFor();
        await row.getByRole('button', { name: 'Make a connect link' }).click();
        const link = row.getByLabel('Connect link to send the host');
        await link.waitFor();
        expect(await link.inputValue()).toContain('/connect/');
        await expectNoSeriousViolations(page, 'calendars');
        expect(csp).toEqual([]);
      } finally {
        await context.close();
        await feed.close();
      }
    },
    60_000,
  );
});
