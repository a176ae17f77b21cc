/**
 * Booking mails rendered at send (mails.ts, the mail module's intents) over the real runtime, a real
 * database and a real SMTP server (test/helpers/smtp.ts): the mail a booking's intent renders when it
 * is sent is exactly the mail the pre-rendered path writes from the same booking (text, HTML, invite,
 * with a frozen clock for the DTSTAMP), a later change of the host's name or the link's title does not
 * reach it, and a runtime stopped between the commit and the rendering loses nothing: the next one
 * renders and sends it.
 */
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createTestDatabase } from '../../../test/helpers/db.js';
import { newHost } from '../../../test/helpers/fixtures.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';
import { addressOf } from '../../lib/mail-text.js';
import { FakeClock } from '../../platform/clock.js';
import type { MailApi, MailMessage } from '../mail/api.js';
import { bookingMails, bookingMailIntents } from './mails.js';
import { bookingById } from './repo.js';

const MAIL_FROM = 'Kairos Test <bookings@kairos.test>';
// Monday 2 March 2026, 06:00 UTC; hosts default to Mon–Fri 09:00–17:00 UTC.
const NOW = '2026-03-02T06:00:00.000Z';

const mailOf = (t: TestApp) => t.ctx.modules.mail as MailApi;

/** A received mail's parts: text, HTML and its text/calendar part. */
function partsOf(m: ParsedMail) {
  return {
    subject: m.subject,
    to: m.to && !Array.isArray(m.to) ? m.to.value[0]?.address : undefined,
    text: m.text,
    html: m.html,
    ics: m.attachments.find((a) => a.contentType === 'text/calendar')?.content.toString('utf8') ?? null,
  };
}

