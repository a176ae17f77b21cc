/**
 * A public booking starts at an offered slot start (docs/api.md#public-booking-surface): the link's
 * slot grid — steps of min(duration, 15 min) from each local midnight in the host's zone — and not
 * merely a free time. The private `POST /v1/bookings` is not a link route and keeps any free start.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import { newHost } from '../../../test/helpers/fixtures.js';

// Monday 2 March 2026, 06:00 UTC.
const { t } = clockedApp({ at: '2026-03-02T06:00:00.000Z' });

const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };
let links = 0;

async function linkFor(timezone: string, duration: number): Promise<{ key: string; slug: string }> {
  const acc = await t.account();
  const h = await newHost(t, { token: acc.key }, { display_name: 'Host', timezone });
  const slug = `grid-${++links}-${Date.now()}`;
  const res = await t.call('POST', '/v1/booking-links', {
    token: acc.key,
    body: { title: 'Intro', slug, host_ids: [h], duration_minutes: duration },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return { key: acc.key, slug };
}

async function offered(slug: string, from: string, to: string): Promise<number[]> {
  const res = await t.call('GET', `/v1/public/links/${slug}/availability?from=${from}&to=${to}`);
  expect(res.status).toBe(200);
  return ((await res.json()).slots as Json[]).map((s) => Date.parse(s.start));
}

const book = (slug: string, start: number) =>
  t.call('POST', `/v1/public/links/${slug}/bookings`, {
    body: { ...customer, start_time: new Date(start).toISOString() },
  });

describe('POST /v1/public/links/{slug}/bookings: the start is an offered slot start', () => {
  it('refuses 09:07 on a 15-minute grid with a 400 naming start_time, and takes 09:15', async () => {
    const { slug } = await linkFor('UTC', 30);
    const starts = await offered(slug, '2026-03-03T00:00:00Z', '2026-03-04T00:00:00Z');
    expect(starts).toContain(Date.parse('2026-03-03T09:15:00Z'));
    const off = await book(slug, Date.parse('2026-03-03T09:07:00Z'));
    expect(off.status).toBe(400);
    expect(off.headers.get('content-type')).toContain('application/problem+json');
    const problem = await off.json();
    expect(problem.request_id).toBeTruthy();
    expect(problem.errors.start_time).toMatch(/offered slot/);
    expect((await book(slug, Date.parse('2026-03-03T09:15:00Z'))).status).toBe(201);
  });

  it('counts the grid from the host’s local midnight (Asia/Kathmandu, +05:45), not from UTC', async () => {
    // A 10-minute link: slots every 10 minutes from local midnight, i.e. at :x5 UTC.
    const { slug } = await linkFor('Asia/Kathmandu', 10);
    const starts = await offered(slug, '2026-03-03T00:00:00Z', '2026-03-04T00:00:00Z');
    expect(starts.length).toBeGreaterThan(0);
    const first = starts[0] as number;
    // On UTC's 10-minute grid, but not on the host's.
    const utcAligned = first + 5 * 60_000;
    expect(new Date(utcAligned).getUTCMinutes() % 10).toBe(0);
    expect(starts).not.toContain(utcAligned);
    expect((await book(slug, utcAligned)).status).toBe(400);
    expect((await book(slug, first)).status).toBe(201);
  });

  it('follows the grid after a DST change (Europe/Berlin, summer time from 29 March 2026)', async () => {
    const { slug } = await linkFor('Europe/Berlin', 45);
    // Monday 30 March 2026, the first weekday after the change: 09:00 local is 07:00 UTC.
    const starts = await offered(slug, '2026-03-30T00:00:00Z', '2026-03-31T00:00:00Z');
    expect(starts).toContain(Date.parse('2026-03-30T07:00:00Z'));
    expect((await book(slug, Date.parse('2026-03-30T07:05:00Z'))).status).toBe(400);
    expect((await book(slug, Date.parse('2026-03-30T07:15:00Z'))).status).toBe(201);
  });

  it('leaves the private POST /v1/bookings free to start at 09:07', async () => {
    const acc = await t.account();
    const res = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, start_time: '2026-03-03T09:07:00Z' },
    });
    expect(res.status, await res.clone().text()).toBe(201);
  });
});
