/**
 * The console's webhooks page in a real browser: a webhook to a local receiver, a test event, its
 * failed delivery with every attempt, retried.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInToConsole } from '../helpers/browser.js';
import { consoleApp, expectNoSeriousViolations } from '../helpers/console-app.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const { run, t, open } = consoleApp({ owner: true });
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe('console: webhooks', () => {
  it.skipIf(!run)(
    'adds a webhook to a local receiver, sends a test event, shows its failed delivery with every attempt and retries it',
    async () => {
      const { context, page, csp } = await open('UTC');
      try {
        // The receiver refuses the first two attempts (the first and its one scheduled retry).
        receiver.setBehaviour((n) => ({ status: n <= 2 ? 500 : 200 }));
        await signInToConsole(page, t.url);
        await page.goto(`${t.url}/console/webhooks`);
        await page.getByText('No webhooks yet.').waitFor();
        await expectNoSeriousViolations(page, 'webhooks, empty');
        await page.getByLabel('Receiver URL').fill(receiver.url);
        await page.getByLabel('booking.created').check();
        await page.getByRole('button', { name: 'Add webhook' }).click();
        const secret = page.locator('#new-secret');
        await secret.waitFor();
        expect(await secret.inputValue()).toMatch(/^whsec_/);
        await page.getByRole('heading', { name: receiver.url }).waitFor();
        await expectNoSeriousViolations(page, 'webhooks with one');

        await page.getByRole('button', { name: 'Send test event' }).click();
        await receiver.waitFor(2, 10_000);
        // The deliveries list follows the pending delivery by itself until it has failed.
        const failed = page.locator('li.delivery', { hasText: 'failed' });
        await failed.waitFor();
        expect(await failed.locator('tbody tr').count()).toBe(2);
        await expect.poll(() => failed.locator('tbody').textContent()).toContain('HTTP 500');
        await expectNoSeriousViolations(page, 'deliveries');
        await failed.getByRole('button', { name: /Retry/ }).click();
        await page.locator('li.delivery', { hasText: 'succeeded' }).waitFor();
        expect(receiver.received.length).toBe(3);
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );
});
