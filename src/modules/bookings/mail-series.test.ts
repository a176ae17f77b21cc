/**
 * The mails of a recurring series (mails.ts with series-mails.ts; docs/api.md#recurring-series): one
 * mail per recipient for the whole series, whose invite is the series VEVENT (RRULE, EXDATE, SEQUENCE
 * of the series) that a real parser (ical.js) expands to the live occurrences; METHOD:CANCEL of the
 * series UID for the whole series, a REQUEST with the new EXDATE for some dates, a RECURRENCE-ID
 * override for one date moved alone; the rule in words in the reader's zone; and the intent path (data
 * through JSON, rendered at send) gives exactly what the pre-rendered path gives, also through the real
 * outbox (a real database, the bookings' contributed renderer, a real SMTP server).
 */
import ICAL from 'ical.js';
import type { ParsedMail } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { startTestApp } from '../../../test/helpers/app.js';
import { startSmtpSink } from '../../../test/helpers/smtp.js';
import { occurrences, type RecurrenceRule } from '../../lib/recurrence.js';
import { FakeClock } from '../../platform/clock.js';
import type { MailApi, MailMessage } from '../mail/api.js';
import { buildInvite } from '../mail/invite.js';
import {
  type BookingMailInput,
  type BookingMailKind,
  bookingMailIntents,
  bookingMailRenderer,
  bookingMails,
  type Contact,
  type SeriesMail,
} from './mails.js';
import { type BookingRow, newBookingRow } from './repo.js';
import { describeRule, seriesSnapshot } from './series-mails.js';

const STAMP = new Date('2027-03-01T12:00:00Z');
// Tuesdays 09:00–09:30 in Berlin for 34 weeks from 16 March 2027, across both 2027 DST changes.
const RULE: RecurrenceRule = { frequency: 'weekly', interval: 1, count: 34, timezone: 'Europe/Berlin' };
const FIRST = { start: Date.parse('2027-03-16T08:00:00Z'), end: Date.parse('2027-03-16T08:30:00Z') };
const ALL = occurrences(FIRST, RULE).map((o) => ({ start: new Date(o.start), end: new Date(o.end) }));

/** 25 May 2027 moved to Wednesday 26 May, 14:00 Berlin. */
const MOVED = [
  { at: ALL[10]!.start, start: new Date('2027-05-26T12:00:00Z'), end: new Date('2027-05-26T12:30:00Z') },
];

function row(over: Partial<BookingRow> = {}): BookingRow {
  const at = new Date('2027-03-01T10:00:00Z');
  return {
    ...newBookingRow({
      row: {
        id: 'bk_series1',
        account_id: 'acc_1',
        principal_id: 'hst_ann',
        host_ids: ['hst_ann', 'hst_bob', 'hst_cal'],
        status: 'confirmed',
        start_time: ALL[0]!.start,
        end_time: ALL[0]!.end,
        customer_email: 'ada@example.com',
        customer_name: 'Ada Lovelace',
        customer_timezone: 'America/New_York',
        notes: 'About the engine',
        manage_token_hash: 'h',
        manage_nonce: 'n',
        series_id: 'ser_weekly',
        occurrence_start: ALL[0]!.start,
        created_at: at,
        updated_at: at,
        sequence: 0,
        answers: '{}',
        metadata: '{}',
      },
      answers: {},
      metadata: {},
    }),
    ...over,
  };
}

const HOSTS: Contact[] = [
  { id: 'hst_ann', name: 'Ann', email: 'ann@example.com', timezone: 'Europe/Berlin' },
  { id: 'hst_bob', name: 'Bob', email: null, timezone: 'UTC' },
  { id: 'hst_cal', name: 'Cal', email: 'cal@example.com', timezone: 'Asia/Tokyo', calendarWritten: true },
];

function series(over: Partial<SeriesMail> = {}): SeriesMail {
  return {
    id: 'ser_weekly',
    frequency: 'weekly',
    interval: 1,
    count: 34,
    timezone: 'Europe/Berlin',
    first: ALL[0]!,
    exdates: [],
    sequence: 0,
    occurrences: ALL,
    moved: [],
    cancelled: [],
    whole: false,
    recurrenceId: null,
    ...over,
  };
}

