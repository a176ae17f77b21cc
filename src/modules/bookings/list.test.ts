/** GET /v1/bookings (docs/api.md#bookings): order by start time, filters, the cursor. */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../../test/helpers/app.js';
import { bookingsApp, customer } from '../../../test/helpers/bookings.js';

const { t, host, link } = bookingsApp();

describe('GET /v1/bookings', () => {
  it('lists by start time with filters and a cursor', async () => {
    const acc = await t.account();
    for (const start of ['2026-03-04T12:00:00Z', '2026-03-03T12:00:00Z', '2026-03-05T12:00:00Z']) {
      expect(
        (await t.call('POST', '/v1/bookings', { token: acc.key, body: { ...customer, start_time: start } }))
          .status,
      ).toBe(201);
    }
    const first = await (await t.call('GET', '/v1/bookings?limit=2', { token: acc.key })).json();
    expect(first.bookings.map((b: Json) => b.start_time.slice(0, 10))).toEqual(['2026-03-03', '2026-03-04']);
    expect(first.pagination.has_more).toBe(true);
    const second = await (
      await t.call('GET', `/v1/bookings?limit=2&cursor=${first.pagination.next_cursor}`, { token: acc.key })
    ).json();
    expect(second.bookings.map((b: Json) => b.start_time.slice(0, 10))).toEqual(['2026-03-05']);
    const window = await (
      await t.call('GET', '/v1/bookings?from=2026-03-04T00:00:00Z&to=2026-03-05T00:00:00Z', {
        token: acc.key,
      })
    ).json();
    expect(window.bookings).toHaveLength(1);
    expect((await t.call('GET', '/v1/bookings?cursor=abc', { token: acc.key })).status).toBe(400);
    expect((await t.call('GET', '/v1/bookings?status=confirmed', { token: acc.key })).status).toBe(200);
  });

  it('lists only the bookings made through a booking link when given its id', async () => {
    const acc = await t.account();
    const h = await host(acc.key, 'Dr. Ann');
    const l = await link(acc.key, { slug: `listed-${Date.now()}`, host_ids: [h] });
    const viaLink = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, booking_link_id: l.id, start_time: '2026-03-03T13:00:00Z' },
    });
    expect(viaLink.status, await viaLink.clone().text()).toBe(201);
    const direct = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, start_time: '2026-03-03T15:00:00Z' },
    });
    expect(direct.status).toBe(201);
    const listed = await (
      await t.call('GET', `/v1/bookings?booking_link_id=${l.id}`, { token: acc.key })
    ).json();
    expect(listed.bookings.map((b: Json) => b.id)).toEqual([(await viaLink.json()).booking.id]);
    const bad = await t.call('GET', '/v1/bookings?booking_link_id=nope', { token: acc.key });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('booking_link_id');
  });
});
