/**
 * Guests of a booking (docs/api.md#bookings), over the real runtime, outbox and a real SMTP server
 * (test/helpers/smtp.ts): each guest gets the confirmation, reschedule and cancellation like the
 * customer's but without the self-service link, and is an ATTENDEE of every invite; `booking.guests`
 * lists them on both creates, the attendee's view and the events; bad guest lists are 400s.
 */
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { newHost } from '../../../test/helpers/fixtures.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';
import { FakeClock } from '../../platform/clock.js';
import { meetingOf } from './helpers.js';
import type { BookingRow } from './repo.js';

// Monday 2 March 2026, 06:00 UTC.
const NOW = '2026-03-02T06:00:00.000Z';
const customer = { customer_email: 'ada@example.com', customer_name: 'Ada Lovelace' };

const toOf = (m: ParsedMail) => (m.to && !Array.isArray(m.to) ? m.to.value[0]?.address : undefined);
const icsOfMail = (m: ParsedMail) =>
  m.attachments.find((a) => a.contentType === 'text/calendar')?.content.toString('utf8') ?? '';
/** The invite's lines unfolded (a long ATTENDEE line is folded at 75 octets). */
const unfold = (ics: string) => ics.replace(/\r\n[ \t]/g, '');

describe('guests of a booking', () => {
  const clock = new FakeClock(NOW);
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestApp({ clock, env: { SMTP_URL: sink.url, MAIL_FROM: 'Kairos <k@kairos.test>' } });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  /** Every mail accepted so far to `to` whose subject starts with `prefix`. */
  async function mailsTo(to: string, prefix: string, atLeast = 1): Promise<ParsedMail[]> {
    await t.ctx.jobs.drain();
    let found: ParsedMail[] = [];
    await sink.waitFor(1);
    for (let n = sink.messages.length; ; n++) {
      found = sink.messages.filter((m) => toOf(m) === to && m.subject?.startsWith(prefix));
      if (found.length >= atLeast) return found;
      await sink.waitFor(n + 1);
    }
  }

  it('mails each guest the confirmation, reschedule and cancellation without the manage link, each invite naming them', async () => {
    const acc = await t.account();
    const host = await newHost(t, { token: acc.key }, { display_name: 'Berta', email: 'berta@example.com' });
    const res = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: {
        ...customer,
        principal_id: host,
        start_time: '2026-03-03T09:00:00Z',
        guests: ['Grace@Example.com', 'linus@example.com'],
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { booking } = await res.json();
    expect(booking.guests).toEqual(['grace@example.com', 'linus@example.com']);
    expect(booking.no_show).toEqual([]);
    const [created] = await t.events(acc.id, 'booking.created');
    expect(created.booking.guests).toEqual(['grace@example.com', 'linus@example.com']);
    const got = await t.call('GET', `/v1/bookings/${booking.id}`, { token: acc.key });
    expect((await got.json()).booking.guests).toEqual(['grace@example.com', 'linus@example.com']);

    const manage = String(booking.manage_url);
    const [toCustomer] = await mailsTo('ada@example.com', 'Confirmed');
    expect(toCustomer!.text).toContain(manage);
    for (const guest of ['grace@example.com', 'linus@example.com']) {
      const [mail] = await mailsTo(guest, 'Confirmed');
      expect(mail!.text).toContain('You are invited as a guest to this booking.');
      expect(mail!.text).toContain('Booked by: Ada Lovelace');
      expect(mail!.text).not.toContain('/b/');
      expect(mail!.html).not.toContain('/b/');
      const ics = unfold(icsOfMail(mail!));
      expect(ics).toContain('METHOD:REQUEST');
      expect(ics).toMatch(/ATTENDEE[^\r\n]*:mailto:grace@example\.com/i);
      expect(ics).toMatch(/ATTENDEE[^\r\n]*:mailto:linus@example\.com/i);
      expect(ics).toMatch(/ATTENDEE[^\r\n]*:mailto:ada@example\.com/i);
    }
    // Every recipient's invite names the guests: the customer's and the host's too.
    for (const m of [toCustomer!, (await mailsTo('berta@example.com', 'Confirmed'))[0]!]) {
      expect(unfold(icsOfMail(m))).toMatch(/ATTENDEE[^\r\n]*:mailto:grace@example\.com/i);
    }

    const moved = await t.call('PATCH', `/v1/bookings/${booking.id}`, {
      token: acc.key,
      body: { start_time: '2026-03-03T11:00:00Z' },
    });
    expect(moved.status, await moved.clone().text()).toBe(200);
    const [rescheduled] = await mailsTo('grace@example.com', 'Rescheduled');
    expect(rescheduled!.text).toContain('A booking you are a guest of has moved to a new time.');
    expect(rescheduled!.text).not.toContain('/b/');
    expect(unfold(icsOfMail(rescheduled!))).toContain('SEQUENCE:1');

    const cancelled = await t.call('DELETE', `/v1/bookings/${booking.id}?reason=ill`, { token: acc.key });
    expect(cancelled.status).toBe(200);
    for (const guest of ['grace@example.com', 'linus@example.com']) {
      const [mail] = await mailsTo(guest, 'Cancelled');
      expect(mail!.text).toContain('A booking you are a guest of has been cancelled.');
      expect(mail!.text).toContain('Reason: ill');
      const ics = unfold(icsOfMail(mail!));
      expect(ics).toContain('METHOD:CANCEL');
      expect(ics).toMatch(/ATTENDEE[^\r\n]*:mailto:linus@example\.com/i);
    }
    const [cancelEvent] = await t.events(acc.id, 'booking.cancelled');
    expect(cancelEvent.booking.guests).toEqual(['grace@example.com', 'linus@example.com']);
  });

  it('takes guests on the public surface: mailed, and listed in the attendee’s view', async () => {
    const acc = await t.account();
    const host = await newHost(t, { token: acc.key }, { display_name: 'Hal', email: 'hal@example.com' });
    const made = await t.call('POST', '/v1/booking-links', {
      token: acc.key,
      body: { title: 'Intro call', slug: `guests-${Date.now()}`, host_ids: [host] },
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const link = (await made.json()).booking_link;
    const res = await t.call('POST', `/v1/public/links/${link.slug}/bookings`, {
      body: {
        customer_email: 'cy@example.com',
        customer_name: 'Cy',
        start_time: '2026-03-04T10:00:00Z',
        guests: ['dee@example.com'],
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { booking } = await res.json();
    expect(booking.guests).toEqual(['dee@example.com']);
    const token = String(booking.manage_url).split('/b/')[1]!;
    const view = await t.call('GET', `/v1/public/bookings/${token}`);
    expect((await view.json()).booking.guests).toEqual(['dee@example.com']);
    const [mail] = await mailsTo('dee@example.com', 'Confirmed: Intro call');
    expect(mail!.text).not.toContain(token);
    expect(unfold(icsOfMail(mail!))).toMatch(/ATTENDEE[^\r\n]*:mailto:dee@example\.com/i);
  });

  it('gives every occurrence of a series the guests, and mails each guest the series once', async () => {
    const acc = await t.account();
    const host = await newHost(t, { token: acc.key }, { display_name: 'Ivy', email: 'ivy@example.com' });
    const res = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: {
        ...customer,
        principal_id: host,
        start_time: '2026-03-05T09:00:00Z',
        guests: ['series-guest@example.com'],
        recurrence: { frequency: 'weekly', count: 3 },
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { series } = await res.json();
    for (const o of series.occurrences) {
      const one = await t.call('GET', `/v1/bookings/${o.booking_id}`, { token: acc.key });
      expect((await one.json()).booking.guests).toEqual(['series-guest@example.com']);
    }
    const mails = await mailsTo('series-guest@example.com', 'Confirmed');
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).not.toContain('/b/');
    expect(unfold(icsOfMail(mails[0]!))).toContain(`UID:${series.id}@kairos`);
  });

  it('refuses 11 guests, a guest twice, a bad address and the customer’s own address (400)', async () => {
    const acc = await t.account();
    const host = await newHost(t, { token: acc.key }, { display_name: 'Jo' });
    const post = (guests: unknown) =>
      t.call('POST', '/v1/bookings', {
        token: acc.key,
        body: { ...customer, principal_id: host, start_time: '2026-03-06T09:00:00Z', guests },
      });
    const eleven = Array.from({ length: 11 }, (_, i) => `g${i}@example.com`);
    for (const [guests, field] of [
      [eleven, 'guests'],
      [['a@example.com', 'A@example.com'], 'guests.1'],
      [['not-an-address'], 'guests.0'],
      [['ADA@example.com'], 'guests.0'],
    ] as const) {
      const res = await post(guests);
      expect(res.status, JSON.stringify(guests)).toBe(400);
      const body = await res.json();
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(JSON.stringify(body.errors), JSON.stringify(guests)).toContain(field);
    }
    // Ten distinct guests are taken.
    expect((await post(eleven.slice(0, 10))).status).toBe(201);
  });

  it('lists the guests as attendees of the hosts’ calendar meeting', () => {
    const row = {
      id: 'booking_x',
      account_id: 'acc',
      host_ids: ['h'],
      customer_name: 'Ada',
      customer_email: 'ada@example.com',
      guests: ['grace@example.com'],
      notes: null,
      answers: {},
      start_time: new Date('2026-03-03T09:00:00Z'),
      end_time: new Date('2026-03-03T09:30:00Z'),
      livemode: true,
    } as unknown as BookingRow;
    expect(meetingOf(row, null).attendees).toEqual([
      { name: 'Ada', email: 'ada@example.com' },
      { name: null, email: 'grace@example.com' },
    ]);
  });
});