function input(kind: BookingMailKind, s: SeriesMail | undefined, b: BookingRow = row()): BookingMailInput {
  return {
    kind,
    booking: b,
    title: 'Weekly sync',
    hosts: HOSTS,
    manageUrl: 'https://kairos.test/manage/tok',
    fromAddress: 'bookings@kairos.test',
    ...(s ? { series: s } : {}),
  };
}

/** The one event of an invite's calendar, as ical.js reads it, and the calendar's METHOD. */
function parse(ics: string) {
  const cal = new ICAL.Component(ICAL.parse(ics));
  const vevents = cal.getAllSubcomponents('vevent');
  expect(vevents).toHaveLength(1);
  return { method: cal.getFirstPropertyValue('method'), event: new ICAL.Event(vevents[0]!) };
}

function expand(event: ICAL.Event): string[] {
  const out: string[] = [];
  const it = event.iterator();
  for (let t = it.next(); t && out.length <= 1000; t = it.next()) out.push(t.toJSDate().toISOString());
  return out;
}

const isos = (xs: readonly { start: Date }[]) => xs.map((x) => x.start.toISOString());

/** The customer's mail (the first) and its invite's text. */
function customerMail(i: BookingMailInput) {
  const mail = bookingMails(i)[0]!;
  expect(mail.to).toBe('ada@example.com');
  return { mail, ics: mail.invite ? buildInvite(mail.invite, { stamp: STAMP }) : null };
}

