/**
 * A series' mails over the real API, runtime and database (docs/api.md#recurring-series): booking a
 * weekly series in Berlin across the spring DST change mails one confirmation per recipient whose invite
 * a real parser (ical.js) expands to the series' occurrences; cancelling one date sends the series again
 * with that EXDATE (SEQUENCE up); moving one date alone sends a RECURRENCE-ID override; cancelling one
 * more sends the series again with the moved date's override after it (a client taking the series anew
 * keeps it moved); cancelling the rest sends METHOD:CANCEL of the series' UID.
 */
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { bookingsApp, customer } from '../../../test/helpers/bookings.js';

const { t, host } = bookingsApp();

/** The mails rendered so far to `to` with `kind`, oldest first: subject, text and invite. */
async function mailsTo(to: string, kind: string) {
  await t.ctx.jobs.drain();
  return t.ctx.db
    .selectFrom('mail_outbox')
    .select(['subject', 'text_body', 'ics', 'ics_method'])
    .where('to_address', '=', to)
    .where('kind', '=', kind)
    .orderBy('seq')
    .execute();
}

function eventOf(ics: string | null) {
  expect(ics).not.toBeNull();
  const cal = new ICAL.Component(ICAL.parse(ics!));
  const vevents = cal.getAllSubcomponents('vevent');
  expect(vevents).toHaveLength(1);
  return { method: cal.getFirstPropertyValue('method'), event: new ICAL.Event(vevents[0]!) };
}

/**
 * A REQUEST of the series as a client shows it: the series' event expanded (EXDATE applied) with the
 * overrides after it applied, as ISO starts; and how many overrides it carries.
 */
function shown(ics: string | null) {
  expect(ics).not.toBeNull();
  const cal = new ICAL.Component(ICAL.parse(ics!));
  expect(cal.getFirstPropertyValue('method')).toBe('REQUEST');
  const [master, ...overrides] = cal.getAllSubcomponents('vevent').map((v) => new ICAL.Event(v));
  expect(master!.isRecurring()).toBe(true);
  for (const o of overrides) {
    expect(o.isRecurrenceException()).toBe(true);
    expect(o.uid).toBe(master!.uid);
    expect(o.sequence).toBe(master!.sequence);
    master!.relateException(o);
  }
  const starts: string[] = [];
  const it = master!.iterator();
  for (let x = it.next(); x && starts.length <= 100; x = it.next()) {
    starts.push(master!.getOccurrenceDetails(x).startDate.toJSDate().toISOString());
  }
  return { starts, overrides: overrides.length, sequence: master!.sequence };
}

function expand(event: ICAL.Event): string[] {
  const out: string[] = [];
  const it = event.iterator();
  for (let x = it.next(); x && out.length <= 100; x = it.next()) out.push(x.toJSDate().toISOString());
  return out;
}

