/**
 * Booking mails speak their reader's zone (docs/api.md#e-mail-and-pages), over the real runtime and a
 * real SMTP server (test/helpers/smtp.ts): a host reads its schedule's zone, a customer booked without
 * `customer_timezone` reads the host's, each named; the invite names the zone before its event and
 * ends with CRLF; the booking page's "Add to calendar" file carries the SEQUENCE the last invite had.
 */
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { newHost } from '../../../test/helpers/fixtures.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';
import { FakeClock } from '../../platform/clock.js';
import { icsOf } from '../../web/booking/shared/ics.js';

// Monday 2 March 2026, 06:00 UTC; Berlin is UTC+1 until 29 March.
const NOW = '2026-03-02T06:00:00.000Z';

const toOf = (m: ParsedMail) => (m.to && !Array.isArray(m.to) ? m.to.value[0]?.address : undefined);
const icsOfMail = (m: ParsedMail) =>
  m.attachments.find((a) => a.contentType === 'text/calendar')?.content.toString('utf8') ?? '';

describe('booking mails in the reader zone', () => {
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

  it('gives a Berlin host 09:00 in Europe/Berlin, and a customer without a zone the host zone', async () => {
    const acc = await t.account();
    const host = await newHost(
      t,
      { token: acc.key },
      { display_name: 'Berta', timezone: 'Europe/Berlin', email: 'berta@example.com' },
    );
    const res = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: {
        principal_id: host,
        start_time: '2026-03-03T08:00:00Z',
        customer_email: 'cy@example.com',
        customer_name: 'Cy',
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    await t.ctx.jobs.drain();
    const got = await sink.waitFor(2);
    const hostMail = got.find((m) => toOf(m) === 'berta@example.com')!;
    const customerMail = got.find((m) => toOf(m) === 'cy@example.com')!;
    for (const m of [hostMail, customerMail]) {
      expect(m.text).toContain('09:00 – 09:30 (Europe/Berlin)');
      expect(m.text).not.toContain('(UTC)');
      const ics = icsOfMail(m);
      expect(ics).toContain('X-WR-TIMEZONE:Europe/Berlin');
      // The calendar's own properties come before its first component.
      expect(ics.indexOf('X-WR-TIMEZONE')).toBeLessThan(ics.indexOf('BEGIN:VEVENT'));
      expect(ics.endsWith('END:VCALENDAR\r\n')).toBe(true);
    }
  });

  it('names the customer zone when given, and the page file carries the invite SEQUENCE after a reschedule', async () => {
    const acc = await t.account();
    const host = await newHost(
      t,
      { token: acc.key },
      { display_name: 'Hal', timezone: 'Europe/Berlin', email: 'hal@example.com' },
    );
    const res = await t.call('POST', '/v1/bookings', {
      token: acc.key,
      body: {
        principal_id: host,
        start_time: '2026-03-04T08:00:00Z',
        customer_email: 'ny@example.com',
        customer_name: 'Ny',
        customer_timezone: 'America/New_York',
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const { booking } = await res.json();
    const moved = await t.call('PATCH', `/v1/bookings/${booking.id}`, {
      token: acc.key,
      body: { start_time: '2026-03-04T09:00:00Z' },
    });
    expect(moved.status, await moved.clone().text()).toBe(200);
    await t.ctx.jobs.drain();
    const all = await sink.waitFor(6);
    const moves = all.filter((m) => m.subject?.startsWith('Rescheduled'));
    const last = moves.find((m) => toOf(m) === 'ny@example.com')!;
    expect(last.text).toContain('04:00 – 04:30 (America/New_York)');
    const hostLast = moves.find((m) => toOf(m) === 'hal@example.com')!;
    expect(hostLast.text).toContain('10:00 – 10:30 (Europe/Berlin)');
    const mailed = /SEQUENCE:(\d+)/.exec(icsOfMail(last))?.[1];
    expect(mailed).toBe('1');

    const token = String(booking.manage_url).split('/b/')[1]!;
    const page = await t.call('GET', `/v1/public/bookings/${token}`);
    expect(page.status).toBe(200);
    const file = icsOf((await page.json()).booking, booking.manage_url);
    expect(file).toContain(`SEQUENCE:${mailed}`);
    expect(file).toContain(`UID:${booking.id}@kairos`);
  });
});
