/**
 * The console's polls page in a real browser: an open poll created (its link shown once), its slots
 * and votes shown, closed.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../helpers/app.js';
import { CONSOLE_OWNER, signInToConsole } from '../helpers/browser.js';
import { consoleApp, expectNoSeriousViolations } from '../helpers/console-app.js';
import { serveCalendar, vcalendar } from '../helpers/ics.js';

const { run, t, open } = consoleApp({ owner: true });
const PASSWORD = CONSOLE_OWNER.password;

describe('console: polls', () => {
  it.skipIf(!run)(
    'creates an open poll (its link shown once), shows its slots and votes, and closes it',
    async () => {
      // The owner proposes as themself: their own calendar must be connected first.
      const signedIn = await (
        await t.call('POST', '/v1/sessions', { body: { email: 'owner@acme.example', password: PASSWORD } })
      ).json();
      const feed = await serveCalendar(vcalendar('\r\n'));
      const added = await t.call('POST', '/v1/calendars/ics', {
        token: signedIn.session.token,
        body: { url: feed.url },
      });
      expect(added.status).toBe(201);
      await feed.close();
      const { context, page, csp } = await open('UTC');
      try {
        await signInToConsole(page, t.url);
        await page.getByRole('link', { name: 'Polls' }).click();
        await page.getByText('No proposal or poll yet.').waitFor();
        await expectNoSeriousViolations(page, 'polls, empty');
        await page.getByLabel('Title').fill('Team lunch');
        await page.getByRole('button', { name: 'Add a time' }).click();
        await page.getByRole('button', { name: 'Create poll' }).click();
        const shared = page.getByLabel('The poll’s shared link', { exact: true });
        await shared.waitFor();
        expect(await shared.inputValue()).toContain('/p/');
        const row = page.locator('li.row', { has: page.getByRole('heading', { name: 'Team lunch' }) });
        await row.waitFor();
        await expectNoSeriousViolations(page, 'polls');
        await row.getByRole('button', { name: /^Details/ }).click();
        expect(await row.locator('tbody tr').count()).toBe(2);
        await row.getByRole('button', { name: /^Close poll/ }).click();
        const closed = page.locator('li.row', { has: page.getByRole('heading', { name: 'Team lunch' }) });
        await expect.poll(() => closed.locator('.badge').textContent()).not.toBe('proposed');
        const list = await (await t.call('GET', '/v1/proposals', { token: signedIn.session.token })).json();
        const poll = list.proposals.find((x: Json) => x.title === 'Team lunch');
        expect(poll.status).not.toBe('proposed');
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );
});
