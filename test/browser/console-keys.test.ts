/**
 * The console's API keys page in a real browser: a key created with the keyboard alone.
 */
import { describe, expect, it } from 'vitest';
import { CONSOLE_OWNER } from '../helpers/browser.js';
import { consoleApp } from '../helpers/console-app.js';

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
});
