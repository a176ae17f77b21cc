/**
 * The public booking surface (docs/api.md#public-booking-surface): a link's page and slots, booking it
 * without an account, the attendee's self-service token, publishable keys, CORS, and priced links
 * without Stripe.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { bookingsApp, customer } from '../../../test/helpers/bookings.js';

const { t, host, link } = bookingsApp();

describe('booking links on the public surface', () => {
  it('resolves a link without ids or e-mails, shows its slots without booked time, books it, and hands out a working token', async () => {
    const acc = await t.account();
    const h = await host(acc.key, 'Dr. Ann', { email: 'ann@example.com' });
    const l = await link(acc.key, {
      slug: `intro-${Date.now()}`,
      host_ids: [h],
      durations: [30, 60],
      questions: [{ id: 'topic', label: 'Topic', type: 'text', required: true }],
    });
    const view = await t.call('GET', `/v1/public/links/${l.slug}`);
    expect(view.status).toBe(200);
    const text = await view.clone().text();
    expect(text).not.toContain(h);
    expect(text).not.toContain('ann@example.com');
    expect(text).not.toContain(acc.id);
    expect((await view.json()).booking_link).toMatchObject({
      title: 'Intro call',
      hosts: [{ display_name: 'Dr. Ann' }],
      durations: [30, 60],
    });

    const slotsOf = async () =>
      (
        await (
          await t.call(
            'GET',
            `/v1/public/links/${l.slug}/availability?from=2026-03-03T00:00:00Z&to=2026-03-04T00:00:00Z`,
          )
        ).json()
      ).slots.map((s: Json) => s.start.slice(11, 16));
    const before = await slotsOf();
    expect(before[0]).toBe('09:00');
    expect(before).toContain('10:00');

    const missing = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      body: { ...customer, start_time: '2026-03-03T10:00:00Z' },
    });
    expect(missing.status).toBe(400);
    expect((await missing.json()).errors).toHaveProperty(['answers.topic']);
    const wrongLength = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      body: {
        ...customer,
        start_time: '2026-03-03T10:00:00Z',
        duration_minutes: 45,
        answers: { topic: 'x' },
      },
    });
    expect(wrongLength.status).toBe(400);

    const res = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      body: { ...customer, start_time: '2026-03-03T10:00:00Z', answers: { topic: 'Engines' } },
    });
    expect(res.status).toBe(201);
    const created = (await res.json()).booking;
    expect(created).toMatchObject({
      status: 'confirmed',
      title: 'Intro call',
      hosts: [{ display_name: 'Dr. Ann' }],
      answers: { topic: 'Engines' },
    });
    expect(JSON.stringify(created)).not.toContain(h);
    const after = await slotsOf();
    expect(after).not.toContain('10:00');
    expect(after).not.toContain('09:45');
    expect(after).toContain('10:30');

    const token = created.manage_url.split('/b/')[1];
    const mine = await t.call('GET', `/v1/public/bookings/${token}`);
    expect(mine.status).toBe(200);
    expect((await mine.json()).booking.id).toBe(created.id);
    const forged = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect((await t.call('GET', `/v1/public/bookings/${forged}`)).status).toBe(404);
    expect((await t.call('GET', '/v1/public/bookings/short')).status).toBe(404);

    const moved = await t.call('POST', `/v1/public/bookings/${token}/reschedule`, {
      body: { start_time: '2026-03-03T15:00:00Z' },
    });
    expect(moved.status).toBe(200);
    expect((await moved.json()).booking.start_time).toBe('2026-03-03T15:00:00.000Z');
    expect(await slotsOf()).toContain('10:00');
    const cancelled = await t.call('POST', `/v1/public/bookings/${token}/cancel`, {
      body: { reason: 'conflict' },
    });
    expect(cancelled.status).toBe(200);
    expect((await cancelled.json()).booking.status).toBe('cancelled');
    expect(await t.events(acc.id, 'booking.cancelled')).toHaveLength(1);
    expect((await t.call('POST', `/v1/public/bookings/${token}/cancel`, { body: {} })).status).toBe(200);
    expect(await t.events(acc.id, 'booking.cancelled')).toHaveLength(1);
  });

  it('is 404 for unknown and inactive links, and for a publishable key of another account', async () => {
    const acc = await t.account();
    const other = await t.account();
    const pk = await (
      await t.call('POST', '/v1/api-keys', {
        token: other.key,
        body: { name: 'widget', key_type: 'publishable' },
      })
    ).json();
    const ownPk = await (
      await t.call('POST', '/v1/api-keys', {
        token: acc.key,
        body: { name: 'widget', key_type: 'publishable' },
      })
    ).json();
    const l = await link(acc.key, { slug: `pk-${Date.now()}` });
    expect((await t.call('GET', '/v1/public/links/no-such-link')).status).toBe(404);
    expect(
      (await t.call('GET', `/v1/public/links/${l.slug}`, { token: pk.api_key?.key ?? pk.key })).status,
    ).toBe(404);
    expect(
      (await t.call('GET', `/v1/public/links/${l.slug}`, { token: ownPk.api_key?.key ?? ownPk.key })).status,
    ).toBe(200);
    // A publishable key books on the public surface, not through /v1/bookings.
    const viaPk = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      token: ownPk.api_key?.key ?? ownPk.key,
      body: { ...customer, start_time: '2026-03-04T09:00:00Z' },
    });
    expect(viaPk.status).toBe(201);
    expect(
      (
        await t.call('POST', '/v1/bookings', {
          token: ownPk.api_key?.key ?? ownPk.key,
          body: { ...customer, start_time: '2026-03-04T11:00:00Z' },
        })
      ).status,
    ).toBe(403);
    await t.call('PATCH', `/v1/booking-links/${l.id}`, { token: acc.key, body: { active: false } });
    expect((await t.call('GET', `/v1/public/links/${l.slug}`)).status).toBe(404);
    expect(
      (
        await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
          body: { ...customer, start_time: '2026-03-04T10:00:00Z' },
        })
      ).status,
    ).toBe(404);
  });

  it('answers a widget’s browser from its allowed domains with CORS and refuses other origins (403)', async () => {
    const acc = await t.account();
    const pk = await (
      await t.call('POST', '/v1/api-keys', {
        token: acc.key,
        body: { name: 'widget', key_type: 'publishable', allowed_domains: ['shop.example'] },
      })
    ).json();
    const key: string = pk.api_key?.key ?? pk.key;
    const l = await link(acc.key, { slug: `cors-${Date.now()}` });
    const path = `/v1/public/links/${l.slug}/availability?from=2026-03-03T00:00:00Z&to=2026-03-04T00:00:00Z`;
    const preflight = await t.call('OPTIONS', path, {
      headers: {
        origin: 'https://www.shop.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://www.shop.example');
    const allowed = await t.call('GET', path, {
      token: key,
      headers: { origin: 'https://www.shop.example' },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://www.shop.example');
    const other = await t.call('GET', path, { token: key, headers: { origin: 'https://evil.example' } });
    expect(other.status).toBe(403);
    expect(other.headers.get('content-type')).toContain('application/problem+json');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('without Stripe: a link cannot be priced (422 payments_not_configured on create and update), one priced earlier is never booked for free, the Stripe routes say why', async () => {
    const acc = await t.account();
    const refused = await t.call('POST', '/v1/booking-links', {
      token: acc.key,
      body: { title: 'Paid', slug: `paid-no-${Date.now()}`, price_amount: 5000, price_currency: 'eur' },
    });
    expect(refused.status).toBe(422);
    const why = await refused.json();
    expect(why).toMatchObject({ status: 422, code: 'payments_not_configured' });
    expect(why.detail).toMatch(/cannot be priced/);
    const l = await link(acc.key, { slug: `paid-${Date.now()}` });
    const priced = await t.call('PATCH', `/v1/booking-links/${l.id}`, {
      token: acc.key,
      body: { price_amount: 5000, price_currency: 'eur' },
    });
    expect(priced.status).toBe(422);
    expect((await priced.json()).code).toBe('payments_not_configured');
    const stillFree = await t.call('GET', `/v1/booking-links/${l.id}`, { token: acc.key });
    expect((await stillFree.json()).booking_link).toMatchObject({ price_amount: null, price_currency: null });
    // A link priced while the server had a Stripe key, which it has since lost.
    await t.ctx.db
      .updateTable('booking_links')
      .set({ price_amount: 5000, price_currency: 'eur' })
      .where('id', '=', l.id)
      .execute();
    const res = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      body: { ...customer, start_time: '2026-03-04T10:00:00Z' },
    });
    expect(res.status).toBe(422);
    expect((await res.json()).code).toBe('payments_not_configured');
    expect((await t.call('GET', `/v1/public/links/${l.slug}`)).status).toBe(200);
    const hook = await t.call('POST', '/v1/payments/stripe/webhook', { body: { id: 'evt_1' } });
    expect(hook.status).toBe(404);
    expect((await hook.json()).code).toBe('payments_not_configured');
    for (const [method, path] of [
      ['POST', '/v1/stripe/connect'],
      ['GET', '/v1/stripe/account'],
    ] as const) {
      const stripe = await t.call(method, path, { token: acc.key });
      expect(stripe.status).toBe(422);
      const problem = await stripe.json();
      expect(problem.code).toBe('payments_not_configured');
      expect(problem.detail).not.toMatch(/link/);
      expect(problem.detail).toMatch(/Payments are not configured on this server/);
    }
  });
});
