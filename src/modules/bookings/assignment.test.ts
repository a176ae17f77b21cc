/**
 * Links with several hosts (docs/api.md#bookings): round robin spreads bookings, a collective booking
 * occupies and moves every host's time, and races with single-host bookings have one winner.
 */
import { describe, expect, it } from 'vitest';
import { bookingsApp, customer } from '../../../test/helpers/bookings.js';

const { t, host, link } = bookingsApp();

describe('links with several hosts', () => {
  it('round robin spreads bookings evenly over free hosts and falls back to a free one', async () => {
    const acc = await t.account();
    const hosts = [await host(acc.key, 'A'), await host(acc.key, 'B'), await host(acc.key, 'C')];
    const l = await link(acc.key, { slug: `rr-${Date.now()}`, host_ids: hosts, assignment: 'round_robin' });
    const counts = new Map<string, number>();
    for (let i = 0; i < 9; i++) {
      const start = new Date(Date.parse('2026-03-03T09:00:00Z') + i * 30 * 60_000).toISOString();
      const res = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
        body: { ...customer, start_time: start },
      });
      expect(res.status).toBe(201);
    }
    const rows = await t.ctx.db
      .selectFrom('bookings')
      .select('principal_id')
      .where('booking_link_id', '=', l.id)
      .execute();
    for (const r of rows) counts.set(r.principal_id, (counts.get(r.principal_id) ?? 0) + 1);
    expect([...counts.values()]).toEqual([3, 3, 3]);
    // Three bookings of one slot take the three hosts; the fourth finds none free.
    const same = await Promise.all(
      [0, 1, 2, 3].map(() =>
        t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
          body: { ...customer, start_time: '2026-03-04T09:00:00Z' },
        }),
      ),
    );
    expect(same.map((r) => r.status).sort()).toEqual([201, 201, 201, 409]);
  });

  it('a rescheduled collective booking moves every host’s time', async () => {
    const acc = await t.account();
    const a = await host(acc.key, 'A');
    const b = await host(acc.key, 'B');
    const l = await link(acc.key, { slug: `pair-${Date.now()}`, host_ids: [a, b], assignment: 'collective' });
    const made = await t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
      body: { ...customer, start_time: '2026-03-06T10:00:00Z' },
    });
    expect(made.status).toBe(201);
    const token = (await made.json()).booking.manage_url.split('/b/')[1];
    const moved = await t.call('POST', `/v1/public/bookings/${token}/reschedule`, {
      body: { start_time: '2026-03-06T14:00:00Z' },
    });
    expect(moved.status).toBe(200);
    const single = (principal: string, start: string) =>
      t.call('POST', '/v1/bookings', {
        token: acc.key,
        body: { ...customer, principal_id: principal, start_time: start },
      });
    for (const h of [a, b]) {
      expect((await single(h, '2026-03-06T14:00:00Z')).status).toBe(409);
      expect((await single(h, '2026-03-06T10:00:00Z')).status).toBe(201);
    }
  });

  it('a collective link racing single-host bookings of one of its hosts: one of them wins', async () => {
    const acc = await t.account();
    const a = await host(acc.key, 'A');
    const b = await host(acc.key, 'B');
    const l = await link(acc.key, { slug: `team-${Date.now()}`, host_ids: [a, b], assignment: 'collective' });
    const results = await Promise.all([
      ...Array.from({ length: 10 }, () =>
        t.call('POST', `/v1/public/links/${l.slug}/bookings`, {
          body: { ...customer, start_time: '2026-03-05T10:00:00Z' },
        }),
      ),
      ...Array.from({ length: 10 }, () =>
        t.call('POST', '/v1/bookings', {
          token: acc.key,
          body: { ...customer, principal_id: b, start_time: '2026-03-05T10:00:00Z' },
        }),
      ),
    ]);
    const statuses = results.map((r) => r.status);
    const bodies = await Promise.all(results.map((r) => r.clone().text()));
    expect(
      statuses.filter((s) => s === 201),
      bodies.join('\n'),
    ).toHaveLength(1);
    expect(
      statuses.filter((s) => s === 409),
      bodies.filter((b) => !b.includes('slot_unavailable')).join('\n'),
    ).toHaveLength(19);
    // Host A alone is free at that time unless the collective booking won.
    const won = results.findIndex((r) => r.status === 201);
    const collectiveWon = won < 10;
    const aAlone = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, principal_id: a, start_time: '2026-03-05T10:00:00Z' },
    });
    expect(aAlone.status).toBe(collectiveWon ? 409 : 201);
    if (collectiveWon) {
      const booking = (
        await (await t.call('GET', `/v1/bookings?principal_id=${a}`, { token: acc.key })).json()
      ).bookings[0];
      expect(booking.host_ids.sort()).toEqual([a, b].sort());
    }
  });
});
