/**
 * The console's network page in a real browser (empty states, an invitation to connect sent), and
 * every console page at 390 px wide: no sideways scroll, no serious or critical axe violation.
 */
import { describe, expect, it } from 'vitest';
import { signInToConsole } from '../helpers/browser.js';
import { consoleApp, expectNoSeriousViolations } from '../helpers/console-app.js';

const { run, t, open } = consoleApp({ owner: true });

describe('console: network, and every page at 390 px', () => {
  it.skipIf(!run)(
    'shows the network and consents pages with their empty states, and every page passes axe at 390 px wide',
    async () => {
      const { context, page, csp } = await open('UTC');
      try {
        await page.setViewportSize({ width: 390, height: 844 });
        await signInToConsole(page, t.url);
        await page.getByRole('link', { name: 'Network' }).click();
        await page.getByText('No connection yet.').waitFor();
        await page.getByText('No consent here yet.').waitFor();
        await page.getByText('No invitation here.').waitFor();
        await page.getByLabel('Show', { exact: true }).selectOption('grantee');
        await page.getByText('No consent here yet.').waitFor();
        // An invitation to connect: the address's error beside it, then sent (its mail in the outbox).
        await page.getByLabel('Their e-mail').fill('not an address');
        await page.getByRole('button', { name: 'Send invitation' }).click();
        await page.locator('#invitee-email-error').waitFor();
        await page.getByLabel('Their e-mail').fill('lee@partner.example');
        await page.getByLabel('Their name (optional)').fill('Lee');
        await page.getByLabel('They are your').selectOption('partner');
        await page.getByRole('button', { name: 'Send invitation' }).click();
        await page.getByText('Invitation sent to lee@partner.example').waitFor();
        // The list of invitations sent (from the API) shows it, waiting for an answer; and under All.
        const sent = page.locator('li.row', { hasText: 'Lee · lee@partner.example' });
        await sent.getByText('pending').waitFor();
        await page.getByLabel('Invitations to show').selectOption('');
        await sent.waitFor();
        await page.getByLabel('Invitations to show').selectOption('declined');
        await page.getByText('No invitation here.').waitFor();
        await expectNoSeriousViolations(page, 'network, invitation sent');
        const mails = await t.ctx.db
          .selectFrom('mail_outbox')
          .select('to_address')
          .where('to_address', '=', 'lee@partner.example')
          .execute();
        expect(mails.length).toBe(1);
        for (const path of [
          '/console',
          '/console/keys',
          '/console/webhooks',
          '/console/hosts',
          '/console/links',
          '/console/bookings',
          '/console/polls',
          '/console/network',
        ]) {
          await page.goto(`${t.url}${path}`);
          await page.locator('main h1').waitFor();
          await page.waitForLoadState('networkidle');
          await expectNoSeriousViolations(page, `${path} at 390 px`);
          const wide = await page.evaluate('document.documentElement.scrollWidth');
          expect(wide, `${path} scrolls sideways`).toBeLessThanOrEqual(390);
        }
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    90_000,
  );
});
