/**
 * Rescheduling and cancelling a booking (docs/api.md#bookings): booking.updated with a rising
 * SEQUENCE, a taken time refused, a cancel that happens once.
 */
import { describe, expect, it } from 'vitest';
import { bookingsApp, customer } from '../../../test/helpers/bookings.js';

const { t } = bookingsApp();

describe('reschedule and cancel', () => {
  it('moves a booking (booking.updated, rising SEQUENCE), refuses a taken time, cancels once', async () => {
    const acc = await t.account();
    const post = (start: string) =>
      t.call('POST', '/v1/bookings', { token: acc.key, body: { ...customer, start_time: start } });
    const book = async (start: string) => (await (await post(start)).json()).booking;
    const a = await book('2026-03-03T09:00:00Z');
    const b = await book('2026-03-03T10:00:00Z');
    const moved = await t.call('PATCH', `/v1/bookings/${a.id}`, {
      token: acc.key,
      body: { start_time: '2026-03-03T13:00:00Z' },
    });
    expect(moved.status).toBe(200);
    expect((await moved.json()).booking).toMatchObject({
      start_time: '2026-03-03T13:00:00.000Z',
      end_time: '2026-03-03T13:30:00.000Z',
    });
    const updated = await t.events(acc.id, 'booking.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].booking.start_time).toBe('2026-03-03T13:00:00.000Z');
    const taken = await t.call('PATCH', `/v1/bookings/${a.id}`, {
      token: acc.key,
      body: { start_time: '2026-03-03T10:15:00Z' },
    });
    expect(taken.status).toBe(409);
    // Its old time is free again.
    expect((await post('2026-03-03T09:00:00Z')).status).toBe(201);
    const notes = await t.call('PATCH', `/v1/bookings/${b.id}`, {
      token: acc.key,
      body: { notes: 'bring slides' },
    });
    expect((await notes.json()).booking.notes).toBe('bring slides');

    const cancel = await t.call('DELETE', `/v1/bookings/${b.id}?reason=ill`, { token: acc.key });
    expect(cancel.status).toBe(200);
    expect((await cancel.json()).booking).toMatchObject({ status: 'cancelled', cancellation_reason: 'ill' });
    const again = await t.call('DELETE', `/v1/bookings/${b.id}`, { token: acc.key });
    expect(again.status).toBe(200);
    expect((await again.json()).booking.status).toBe('cancelled');
    expect(await t.events(acc.id, 'booking.cancelled')).toHaveLength(1);
    const methods = await t.ctx.db
      .selectFrom('mail_outbox')
      .select('ics_method')
      .where('subject_id', '=', b.id)
      .where('status', '!=', 'skipped')
      .orderBy('seq')
      .execute();
    expect(methods.map((m) => m.ics_method)).toEqual(['REQUEST', 'CANCEL']);
    // The cancelled time can be booked again; a cancelled booking cannot be moved.
    expect((await post('2026-03-03T10:00:00Z')).status).toBe(201);
    const dead = await t.call('PATCH', `/v1/bookings/${b.id}`, {
      token: acc.key,
      body: { start_time: '2026-03-03T15:00:00Z' },
    });
    expect(dead.status).toBe(409);
    expect((await dead.json()).code).toBe('booking_not_live');
  });
});