describe('the mails of a recurring series', () => {
  it('confirms the series once per recipient with one repeating invite that expands to its occurrences', () => {
    const mails = bookingMails(input('confirmation', series({ sequence: 1 })));
    expect(mails.map((m) => [m.to, m.subject, m.invite?.method ?? null])).toEqual([
      ['ada@example.com', 'Confirmed: Weekly sync (every week, 34 times)', 'REQUEST'],
      ['ann@example.com', 'Confirmed: Weekly sync (every week, 34 times)', 'REQUEST'],
      [null, 'Confirmed: Weekly sync (every week, 34 times)', null],
      // Cal's calendar is written by Kairos: no invite, as for a booking alone.
      ['cal@example.com', 'Confirmed: Weekly sync (every week, 34 times)', null],
    ]);
    const ics = buildInvite(mails[0]!.invite!, { stamp: STAMP });
    expect(ics).toContain('UID:ser_weekly@kairos\r\n');
    expect(ics).toContain('SEQUENCE:1\r\n');
    expect(ics).toContain('DTSTART;TZID=Europe/Berlin:20270316T090000\r\n');
    expect(ics).toContain('RRULE:FREQ=WEEKLY;INTERVAL=1;COUNT=34\r\n');
    expect(ics).not.toContain('EXDATE');
    // The customer reads New York: the display zone; the rule repeats in Berlin.
    expect(ics).toContain('X-WR-TIMEZONE:America/New_York\r\n');
    const { method, event } = parse(ics);
    expect(method).toBe('REQUEST');
    expect(expand(event)).toEqual(isos(ALL));
  });

  it('says the rule in words in the reader zone when it holds there, else in the series zone', () => {
    const { mail } = customerMail(input('confirmation', series()));
    // New York and Berlin change clocks on different Sundays: 03:00 some weeks, 04:00 others there.
    expect(mail.text).toContain(
      'When: Every week on Tuesday at 09:00 – 09:30, 34 times, from 16 March 2027 (Europe/Berlin)',
    );
    expect(mail.text).toContain('Dates (America/New_York):\n- Tuesday, 16 March 2027 at 04:00 – 04:30\n');
    expect(mail.text).toContain(
      '- Tuesday, 23 March 2027 at 04:00 – 04:30\n- Tuesday, 30 March 2027 at 03:00 – 03:30\n',
    );
    expect(mail.text).toContain('With: Ann, Bob, Cal');
    expect(mail.text).toContain('View, reschedule or cancel: https://kairos.test/manage/tok');
    expect(mail.html).toContain('<p>- Tuesday, 16 March 2027 at 04:00 – 04:30</p>');
    const host = bookingMails(input('confirmation', series()))[1]!;
    expect(host.text).toContain('New recurring booking: Weekly sync');
    expect(host.text).toContain(
      'When: Every week on Tuesday at 09:00 – 09:30, 34 times, from 16 March 2027 (Europe/Berlin)',
    );
    expect(host.text).toContain('Series: ser_weekly');
    const snap = seriesSnapshot(series());
    expect(describeRule(snap, 'Europe/Paris')).toBe(
      'Every week on Tuesday at 09:00 – 09:30, 34 times, from 16 March 2027 (Europe/Paris)',
    );
    // Tokyo keeps no DST: Berlin's 09:00 is 17:00 in winter and 16:00 in summer there.
    expect(describeRule(snap, 'Asia/Tokyo')).toContain('(Europe/Berlin)');
    expect(
      describeRule(
        seriesSnapshot(series({ frequency: 'monthly', interval: 2, count: 1, timezone: 'UTC' })),
        null,
      ),
    ).toBe('Every 2 months on the 16th at 08:00 – 08:30, once, from 16 March 2027 (UTC)');
    expect(
      describeRule(seriesSnapshot(series({ frequency: 'daily', interval: 3, count: 5 })), 'Europe/Berlin'),
    ).toBe('Every 3 days at 09:00 – 09:30, 5 times, from 16 March 2027 (Europe/Berlin)');
  });

  it('cancels the whole series with METHOD:CANCEL of the series UID and lists what was cancelled', () => {
    const cancelled = ALL.slice(30);
    const i = input(
      'cancellation',
      series({ whole: true, sequence: 4, occurrences: [], cancelled }),
      row({ status: 'cancelled', cancellation_reason: 'Project over' }),
    );
    const { mail, ics } = customerMail(i);
    expect(mail.subject).toBe('Cancelled: Weekly sync (every week, 34 times)');
    expect(mail.text).toContain('Your recurring booking has been cancelled: every date of it.');
    expect(mail.text).toContain('Cancelled (America/New_York):');
    // Berlin is back on winter time from 31 October, New York only from 7 November.
    expect(mail.text).toContain(
      '- Tuesday, 26 October 2027 at 03:00 – 03:30\n- Tuesday, 2 November 2027 at 04:00 – 04:30\nWith:',
    );
    expect(mail.text).toContain('Reason: Project over');
    expect(mail.text).not.toContain('View, reschedule or cancel');
    const { method, event } = parse(ics!);
    expect(method).toBe('CANCEL');
    expect(event.uid).toBe('ser_weekly@kairos');
    expect(event.sequence).toBe(4);
    expect(bookingMailIntents(i).map((m) => m.icsMethod)).toEqual(['CANCEL', 'CANCEL', null, null]);
    expect(bookingMails(i)[3]!.text).toContain('They are removed from your calendar.');
  });

  it('cancels some dates with a REQUEST of the series whose EXDATE drops them', () => {
    const gone = [ALL[3]!, ALL[4]!];
    const i = input(
      'cancellation',
      series({
        sequence: 2,
        exdates: gone.map((o) => o.start),
        occurrences: ALL.filter((o) => !gone.includes(o)),
        cancelled: gone,
      }),
    );
    const { mail, ics } = customerMail(i);
    expect(mail.subject).toBe('Cancelled: Weekly sync (2 dates)');
    expect(mail.text).toContain('2 dates of your recurring booking have been cancelled.');
    expect(mail.text).toContain(
      'Cancelled (America/New_York):\n- Tuesday, 6 April 2027 at 03:00 – 03:30\n- Tuesday, 13 April 2027 at 03:00 – 03:30\nStill booked (America/New_York):',
    );
    expect(ics).toContain('EXDATE;TZID=Europe/Berlin:20270406T090000,20270413T090000\r\n');
    const { method, event } = parse(ics!);
    expect(method).toBe('REQUEST');
    expect(event.sequence).toBe(2);
    expect(expand(event)).toEqual(isos(ALL.filter((o) => !gone.includes(o))));
    expect(bookingMailIntents(i).map((m) => m.icsMethod)).toEqual(['REQUEST', 'REQUEST', null, null]);
    const one = customerMail(
      input('cancellation', series({ exdates: [ALL[3]!.start], cancelled: [ALL[3]!] })),
    );
    expect(one.mail.subject).toBe('Cancelled: Weekly sync (1 date)');
    expect(one.mail.text).toContain('A date of your recurring booking has been cancelled.');
  });

  it('moves one date alone with a RECURRENCE-ID override of the series UID', () => {
    const moved = ALL[10]!; // Tuesday 25 May 2027, 09:00 Berlin
    const b = row({
      id: 'bk_series11',
      start_time: new Date('2027-05-26T12:00:00Z'),
      end_time: new Date('2027-05-26T12:30:00Z'),
      occurrence_start: moved.start,
      sequence: 1,
    });
    const i = input('reschedule', series({ sequence: 3, recurrenceId: moved.start }), b);
    const { mail, ics } = customerMail(i);
    expect(mail.subject).toBe('Rescheduled: Weekly sync');
    expect(mail.text).toContain('One date of your recurring booking has moved to a new time');
    expect(mail.text).toContain('When: Wednesday, 26 May 2027 at 08:00 – 08:30 (America/New_York)');
    expect(ics).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20270525T090000\r\n');
    expect(ics).toContain('DTSTART;TZID=Europe/Berlin:20270526T140000\r\n');
    expect(ics).not.toContain('RRULE:FREQ=WEEKLY');
    const { method, event } = parse(ics!);
    expect(method).toBe('REQUEST');
    expect(event.uid).toBe('ser_weekly@kairos');
    expect(event.sequence).toBe(3);
    expect(event.isRecurrenceException()).toBe(true);
    expect(event.recurrenceId.toJSDate().toISOString()).toBe(moved.start.toISOString());
    expect(event.startDate.toJSDate().toISOString()).toBe('2027-05-26T12:00:00.000Z');
    expect(bookingMails(i)[1]!.text).toContain('Booking rescheduled (one date of a series): Weekly sync');
  });

  it('writes through the intent path (data through JSON, rendered at send) exactly the pre-rendered mails', () => {
    const moved = row({
      start_time: new Date('2027-05-26T12:00:00Z'),
      end_time: new Date('2027-05-26T12:30:00Z'),
    });
    const cases: BookingMailInput[] = [
      input('confirmation', series({ exdates: [ALL[1]!.start], occurrences: ALL.slice(2) })),
      input('cancellation', series({ whole: true, cancelled: ALL, occurrences: [] })),
      input('cancellation', series({ exdates: [ALL[5]!.start], cancelled: [ALL[5]!] })),
      input('cancellation', series({ exdates: [ALL[5]!.start], cancelled: [ALL[5]!], moved: MOVED })),
      input('cancellation', series({ whole: true, cancelled: ALL, occurrences: [], moved: MOVED })),
      input('reschedule', series({ recurrenceId: ALL[10]!.start, moved: MOVED }), moved),
      input('reschedule', series({ first: ALL[1]!, count: 33, occurrences: ALL.slice(1) })),
      input('confirmation', undefined),
    ];
    for (const [n, c] of cases.entries()) {
      const pre = bookingMails(c);
      const intents = bookingMailIntents(c);
      expect(intents.map((m) => [m.to, m.subject, m.kind, m.subjectId])).toEqual(
        pre.map((m) => [m.to, m.subject, m.kind, m.subjectId]),
      );
      for (const [k, intent] of intents.entries()) {
        if (intent.to === null) continue;
        const rendered = bookingMailRenderer.render(JSON.parse(JSON.stringify(intent.data)));
        const { text, html, invite } = pre[k]!;
        expect(rendered.text, `case ${n}, mail ${k}`).toBe(text);
        expect(rendered.html).toBe(html);
        expect(rendered.invite).toEqual(invite);
        expect(intent.icsMethod).toBe(invite?.method ?? null);
        if (invite)
          expect(buildInvite(rendered.invite!, { stamp: STAMP })).toBe(buildInvite(invite, { stamp: STAMP }));
      }
    }
  });

  it('carries the moved dates as overrides in a REQUEST of the series, none in its CANCEL', () => {
    const partial = customerMail(
      input('cancellation', series({ exdates: [ALL[5]!.start], cancelled: [ALL[5]!], moved: MOVED })),
    );
    const cal = new ICAL.Component(ICAL.parse(partial.ics!));
    const [master, override] = cal.getAllSubcomponents('vevent').map((v) => new ICAL.Event(v));
    expect(cal.getAllSubcomponents('vevent')).toHaveLength(2);
    expect(master!.isRecurring()).toBe(true);
    expect(override!.uid).toBe('ser_weekly@kairos');
    expect(override!.recurrenceId.toJSDate().toISOString()).toBe(ALL[10]!.start.toISOString());
    expect(override!.startDate.toJSDate().toISOString()).toBe('2027-05-26T12:00:00.000Z');
    const whole = customerMail(
      input('cancellation', series({ whole: true, cancelled: ALL, occurrences: [], moved: MOVED })),
    );
    expect(parse(whole.ics!).method).toBe('CANCEL');
    expect(whole.ics).not.toContain('RECURRENCE-ID');
  });

  it('renders the data of a mail written before moved dates were snapshotted: the series without overrides', () => {
    const i = input('cancellation', series({ exdates: [ALL[5]!.start], cancelled: [ALL[5]!] }));
    const [intent] = bookingMailIntents(i);
    const data = JSON.parse(JSON.stringify(intent!.data));
    expect(data.series.moved).toEqual([]);
    delete data.series.moved;
    const rendered = bookingMailRenderer.render(data);
    expect(rendered.invite).toEqual(bookingMails(i)[0]!.invite);
    const ics = buildInvite(rendered.invite!, { stamp: STAMP });
    expect(parse(ics).method).toBe('REQUEST');
    expect(ics).not.toContain('RECURRENCE-ID');
  });

  it('leaves a booking alone as it was: no series in its data, its own UID, CANCEL when cancelled', () => {
    const plain = bookingMailIntents(input('cancellation', undefined));
    expect(plain[0]!.data).not.toHaveProperty('series');
    expect(plain[0]!.icsMethod).toBe('CANCEL');
    const { mail, ics } = customerMail(input('cancellation', undefined));
    expect(mail.subject).toBe('Cancelled: Weekly sync');
    expect(ics).toContain('UID:bk_series1@kairos\r\n');
    expect(ics).not.toContain('TZID');
  });
});

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

