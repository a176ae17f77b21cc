/**
 * The console's way in (README.md, Console), over HTTP and in a real browser: a one-time setup link
 * (random, stored hashed) creates the first account, its owner and its first secret key, shown once
 * (and not after a reload); strict CSP on every page; sign out and in again; the overview's
 * requests-per-hour chart and its table; a publishable key for a domain, revoked after confirmation;
 * axe-core finds no serious or critical violation on the way.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../helpers/app.js';
import { CONSOLE_OWNER } from '../helpers/browser.js';
import { consoleApp, expectNoSeriousViolations } from '../helpers/console-app.js';

const { run, t, open } = consoleApp();
const PASSWORD = CONSOLE_OWNER.password;

describe('console: getting in', () => {
  let setupPath: string;

  it('makes setup links of 256 random bits, stored only as their hash', async () => {
    setupPath = (await t.ctx.modules.console.setupLink()) as string;
    const token = new URL(setupPath, t.url).searchParams.get('token') ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await t.ctx.db.selectFrom('console_setup_tokens').select(['token_hash']).execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((r) => r.token_hash)).not.toContain(token);
  });

  it('serves every console page with a strict Content-Security-Policy', async () => {
    for (const path of ['/console/setup', '/console/sign-in']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status, path).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
    }
    const keys = await fetch(`${t.url}/console/keys`, { redirect: 'manual' });
    expect(keys.status).toBe(303);
    expect(keys.headers.get('location')).toBe('/console/sign-in');
  });

  it('refuses a setup post from another origin, leaving the link usable', async () => {
    const token = new URL(setupPath, t.url).searchParams.get('token');
    const res = await fetch(`${t.url}/console/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: JSON.stringify({ token, account_name: 'Evil', email: 'evil@example.com', password: PASSWORD }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).type).toMatch(/\/errors\/forbidden$/);
    const state: Json = await (await fetch(`${t.url}/console/setup/state?token=${token}`)).json();
    expect(state.state).toBe('valid');
    expect(await t.ctx.modules.accounts.listAccounts()).toEqual([]);
  });

  it.skipIf(!run)(
    'walks setup → first key shown once (not after a reload) → sign out and in → a publishable key for a domain → revoke, with no serious axe violation',
    async () => {
      const { context, page, csp } = await open('Europe/Berlin');
      try {
        await page.goto(`${t.url}${setupPath}`);
        await page.getByLabel('Business name').fill('Acme Physio');
        await page.getByLabel('Your e-mail').fill('owner@acme.example');
        await expectNoSeriousViolations(page, 'setup');
        await page.getByLabel('Password', { exact: true }).fill('short');
        await page.getByRole('button', { name: 'Create the account' }).click();
        // The API's field error shows beside the field; the link is not used up by a refused form.
        await expect.poll(() => page.locator('#password-error').textContent()).toMatch(/10|characters/);
        await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await page.getByRole('button', { name: 'Create the account' }).click();
        const shown = page.locator('#first-key');
        await shown.waitFor();
        const firstKey = await shown.inputValue();
        expect(firstKey).toMatch(/^svc_sk_/);
        const me = await t.call('GET', '/v1/me', { token: firstKey });
        expect(me.status).toBe(200);
        expect((await me.json()).account.name).toBe('Acme Physio');
        await expectNoSeriousViolations(page, 'setup done');

        // Reloading (the address no longer has the token) and opening the link again show no key.
        await page.reload();
        await page.getByRole('heading', { name: 'Set up Kairos' }).waitFor();
        expect(await page.content()).not.toContain(firstKey);
        await page.goto(`${t.url}${setupPath}`);
        await page.getByText('This setup link was already used.').waitFor();
        expect(await page.content()).not.toContain(firstKey);

        // No credential is readable by the page: the cookie is httpOnly.
        expect(await page.evaluate('document.cookie')).toBe('');
        const cookies = await context.cookies();
        const session = cookies.find((c) => c.name === 'kairos_console');
        expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });

        await page.goto(`${t.url}/console`);
        await page.getByRole('heading', { name: 'Acme Physio' }).waitFor();
        // The overview: one usage row (the first key, with what is left of this hour), no booking, no failing webhook.
        const usage = page.locator('table.usage tbody tr');
        await usage.first().waitFor();
        expect(await usage.count()).toBe(1);
        await expect.poll(() => usage.first().textContent()).toMatch(/of \d+/);
        // The chart: one bar an hour (a day, then a week), its figures as a table for screen readers.
        const bars = page.locator('.chart svg g');
        expect(await bars.count()).toBeGreaterThanOrEqual(24);
        await expect.poll(() => page.locator('.chart figcaption').textContent()).toMatch(/[1-9]\d* in all/);
        await page.getByText('The figures as a table').click();
        expect(await page.locator('table.hours tbody tr').count()).toBeGreaterThanOrEqual(1);
        await page.getByLabel('Last 7 days').check();
        await expect.poll(() => bars.count()).toBeGreaterThanOrEqual(168);
        await expectNoSeriousViolations(page, 'overview, the chart’s table open');
        await page.getByText('No upcoming booking.').waitFor();
        await page.getByText('None: every webhook').waitFor();
        await expectNoSeriousViolations(page, 'overview');
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.waitForURL(`${t.url}/console/sign-in`);
        expect((await context.cookies()).find((c) => c.name === 'kairos_console')).toBeUndefined();
        await expectNoSeriousViolations(page, 'sign-in');

        await page.getByLabel('E-mail').fill('owner@acme.example');
        await page.getByLabel('Password').fill('not the password');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').waitFor();
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(`${t.url}/console`);

        await page.getByRole('link', { name: 'API keys' }).click();
        await page.waitForURL(`${t.url}/console/keys`);
        await page.getByText('svc_sk_', { exact: false }).first().waitFor();
        await expectNoSeriousViolations(page, 'keys');
        await page.getByLabel('Name').fill('Shop widget');
        await page.getByLabel('Publishable (web pages)').check();
        await page.getByLabel('Allowed domains').fill('shop.example.com');
        await page.getByRole('button', { name: 'Create key' }).click();
        const created = page.locator('#new-key');
        await created.waitFor();
        expect(await created.inputValue()).toMatch(/^svc_pk_/);
        await page.getByRole('heading', { name: 'Shop widget' }).waitFor();
        const listed = await (await t.call('GET', '/v1/api-keys', { token: firstKey })).json();
        const widget = listed.api_keys.find((k: Json) => k.name === 'Shop widget');
        expect(widget).toMatchObject({ key_type: 'publishable', allowed_domains: ['shop.example.com'] });
        await expectNoSeriousViolations(page, 'keys with a new key');

        // Revoke, after the confirmation.
        const row = page.locator('li.row', { has: page.getByRole('heading', { name: 'Shop widget' }) });
        await row.getByRole('button', { name: /Revoke/ }).click();
        const dialog = page.getByRole('dialog');
        await dialog.waitFor();
        await expectNoSeriousViolations(page, 'revoke dialog');
        await dialog.getByRole('button', { name: 'Revoke the key' }).click();
        await row.getByText('revoked').waitFor();
        const after = await (await t.call('GET', `/v1/api-keys/${widget.id}`, { token: firstKey })).json();
        expect(after.status ?? after.api_key?.status).toBe('revoked');

        // At 390 px wide nothing scrolls sideways.
        await page.setViewportSize({ width: 390, height: 844 });
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
        await page.goto(`${t.url}/console/webhooks`);
        await expectNoSeriousViolations(page, 'webhooks');
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );
});
