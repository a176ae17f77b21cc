/**
 * Recurring series on the real runtime and database (docs/api.md#recurring-series): all or nothing
 * with every conflict named, the series object, cancel scopes with their events, an occurrence moved
 * alone, and the public surface's limits.
 */
import { describe, expect, it } from 'vitest';
import { bookingsApp, customer } from '../../../test/helpers/bookings.js';

const { clock, t, host, link } = bookingsApp();

const weekly = (count: number) => ({ frequency: 'weekly', count });

describe('POST /v1/bookings with recurrence', () => {
  it('books every occurrence at once: 201 with the first and the series, one booking.created each, one confirmation', async () => {
    const acc = await t.account();
    const res = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, start_time: '2026-03-03T10:00:00Z', recurrence: weekly(4) },
    });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
    const { booking, series } = await res.json();
    expect(booking.series_id).toBe(series.id);
    expect(series.id).toMatch(/^ser_/);
    expect(series.recurrence).toEqual({ frequency: 'weekly', interval: 1, count: 4, timezone: 'UTC' });
    expect(series.occurrences.map((o: { start_time: string }) => o.start_time)).toEqual([
      '2026-03-03T10:00:00.000Z',
      '2026-03-10T10:00:00.000Z',
      '2026-03-17T10:00:00.000Z',
      '2026-03-24T10:00:00.000Z',
    ]);
    expect(series.occurrences[0].booking_id).toBe(booking.id);
    expect(await t.events(acc.id, 'booking.created')).toHaveLength(4);
    const mails = await t.ctx.db
      .selectFrom('mail_outbox')
      .select(['to_address', 'kind'])
      .where('to_address', '=', 'ada@example.com')
      .execute();
    expect(mails).toEqual([{ to_address: 'ada@example.com', kind: 'booking.confirmation' }]);
    const got = await t.call('GET', `/v1/booking-series/${series.id}`, { token: acc.key });
    expect(got.status).toBe(200);
    expect((await got.json()).series).toEqual(series);
  });

  it('writes nothing when one occurrence is taken, and names every failing one in conflicts', async () => {
    const acc = await t.account();
    const single = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, start_time: '2026-03-17T10:15:00Z' },
    });
    expect(single.status).toBe(201);
    const res = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      // The 4th: a Saturday-free weekly series of Tuesdays; the 3rd overlaps, the 7th is past the horizon.
      body: { ...customer, start_time: '2026-03-03T10:00:00Z', recurrence: weekly(10) },
    });
    expect(res.status).toBe(409);
    const problem = await res.json();
    expect(problem.code).toBe('slot_unavailable');
    expect(problem.conflicts).toEqual([
      { start_time: '2026-03-17T10:00:00.000Z', end_time: '2026-03-17T10:30:00.000Z', reason: 'taken' },
      {
        start_time: '2026-05-05T10:00:00.000Z',
        end_time: '2026-05-05T10:30:00.000Z',
        reason: 'max_days_ahead',
      },
    ]);
    const rows = await t.ctx.db
      .selectFrom('bookings')
      .select('id')
      .where('account_id', '=', acc.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(
      await t.ctx.db.selectFrom('booking_series').select('id').where('account_id', '=', acc.id).execute(),
    ).toEqual([]);
  });

  it('cancels one, the following, or the whole series, with booking.cancelled each and booking_series.cancelled', async () => {
    const acc = await t.account();
    const { series } = await (
      await t.call('POST', '/v1/bookings', {
        token: acc.key,
        body: { ...customer, start_time: '2026-03-03T10:00:00Z', recurrence: weekly(5) },
      })
    ).json();
    const ids = series.occurrences.map((o: { booking_id: string }) => o.booking_id);
    const one = await t.call('DELETE', `/v1/bookings/${ids[1]}?scope=single`, { token: acc.key });
    expect(one.status).toBe(200);
    expect((await one.json()).booking.status).toBe('cancelled');
    const following = await t.call('DELETE', `/v1/bookings/${ids[3]}?scope=following`, { token: acc.key });
    expect((await following.json()).booking.status).toBe('cancelled');
    const seriesEvents = await t.events(acc.id, 'booking_series.cancelled');
    expect(seriesEvents).toEqual([{ series_id: series.id, cancelled_booking_ids: [ids[3], ids[4]] }]);
    const after = (await (await t.call('GET', `/v1/booking-series/${series.id}`, { token: acc.key })).json())
      .series;
    expect(after.occurrences.map((o: { status: string }) => o.status)).toEqual([
      'confirmed',
      'cancelled',
      'confirmed',
      'cancelled',
      'cancelled',
    ]);
    const all = await t.call('DELETE', `/v1/bookings/${ids[0]}?scope=series`, { token: acc.key });
    expect(all.status).toBe(200);
    expect(await t.events(acc.id, 'booking.cancelled')).toHaveLength(5);
    expect((await t.events(acc.id, 'booking_series.cancelled'))[1]).toEqual({
      series_id: series.id,
      cancelled_booking_ids: [ids[0], ids[2]],
    });
    // The time is free again.
    const again = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: { ...customer, start_time: '2026-03-10T10:00:00Z' },
    });
    expect(again.status).toBe(201);
  });

  it('refuses a scope on a booking outside a series, and recurrence on a seated or non-recurring public link', async () => {
    const acc = await t.account();
    const { booking } = await (
      await t.call('POST', '/v1/bookings', {
        token: acc.key,
        body: { ...customer, start_time: '2026-03-04T10:00:00Z' },
      })
    ).json();
    const res = await t.call('DELETE', `/v1/bookings/${booking.id}?scope=series`, { token: acc.key });
    expect(res.status).toBe(400);
    expect((await res.json()).errors).toHaveProperty('scope');
    const h = await host(acc.key);
    const plain = await link(acc.key, { host_ids: [h], slug: `plain-${acc.id.slice(-12)}` });
    const pub = await t.call('POST', `/v1/public/links/${plain.slug}/bookings`, {
      body: { ...customer, start_time: '2026-03-04T11:00:00Z', recurrence: weekly(3) },
    });
    expect(pub.status).toBe(400);
    expect((await pub.json()).errors).toHaveProperty('recurrence');
  });

  it('moves one occurrence alone and keeps the others', async () => {
    const acc = await t.account();
    const { series } = await (
      await t.call('POST', '/v1/bookings', {
        token: acc.key,
        body: { ...customer, start_time: '2026-03-03T10:00:00Z', recurrence: weekly(3) },
      })
    ).json();
    const second = series.occurrences[1].booking_id;
    const moved = await t.call('PATCH', `/v1/bookings/${second}`, {
      token: acc.key,
      body: { start_time: '2026-03-11T14:00:00Z' },
    });
    expect(moved.status).toBe(200);
    const after = (await (await t.call('GET', `/v1/booking-series/${series.id}`, { token: acc.key })).json())
      .series;
    expect(after.occurrences.map((o: { start_time: string }) => o.start_time)).toEqual([
      '2026-03-03T10:00:00.000Z',
      '2026-03-11T14:00:00.000Z',
      '2026-03-17T10:00:00.000Z',
    ]);
  });

  it('keeps the first occurrence’s self-service link working while the series lasts, and cancels the rest through it', async () => {
    const acc = await t.account();
    const { booking, series } = await (
      await t.call('POST', '/v1/bookings', {
        token: acc.key,
        body: { ...customer, start_time: '2026-03-03T10:00:00Z', recurrence: weekly(8) },
      })
    ).json();
    const token = booking.manage_url.split('/').pop();
    const before = clock.nowMs();
    try {
      // 38 days after the first occurrence: past its own 30 days, not past the series'.
      clock.set(new Date('2026-04-10T06:00:00Z'));
      expect((await t.call('GET', `/v1/public/bookings/${token}`)).status).toBe(200);
      const res = await t.call('POST', `/v1/public/bookings/${token}/cancel`, { body: { scope: 'series' } });
      expect(res.status).toBe(200);
      const after = (
        await (await t.call('GET', `/v1/booking-series/${series.id}`, { token: acc.key })).json()
      ).series;
      expect(after.occurrences.map((o: { status: string }) => o.status)).toEqual([
        ...Array(6).fill('confirmed'),
        'cancelled',
        'cancelled',
      ]);
    } finally {
      clock.set(new Date(before));
    }
  });
});