describe('the mails of a series through the real outbox', () => {
  it('sends from the stored intents exactly what the pre-rendered path sends', async () => {
    const clock = new FakeClock('2027-03-01T12:00:00.000Z');
    const sink = await startSmtpSink();
    const t = await startTestApp({
      clock,
      env: { SMTP_URL: sink.url, MAIL_FROM: 'Kairos <bookings@kairos.test>' },
    });
    try {
      const mail = t.ctx.modules.mail as MailApi;
      const i = input(
        'cancellation',
        series({ sequence: 2, exdates: [ALL[3]!.start], cancelled: [ALL[3]!], occurrences: ALL.slice(4) }),
      );
      await t.ctx.db.transaction().execute(async (trx) => {
        await mail.enqueue(trx, bookingMailIntents(i));
        await mail.enqueue(
          trx,
          bookingMails(i).map((m): MailMessage => ({ ...m, subjectId: `pre_${m.subjectId}` })),
        );
      });
      expect((await mail.listFor('bk_series1')).map((r) => [r.to, r.status, r.ics_method])).toEqual([
        ['ada@example.com', 'pending', 'REQUEST'],
        ['ann@example.com', 'pending', 'REQUEST'],
        [null, 'skipped', null],
        ['cal@example.com', 'pending', null],
      ]);
      await t.ctx.jobs.drain();
      const got = (await sink.waitFor(6)).map(partsOf);
      expect(got).toHaveLength(6);
      for (const to of ['ada@example.com', 'ann@example.com', 'cal@example.com']) {
        const [a, b] = got.filter((m) => m.to === to);
        expect(a, to).toBeDefined();
        expect(a).toEqual(b);
        expect(a!.subject).toBe('Cancelled: Weekly sync (1 date)');
      }
      const ics = got.find((m) => m.to === 'ada@example.com')!.ics!;
      expect(ics).toContain('UID:ser_weekly@kairos\r\n');
      expect(ics).toContain('DTSTAMP:20270301T120000Z\r\n');
      expect(expand(parse(ics).event)).toEqual(isos(ALL.filter((_, k) => k !== 3)));
      expect(got.find((m) => m.to === 'cal@example.com')!.ics).toBeNull();
    } finally {
      await t.close();
      await sink.close();
    }
  });
});