describe('the mails of a series booked over the API', () => {
  it('confirm, cancel a date, move a date and cancel the rest, each as calendar clients read it', async () => {
    const acc = await t.account();
    const berta = await host(acc.key, 'Berta', { timezone: 'Europe/Berlin', email: 'berta@example.com' });
    // Tuesdays at 09:00 Berlin from 17 March 2026: 08:00Z, then 07:00Z from 31 March (summer time).
    const res = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: {
        ...customer,
        principal_id: berta,
        customer_timezone: 'Europe/Berlin',
        start_time: '2026-03-17T08:00:00Z',
        recurrence: { frequency: 'weekly', count: 5, timezone: 'Europe/Berlin' },
      },
    });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
    const { series } = await res.json();
    const starts = series.occurrences.map((o: { start_time: string }) => o.start_time);
    expect(starts).toEqual([
      '2026-03-17T08:00:00.000Z',
      '2026-03-24T08:00:00.000Z',
      '2026-03-31T07:00:00.000Z',
      '2026-04-07T07:00:00.000Z',
      '2026-04-14T07:00:00.000Z',
    ]);
    const ids: string[] = series.occurrences.map((o: { booking_id: string }) => o.booking_id);

    const [confirmed] = await mailsTo('ada@example.com', 'booking.confirmation');
    expect(confirmed!.subject).toBe('Confirmed: Meeting with Berta (every week, 5 times)');
    expect(confirmed!.text_body).toContain(
      'When: Every week on Tuesday at 09:00 – 09:30, 5 times, from 17 March 2026 (Europe/Berlin)',
    );
    const first = eventOf(confirmed!.ics);
    expect(first.method).toBe('REQUEST');
    expect(first.event.uid).toBe(`${series.id}@kairos`);
    expect(expand(first.event)).toEqual(starts);
    expect((await mailsTo('berta@example.com', 'booking.confirmation'))[0]!.ics).toContain(
      `UID:${series.id}@kairos`,
    );

    // One date cancelled: the series again, without it.
    expect((await t.call('DELETE', `/v1/bookings/${ids[1]}?scope=single`, { token: acc.key })).status).toBe(
      200,
    );
    const [cancelledOne] = await mailsTo('ada@example.com', 'booking.cancellation');
    expect(cancelledOne!.subject).toBe('Cancelled: Meeting with Berta (1 date)');
    expect(cancelledOne!.ics_method).toBe('REQUEST');
    const without = eventOf(cancelledOne!.ics);
    expect(without.event.uid).toBe(`${series.id}@kairos`);
    expect(without.event.sequence).toBeGreaterThan(first.event.sequence);
    expect(expand(without.event)).toEqual(starts.filter((_: string, i: number) => i !== 1));

    // One date moved alone: an override of the series' event.
    const moved = await t.call('PATCH', `/v1/bookings/${ids[2]}`, {
      token: acc.key,
      body: { start_time: '2026-04-01T12:00:00Z' },
    });
    expect(moved.status, JSON.stringify(await moved.clone().json())).toBe(200);
    const [rescheduled] = await mailsTo('ada@example.com', 'booking.reschedule');
    const override = eventOf(rescheduled!.ics);
    expect(override.method).toBe('REQUEST');
    expect(override.event.uid).toBe(`${series.id}@kairos`);
    expect(override.event.isRecurrenceException()).toBe(true);
    expect(override.event.recurrenceId.toJSDate().toISOString()).toBe(starts[2]);
    expect(override.event.startDate.toJSDate().toISOString()).toBe('2026-04-01T12:00:00.000Z');
    expect(override.event.sequence).toBeGreaterThan(without.event.sequence);

    // One more date cancelled: the series again without it, and with the moved date's override.
    expect((await t.call('DELETE', `/v1/bookings/${ids[3]}?scope=single`, { token: acc.key })).status).toBe(
      200,
    );
    const partial = (await mailsTo('ada@example.com', 'booking.cancellation')).at(-1)!;
    expect(partial.subject).toBe('Cancelled: Meeting with Berta (1 date)');
    expect(partial.ics_method).toBe('REQUEST');
    const later = shown(partial.ics);
    expect(later.overrides).toBe(1);
    expect(later.sequence).toBeGreaterThan(override.event.sequence);
    expect(later.starts).toEqual([starts[0], '2026-04-01T12:00:00.000Z', starts[4]]);
    expect(partial.ics).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20260331T090000\r\n');
    // The host's copy says the same.
    const hostCopy = (await mailsTo('berta@example.com', 'booking.cancellation')).at(-1)!;
    expect(shown(hostCopy.ics).starts).toEqual(later.starts);

    // The rest cancelled: the series' event cancelled.
    expect((await t.call('DELETE', `/v1/bookings/${ids[0]}?scope=series`, { token: acc.key })).status).toBe(
      200,
    );
    const cancellations = await mailsTo('ada@example.com', 'booking.cancellation');
    const last = cancellations.at(-1)!;
    expect(last.ics_method).toBe('CANCEL');
    const gone = eventOf(last.ics);
    expect(gone.method).toBe('CANCEL');
    expect(gone.event.uid).toBe(`${series.id}@kairos`);
    expect(gone.event.sequence).toBeGreaterThan(later.sequence);
    expect(last.text_body).toContain('Your recurring booking has been cancelled: every date of it.');
  });
});
