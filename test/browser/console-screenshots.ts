/**
 * The console's part of `npm run screenshots` (test/browser/screenshots.ts): every console page at
 * both widths, with content — setup, sign-in, overview, keys (a key shown once), webhooks (their
 * deliveries), hosts (a schedule), booking links (the embed preview), bookings (one's details), polls
 * (votes), network (a connection, a consent, an invitation being written). The pictures are
 * docs/screenshots/console-<page>-<width>.png.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { Json } from '../helpers/app.js';

export type Width = 'desktop' | 'phone';
export interface ShotKit {
  base: string;
  now: string;
  widths: Record<Width, { width: number; height: number }>;
  shot: (page: Page, name: string, width: Width) => Promise<void>;
  call: (method: string, path: string, key: string | null, body?: unknown) => Promise<Json>;
  mailed: (to: string, path: string) => Promise<string>;
  drain: () => Promise<void>;
}

const OWNER = { email: 'owner@acme.example', password: 'correct horse battery' };

async function context(browser: Browser, kit: ShotKit, width: Width): Promise<Page> {
  const ctx = await browser.newContext({
    viewport: kit.widths[width],
    timezoneId: 'Europe/London',
    locale: 'en-GB',
  });
  const page = await ctx.newPage();
  await page.clock.setFixedTime(kit.now);
  return page;
}

/** The setup page, taken while the server has no account yet. */
export async function consoleSetupShots(browser: Browser, kit: ShotKit, setupPath: string): Promise<void> {
  for (const width of ['desktop', 'phone'] as const) {
    const page = await context(browser, kit, width);
    await page.goto(`${kit.base}${setupPath}`);
    await page.getByLabel('Business name').fill('Acme');
    await page.getByLabel('Your e-mail').fill(OWNER.email);
    await kit.shot(page, 'console-setup', width);
    await page.context().close();
  }
}

/**
 * What the console's pages show, made through the API for the account `key` belongs to: its owner
 * (who signs in), webhooks with deliveries (one receiver answers 200, one 503), a poll with votes, a
 * connection with a consent. `linkSlug` is a booking link of that account.
 */
