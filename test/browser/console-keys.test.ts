/**
 * The console's API keys page in a real browser: a key created with the keyboard alone; a test key
 * created, shown with its "Test" badge, and the Live | Test switch that lists one mode's keys, by
 * keyboard and at 390 px, under the strict CSP.
 */
import { describe, expect, it } from 'vitest';
import { CONSOLE_OWNER, signInToConsole } from '../helpers/browser.js';
import { consoleApp, expectNoSeriousViolations } from '../helpers/console-app.js';

const { run, t, open } = consoleApp({ owner: true });
const PASSWORD = CONSOLE_OWNER.password;

describe('console: API keys', () => {
  it.skipIf(!run)(
    'creates a key with the keyboard alone',
    async () => {
      const { context, page } = await open('UTC');
      try {
        await page.goto(`${t.url}/console/sign-in`);
        await page.keyboard.press('Tab');
        await page.keyboard.type('owner@acme.example');
        await page.keyboard.press('Tab');
        await page.keyboard.type(PASSWORD);
        await page.keyboard.press('Enter');
        await page.waitForURL(`${t.url}/console`);
        await page.goto(`${t.url}/console/keys`);
        await page.locator('#key-name').waitFor();
        for (let i = 0; i < 30; i++) {
          if (await page.evaluate('document.activeElement?.id === "key-name"')) break;
          await page.keyboard.press('Tab');
        }
        expect(await page.evaluate('document.activeElement?.id')).toBe('key-name');
        await page.keyboard.type('Keyboard key');
        await page.keyboard.press('Enter');
        await page.locator('#new-key').waitFor();
        expect(await page.evaluate('document.activeElement?.id')).toBe('new-key');
        expect(await page.locator('#new-key').inputValue()).toMatch(/^svc_sk_/);
      } finally {
        await context.close();
      }
    },
    30_000,
  );

  it.skipIf(!run)(
    'creates a test key, shows it with a Test badge, and the Live | Test switch lists one mode at a time (keyboard, 390 px)',
    async () => {
      const { context, page, csp } = await open('UTC');
      try {
        await page.setViewportSize({ width: 390, height: 844 });
        await signInToConsole(page, t.url);
        await page.goto(`${t.url}/console/keys`);
        const rows = page.locator('li.row');
        const row = (name: string) => page.locator('li.row', { has: page.getByRole('heading', { name }) });
        // Live, at first: the live keys, none with a Test badge.
        expect(await page.getByRole('radio', { name: 'Live' }).first().isChecked()).toBe(true);
        await rows.first().waitFor();
        expect(await page.locator('li.row .badge.test').count()).toBe(0);

        // A test key: Mode Test in the form; shown once with its test prefix.
        await page.getByLabel('Name').fill('CI test key');
        await page.locator('#key-test').check();
        await page.getByRole('button', { name: 'Create key' }).click();
        await page.locator('#new-key').waitFor();
        expect(await page.locator('#new-key').inputValue()).toMatch(/^svc_sk_test_/);
        // The list follows to the test keys: the new one, with its badge; no live key.
        await row('CI test key').waitFor();
        expect(await page.locator('#mode-test').isChecked()).toBe(true);
        expect(new URL(page.url()).searchParams.get('mode')).toBe('test');
        await expect.poll(() => rows.count()).toBe(1);
        const badge = row('CI test key').locator('.badge.test');
        expect(await badge.isVisible()).toBe(true);
        expect(await badge.textContent()).toBe('Test');
        expect(await row('CI test key').getByText('test', { exact: true }).count()).toBe(1);
        await expectNoSeriousViolations(page, 'keys, test mode');
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);

        // The switch by keyboard: from Test, the left arrow selects Live; the test key leaves the list.
        await page.locator('#mode-test').focus();
        await page.keyboard.press('ArrowLeft');
        expect(await page.locator('#mode-live').isChecked()).toBe(true);
        await expect.poll(() => row('CI test key').count()).toBe(0);
        await rows.first().waitFor();
        expect(await page.locator('li.row .badge.test').count()).toBe(0);
        expect(new URL(page.url()).searchParams.get('mode')).toBeNull();
        await page.keyboard.press('ArrowRight');
        await row('CI test key').waitFor();

        // The API agrees: the key is a test key of the account.
        const listed = await t.ctx.db
          .selectFrom('api_keys')
          .select(['environment'])
          .where('name', '=', 'CI test key')
          .executeTakeFirstOrThrow();
        expect(listed.environment).toBe('test');

        // Opened with ?mode=test, the page lists the test keys.
        await page.goto(`${t.url}/console/keys?mode=test`);
        await row('CI test key').waitFor();
        expect(await page.locator('#mode-test').isChecked()).toBe(true);
        // The overview's usage table marks it too.
        await page.goto(`${t.url}/console`);
        const usage = page.locator('table.usage tr', { has: page.getByText('CI test key') });
        await usage.locator('.badge.test').waitFor();
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );
});