/** Books one slot of a host with an address, through a titled link of two hosts (one without). */
async function bookOnce(t: TestApp, start: string) {
  const acc = await t.account();
  const ann = await newHost(
    t,
    { token: acc.key },
    { display_name: 'Ann "Host"', timezone: 'UTC', email: 'ann@example.com' },
  );
  const bob = await newHost(t, { token: acc.key }, { display_name: 'Bob', timezone: 'UTC' });
  const link = await t.call('POST', '/v1/booking-links', {
    token: acc.key,
    body: {
      title: 'Intro call',
      slug: `render-${Date.now()}`,
      host_ids: [ann, bob],
      assignment: 'collective',
    },
  });
  expect(link.status, await link.clone().text()).toBe(201);
  const linkId = (await link.json()).booking_link.id as string;
  const res = await t.call('POST', '/v1/bookings', {
    token: acc.key,
    body: {
      booking_link_id: linkId,
      start_time: start,
      customer_email: 'ada@example.com',
      customer_name: 'Ada Lovelace',
      customer_timezone: 'Europe/Paris',
      notes: 'About the engine, <b>bold</b> & long: '.repeat(4),
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const { booking } = await res.json();
  return { acc, ann, bob, linkId, booking: booking as { id: string; manage_url: string } };
}

describe('booking mails rendered at send', () => {
  const clock = new FakeClock(NOW);
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestApp({ clock, env: { SMTP_URL: sink.url, MAIL_FROM } });
  });
  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  it('sends exactly the mails the pre-rendered path writes from the same booking, whatever changed since', async () => {
    const { acc, ann, linkId, booking } = await bookOnce(t, '2026-03-03T10:00:00Z');
    // Committed as intents: subjects, recipients and invite methods known, no bodies yet.
    const stored = await t.ctx.db
      .selectFrom('mail_outbox')
      .select(['to_address', 'status', 'text_body', 'ics', 'ics_method', 'render'])
      .where('subject_id', '=', booking.id)
      .orderBy('seq')
      .execute();
    expect(stored.map((r) => [r.to_address, r.status, r.text_body, r.ics, r.ics_method])).toEqual([
      ['ada@example.com', 'pending', '', null, 'REQUEST'],
      ['ann@example.com', 'pending', '', null, 'REQUEST'],
      [null, 'skipped', '', null, null],
    ]);
    expect(stored.map((r) => r.render?.renderer ?? null)).toEqual(['booking', 'booking', null]);

    // The pre-rendered path, from the booking as committed and its hosts' contacts.
    const row = (await bookingById(t.ctx.db, booking.id))!;
    const contacts = await t.ctx.modules.principals.contacts(row.host_ids);
    const input = {
      kind: 'confirmation' as const,
      booking: row,
      title: row.title ?? 'Booking',
      hosts: row.host_ids.map((h) => ({
        id: h,
        name: contacts.get(h)?.name ?? '',
        email: contacts.get(h)?.email ?? null,
        timezone: contacts.get(h)?.timezone ?? null,
      })),
      manageUrl: booking.manage_url,
      fromAddress: addressOf(MAIL_FROM),
    };
    const prerendered = bookingMails(input);
    // The intents of the same input are what the booking wrote.
    expect(stored.filter((r) => r.render).map((r) => r.render!.data)).toEqual(
      bookingMailIntents(input)
        .filter((m) => m.to !== null)
        .map((m) => m.data),
    );

    // Changes after the commit do not reach the mails: they were snapshotted with it.
    expect(
      (await t.call('PATCH', `/v1/hosts/${ann}`, { token: acc.key, body: { display_name: 'Renamed' } }))
        .status,
    ).toBe(200);
    expect(
      (await t.call('PATCH', `/v1/booking-links/${linkId}`, { token: acc.key, body: { title: 'Retitled' } }))
        .status,
    ).toBe(200);

    // The pre-rendered mails written and sent through the same outbox (another subject), the clock
    // where it was at the booking's commit (their DTSTAMP).
    await t.ctx.db.transaction().execute((trx) =>
      mailOf(t).enqueue(
        trx,
        prerendered.map((m): MailMessage => ({ ...m, subjectId: `pre_${booking.id}` })),
      ),
    );
    clock.advance(60_000);
    await t.ctx.jobs.drain();
    const got = (await sink.waitFor(4)).map(partsOf);
    expect(got).toHaveLength(4);
    const byTo = (to: string) => got.filter((m) => m.to === to);
    for (const to of ['ada@example.com', 'ann@example.com']) {
      const [a, b] = byTo(to);
      expect(a, to).toBeDefined();
      expect(a!.ics).toContain('DTSTAMP:20260302T060000Z');
      expect(a!.text).toContain('Intro call');
      expect(a!.text).not.toContain('Retitled');
      expect(a).toEqual(b);
    }
    expect(byTo('ann@example.com')[0]!.text).toContain('Hello Ann "Host"');
    // The rendered bodies are kept on the row, as a pre-rendered mail's are.
    const sent = await t.ctx.db
      .selectFrom('mail_outbox')
      .select(['subject_id', 'to_address', 'status', 'text_body', 'html_body', 'ics'])
      .where('subject_id', 'in', [booking.id, `pre_${booking.id}`])
      .where('status', '=', 'sent')
      .orderBy('seq')
      .execute();
    expect(sent).toHaveLength(4);
    const strip = (r: (typeof sent)[number]) => ({ ...r, subject_id: null });
    expect(sent.slice(0, 2).map(strip)).toEqual(sent.slice(2).map(strip));
  });
});

describe('a runtime stopped between the commit and the rendering', () => {
  it('loses nothing: the next runtime renders and sends the mail', async () => {
    const clock = new FakeClock(NOW);
    const sink = await startSmtpSink();
    const database = await createTestDatabase();
    const first = await startTestApp({ clock, database, env: { SMTP_URL: sink.url, MAIL_FROM } });
    let booking: { id: string; manage_url: string };
    try {
      ({ booking } = await bookOnce(first, '2026-03-04T11:00:00Z'));
    } finally {
      // Its workers never ran (tests run jobs only when drained): the intents are all there is.
      await first.close();
    }
    const second = await startTestApp({
      clock,
      database,
      masterKey: first.masterKey,
      env: { SMTP_URL: sink.url, MAIL_FROM },
    });
    try {
      expect(sink.raw).toHaveLength(0);
      await second.ctx.jobs.drain();
      const got = (await sink.waitFor(2)).map(partsOf);
      const customer = got.find((m) => m.to === 'ada@example.com')!;
      expect(customer.subject).toBe('Confirmed: Intro call');
      expect(customer.text).toContain(`View, reschedule or cancel: ${booking.manage_url}`);
      expect(customer.ics).toContain(`UID:${booking.id}@kairos`);
      expect((await mailOf(second).listFor(booking.id)).map((r) => r.status)).toEqual([
        'sent',
        'sent',
        'skipped',
      ]);
    } finally {
      await second.close();
      await database.drop();
      await sink.close();
    }
  });
});
