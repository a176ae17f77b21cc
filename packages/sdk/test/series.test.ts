/**
 * Recurring series and seats with the typed client against the real server on the embedded store
 * (docs/api.md#recurring-series, #seats): a weekly series booked with `bookings.create`, read back
 * with `bookingSeries.get`, its following occurrences cancelled with `scope`, a series that cannot
 * be booked thrown as a SlotUnavailableError carrying `conflicts`, and a seated link's
 * `seats_remaining` through `public.availability`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { FakeClock } from '../../../src/platform/clock.js';
import { Kairos, SlotTakenError, SlotUnavailableError } from '../src/index.js';

// Monday 2 March 2026, 06:00 UTC: accounts work Mon–Fri 09:00–17:00 UTC.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new FakeClock('2026-03-02T06:00:00.000Z') });
});
afterAll(async () => {
  await t?.close();
});

const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };

describe('recurring series with the SDK', () => {
  it('books a weekly series, reads it back with bookingSeries.get, and cancels the following ones', async () => {
    const acc = await t.account();
    const kairos = new Kairos({ apiKey: acc.key, baseUrl: t.url });
    const { booking, series } = await kairos.bookings.create({
      ...customer,
      start_time: '2026-03-03T10:00:00Z',
      recurrence: { frequency: 'weekly', interval: 1, count: 4 },
    });
    expect(series?.id).toMatch(/^ser_/);
    expect(booking.series_id).toBe(series?.id);

    const read = await kairos.bookingSeries.get(series!.id);
    expect(read.series.recurrence).toEqual({ frequency: 'weekly', interval: 1, count: 4, timezone: 'UTC' });
    expect(read.series.occurrences.map((o) => o.start_time)).toEqual([
      '2026-03-03T10:00:00.000Z',
      '2026-03-10T10:00:00.000Z',
      '2026-03-17T10:00:00.000Z',
      '2026-03-24T10:00:00.000Z',
    ]);
    expect(read.series.occurrences[0]!.booking_id).toBe(booking.id);

    const third = read.series.occurrences[2]!.booking_id;
    const cancelled = await kairos.bookings.cancel(third, { scope: 'following' });
    expect(cancelled.booking.status).toBe('cancelled');
    const after = await kairos.bookingSeries.get(series!.id);
    expect(after.series.occurrences.map((o) => o.status)).toEqual([
      'confirmed',
      'confirmed',
      'cancelled',
      'cancelled',
    ]);
  });

  it('throws a series that cannot be booked as a SlotUnavailableError whose problem names every conflict', async () => {
    const acc = await t.account();
    const kairos = new Kairos({ apiKey: acc.key, baseUrl: t.url });
    await kairos.bookings.create({ ...customer, start_time: '2026-03-18T10:00:00Z' });
    const err = await kairos.bookings
      .create({
        ...customer,
        start_time: '2026-03-04T10:00:00Z',
        recurrence: { frequency: 'weekly', interval: 1, count: 3 },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SlotUnavailableError);
    expect(err).toBeInstanceOf(SlotTakenError);
    expect((err as SlotUnavailableError).problem?.conflicts).toEqual([
      { start_time: '2026-03-18T10:00:00.000Z', end_time: '2026-03-18T10:30:00.000Z', reason: 'taken' },
    ]);
    expect((await kairos.bookings.list({ principal_id: acc.id })).bookings).toHaveLength(1);
  });
});

describe('seats with the SDK', () => {
  it('shows seats_remaining on a seated link’s public slots, one fewer after each seat', async () => {
    const acc = await t.account();
    const kairos = new Kairos({ apiKey: acc.key, baseUrl: t.url });
    const slug = `sdk-class-${acc.id.slice(-12)}`;
    const { booking_link: link } = await kairos.bookingLinks.create({
      slug,
      title: 'Group class',
      durations: [60],
      seats: { capacity: 3, show_remaining: true },
    });
    expect(link.seats).toEqual({ capacity: 3, show_remaining: true });
    const visitor = new Kairos({ baseUrl: t.url });
    const window = { from: '2026-03-03T10:00:00Z', to: '2026-03-03T11:00:00Z' };
    const before = await visitor.public.availability(slug, window);
    expect(before.slots?.map((s) => s.seats_remaining)).toEqual([3]);
    const { booking } = await visitor.public.book(slug, { ...customer, start_time: '2026-03-03T10:00:00Z' });
    expect(booking.status).toBe('confirmed');
    const after = await visitor.public.availability(slug, window);
    expect(after.slots?.map((s) => s.seats_remaining)).toEqual([2]);
  });
});
