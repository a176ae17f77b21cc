/**
 * The console's booking links page in a real browser: a link created (its field error first) and
 * edited, its questions (an error beside its field, reordered), its embed snippets with a live
 * preview; a public booking on it listed in Bookings, also filtered by link.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/app.js';
import { signInToConsole } from '../helpers/browser.js';
import { consoleApp, expectNoSeriousViolations, openHost } from '../helpers/console-app.js';

const { run, t, open, firstKey } = consoleApp({ owner: true });

// The account's one bookable host: a new link books it (the console ticks the only host), and the
// public booking below needs free time.
beforeAll(async () => {
  await openHost(t, firstKey(), 'Dr Ada');
});

describe('console: booking links', () => {
  it.skipIf(!run)(
    'creates a booking link (its field error shown first), edits it, generates its embed snippets with a live preview; a public booking on it appears in Bookings',
    async () => {
      const { context, page, csp } = await open('UTC');
      try {
        await signInToConsole(page, t.url);
        await page.getByRole('link', { name: 'Booking links' }).click();
        await page.getByText('No booking link yet.').waitFor();
        await expectNoSeriousViolations(page, 'links, empty');
        await page.getByLabel('Slug').fill('Not A Slug');
        await page.getByLabel('Title', { exact: true }).fill('Intro call');
        await page.getByRole('button', { name: 'Create link' }).click();
        await page.locator('#new-slug-error').waitFor();
        await page.getByLabel('Slug').fill('intro-call');
        await page.getByLabel('Durations in minutes').fill('30, 60');
        await page.getByRole('button', { name: 'Create link' }).click();
        const row = page.locator('li.row', { has: page.getByRole('heading', { name: 'Intro call' }) });
        await row.waitFor();
        await expectNoSeriousViolations(page, 'links');
        const listed = await (await t.call('GET', '/v1/booking-links', { token: firstKey() })).json();
        const link = listed.booking_links.find((l: Json) => l.slug === 'intro-call');
        expect(link).toMatchObject({ title: 'Intro call', durations: [30, 60] });
        expect(link.host_ids.length).toBe(1);

        await row.getByRole('button', { name: /^Edit/ }).click();
        await row.getByLabel('Title', { exact: true }).fill('Intro call (30 or 60)');
        await row.getByRole('button', { name: 'Save changes' }).click();
        const edited = page.locator('li.row', {
          has: page.getByRole('heading', { name: 'Intro call (30 or 60)' }),
        });
        await edited.waitFor();

        // Questions: two with the same answer key are refused beside the second one's key; then the
        // second is given its own key, moved up, and saved in that order.
        await edited.getByRole('button', { name: /^Edit/ }).click();
        await edited.getByRole('button', { name: 'Add a question' }).click();
        await edited.getByLabel('Question 1', { exact: true }).fill('Company');
        await edited.getByRole('button', { name: 'Add a question' }).click();
        await edited.getByLabel('Question 2', { exact: true }).fill('Topic');
        const second = edited.locator('li.question').nth(1);
        await second.getByLabel('Answer', { exact: true }).selectOption('select');
        await second.getByLabel('Choices, one a line').fill('Pricing\nSupport');
        await second.getByLabel(/^Answer key/).fill('company');
        await expectNoSeriousViolations(page, 'links, question editor');
        await edited.getByRole('button', { name: 'Save changes' }).click();
        await expect.poll(() => second.locator('.error').textContent()).toMatch(/another question/);
        expect(await second.getByLabel(/^Answer key/).getAttribute('aria-invalid')).toBe('true');
        await expectNoSeriousViolations(page, 'links, question error');
        await second.getByLabel(/^Answer key/).fill('topic');
        await second.getByRole('button', { name: 'Move up question 2' }).click();
        await edited.getByRole('button', { name: 'Save changes' }).click();
        // The form closes once the save is answered (its button reads "Saving…" while in flight).
        await edited.locator('form').waitFor({ state: 'detached' });
        const withQuestions = await (
          await t.call('GET', `/v1/booking-links/${link.id}`, { token: firstKey() })
        ).json();
        expect(withQuestions.booking_link.questions).toMatchObject([
          { id: 'topic', label: 'Topic', type: 'select', options: ['Pricing', 'Support'] },
          { id: 'company', label: 'Company', type: 'text' },
        ]);

        await edited.getByRole('button', { name: /^Embed/ }).click();
        const code = edited.getByLabel('Snippet', { exact: true });
        expect(await code.inputValue()).toContain('data-kairos-inline="intro-call"');
        await edited.getByLabel('Floating button').check();
        expect(await code.inputValue()).toContain('data-button="intro-call"');
        const preview = edited.frameLocator('iframe.preview');
        await preview.getByRole('heading', { name: 'Intro call (30 or 60)' }).waitFor();
        await expectNoSeriousViolations(page, 'links with the embed');

        // A booking made through the public booking surface (what the page calls) appears in Bookings.
        const from = new Date(Date.now() + 86_400_000).toISOString();
        const to = new Date(Date.now() + 4 * 86_400_000).toISOString();
        const free: Json = await (
          await fetch(
            `${t.url}/v1/public/links/intro-call/availability?from=${from}&to=${to}&duration_minutes=30`,
          )
        ).json();
        const slot = free.slots[0];
        const booked = await fetch(`${t.url}/v1/public/links/intro-call/bookings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            start_time: slot.start,
            duration_minutes: 30,
            customer_email: 'linus@example.com',
            customer_name: 'Linus Public',
          }),
        });
        expect(booked.status).toBe(201);
        await page.getByRole('link', { name: 'Bookings', exact: true }).click();
        const publicRow = page.locator('li.booking', { hasText: 'Linus Public' });
        await publicRow.waitFor();
        expect(await publicRow.textContent()).toContain('Intro call (30 or 60)');
        // Filtered by the link (also what the link's own "Bookings" leads to); another link's list is empty.
        await page.getByLabel('Booking link').selectOption(link.id);
        await page.getByRole('button', { name: 'Show bookings' }).click();
        // The unfiltered list stays until the filtered one arrives: wait for the list to change.
        await expect.poll(() => page.locator('li.booking').count()).toBe(1);
        await publicRow.waitFor();
        const other = await t.call('POST', '/v1/booking-links', {
          token: firstKey(),
          body: { slug: 'other-call', title: 'Other call', durations: [30] },
        });
        expect(other.status).toBe(201);
        const otherId = (await other.json()).booking_link.id;
        await page.goto(`${t.url}/console/bookings?link=${otherId}`);
        await page.getByText('No booking matches.').waitFor();
        expect(await page.getByLabel('Booking link').inputValue()).toBe(otherId);
        expect(csp).toEqual([]);
      } finally {
        await context.close();
      }
    },
    60_000,
  );
});