export async function consoleData(
  kit: ShotKit,
  o: {
    accountId: string;
    key: string;
    linkSlug: string;
    feedUrl: string;
    sam: { id: string; token: string; email: string };
  },
  createUser: (input: {
    accountId: string;
    email: string;
    password: string;
    displayName: string;
  }) => Promise<unknown>,
): Promise<() => void> {
  await createUser({
    accountId: o.accountId,
    email: OWNER.email,
    password: OWNER.password,
    displayName: 'Ada Byron',
  });
  const { session } = await kit.call('POST', '/v1/sessions', null, OWNER);
  const token: string = session.token;
  await kit.call('POST', '/v1/calendars/ics', token, { url: o.feedUrl });

  const receiver = createServer((req, res) => {
    req.resume();
    res.writeHead(req.url?.startsWith('/down') ? 503 : 200).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const at = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const events = ['booking.created', 'booking.updated', 'booking.cancelled'];
  const ok = await kit.call('POST', '/v1/webhooks', o.key, { url: `${at}/hooks/kairos`, events });
  const down = await kit.call('POST', '/v1/webhooks', o.key, { url: `${at}/down/crm`, events });
  // A booking the webhooks hear of, on a day the booking page's pictures do not show.
  await kit.call('POST', `/v1/public/links/${o.linkSlug}/bookings`, null, {
    customer_name: 'Ada Lovelace',
    customer_email: 'ada@example.com',
    start_time: '2026-03-12T10:00:00.000Z',
    answers: { company: 'Analytical Engines Ltd' },
  });
  await kit.call('POST', `/v1/webhooks/${ok.id}/test`, o.key, {});
  await kit.call('POST', `/v1/webhooks/${down.id}/test`, o.key, {});

  const slot = (iso: string, minutes: number) => ({
    start: iso,
    end: new Date(Date.parse(iso) + minutes * 60_000).toISOString(),
  });
  const poll = await kit.call('POST', '/v1/proposals', token, {
    mode: 'poll',
    title: 'Spring planning',
    message: 'Pick the mornings that work for you.',
    slots: [slot('2026-03-10T09:00:00.000Z', 60), slot('2026-03-11T09:00:00.000Z', 60)],
  });
  for (const [name, i] of [
    ['Ana', 0],
    ['Ben', 1],
    ['Cy', 0],
  ] as const) {
    await kit.call('POST', `/v1/proposals/${poll.proposal.id}/response`, null, {
      action: 'accept',
      token: poll.magic_link_url.split('/').pop(),
      selected_slot_id: poll.proposal.slots[i].id,
      voter_name: name,
      voter_email: `${name.toLowerCase()}@example.com`,
    });
  }

  await kit.call('POST', '/v1/network/invitations', token, {
    invitee_email: o.sam.email,
    invitee_name: 'Sam',
    relationship_type: 'partner',
  });
  const invitation = await kit.mailed(o.sam.email, '/invitations/');
  const invitationToken = invitation.split('/').pop();
  await kit.call('POST', `/v1/network/invitations/${invitationToken}/accept`, o.sam.token, {});
  await kit.call('POST', '/v1/consents', token, {
    grantee_id: o.sam.id,
    scopes: ['availability:read:freebusy', 'booking:propose'],
  });
  await kit.drain();
  return () => receiver.close();
}

/** Every signed-in console page, at both widths. */
export async function consoleShots(browser: Browser, kit: ShotKit): Promise<void> {
  for (const width of ['desktop', 'phone'] as const) {
    const page = await context(browser, kit, width);
    await page.goto(`${kit.base}/console/sign-in`);
    await page.getByLabel('E-mail').fill(OWNER.email);
    await page.getByLabel('Password').fill(OWNER.password);
    await kit.shot(page, 'console-sign-in', width);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Acme' }).waitFor();
    await page.locator('table.usage').first().waitFor();
    await page.getByRole('heading', { name: 'Failing webhooks' }).waitFor();
    await page.waitForFunction("!document.querySelector('main [role=status]:not(:empty)')");
    await kit.shot(page, 'console-overview', width);

    await page.goto(`${kit.base}/console/keys`);
    await page.getByLabel('Name').fill(width === 'desktop' ? 'Production server' : 'Phone test');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key').waitFor();
    await page.locator('.row').first().waitFor();
    await kit.shot(page, 'console-keys', width);

    await page.goto(`${kit.base}/console/webhooks`);
    await page.getByRole('button', { name: 'Show deliveries' }).first().click();
    await page.locator('table.attempts, .deliveries li').first().waitFor();
    await kit.shot(page, 'console-webhooks', width);

    await page.goto(`${kit.base}/console/hosts`);
    await page.getByRole('button', { name: 'Schedule' }).first().click();
    await page.getByRole('button', { name: 'Add hours' }).waitFor();
    await kit.shot(page, 'console-hosts', width);

    await page.goto(`${kit.base}/console/links`);
    await page
      .getByRole('button', { name: /^Embed/ })
      .first()
      .click();
    await page.frameLocator('iframe.preview').locator('.slot').first().waitFor();
    await page.locator('section.embed h4').evaluate((h) => h.scrollIntoView({ block: 'start' }));
    await page.waitForTimeout(200);
    await kit.shot(page, 'console-links', width);

    await page.goto(`${kit.base}/console/bookings`);
    const ada = page.locator('li.booking', { hasText: 'Ada Lovelace' });
    await ada.getByRole('button', { name: /^Details/ }).click();
    await ada.locator('dl.facts').waitFor();
    await ada.evaluate((li) => li.scrollIntoView({ block: 'start' }));
    await kit.shot(page, 'console-bookings', width);

    await page.goto(`${kit.base}/console/polls`);
    await page
      .getByRole('button', { name: /^Details/ })
      .first()
      .click();
    await page.locator('table.attempts').first().waitFor();
    await kit.shot(page, 'console-polls', width);

    await page.goto(`${kit.base}/console/network`);
    await page.locator('li.row').first().waitFor();
    const email = page.getByLabel('Their e-mail');
    if ((await email.count()) > 0) await email.fill('lee@example.com');
    await kit.shot(page, 'console-network', width);
    await page.context().close();
  }
}
