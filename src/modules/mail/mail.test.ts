/**
 * The mail outbox over the real runtime, a real database and a real SMTP server (test/helpers/smtp.ts):
 * rows written in the caller's transaction, sent after commit by the `mail.send` job, retried on SMTP
 * errors (the test clock moves the backoff), kept as `logged` without SMTP_URL.
 */
import ICAL from 'ical.js';
import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';
import { enqueue } from '../../jobs/runner.js';
import { type AnyModule, MODULES } from '../index.js';
import { FakeClock } from '../../platform/clock.js';
import { escapeHtml } from '../../lib/html.js';
import { describeTime } from '../../lib/mail-text.js';
import type { InviteSpec, MailApi, MailIntent, MailMessage, RenderedMail } from './api.js';
import { buildInvite, inviteCalendar } from './invite.js';
import { mailModule } from './module.js';
import { MAX_SEND_ATTEMPTS, MailOutbox, SEND_QUEUE } from './service.js';
import { HOUR } from '../../lib/time.js';

const MAIL_FROM = 'Kairos Test <bookings@kairos.test>';

/** The mail module, composed after the listed ones until src/modules/index.ts lists it. */
const EXTRA = (MODULES as readonly AnyModule[]).some((m) => m.name === 'mail') ? [] : [mailModule];

const mailOf = (t: TestApp) => (t.ctx.modules as unknown as { mail: MailApi }).mail;

let n = 0;
const bookingId = () => `bk_test${++n}${Date.now()}`;

function invite(uid: string, over: Partial<InviteSpec> = {}): InviteSpec {
  return {
    method: 'REQUEST',
    uid,
    sequence: 0,
    start: new Date('2026-06-10T09:00:00Z'),
    end: new Date('2026-06-10T09:30:00Z'),
    summary: 'Intro call',
    description: 'Manage: https://kairos.test/b/secret-token',
    url: 'https://kairos.test/b/secret-token',
    timezone: 'Europe/Paris',
    organizer: { name: 'Ann Host', email: 'ann@kairos.test' },
    attendees: [{ name: 'Bob Customer', email: 'bob@example.test' }],
    ...over,
  };
}

function message(subjectId: string, over: Partial<MailMessage> = {}): MailMessage {
  return {
    kind: 'booking.confirmation',
    livemode: true,
    subjectId,
    to: 'bob@example.test',
    subject: 'Booked: Intro call',
    text: 'You are booked.\nManage: https://kairos.test/b/secret-token',
    html: '<p>You are booked.</p><p><a href="https://kairos.test/b/secret-token">Manage</a></p>',
    ...over,
  };
}

async function commit(t: TestApp, messages: MailMessage[]): Promise<void> {
  await t.ctx.db.transaction().execute((trx) => mailOf(t).enqueue(trx, messages));
}

/** The text/calendar part of a received mail: its Content-Type header and its ICS text. */
function calendarPart(mail: ParsedMail, raw: string): { contentType: string; ics: string } {
  const contentType = /Content-Type: (text\/calendar[^\r\n]*)/i.exec(raw)?.[1] ?? '';
  const part = mail.attachments.find((a) => a.contentType === 'text/calendar');
  expect(part, 'a text/calendar part').toBeDefined();
  return { contentType, ics: part!.content.toString('utf8') };
}

function parseIcs(ics: string) {
  const calendar = new ICAL.Component(ICAL.parse(ics));
  const vevent = calendar.getFirstSubcomponent('vevent')!;
  const event = new ICAL.Event(vevent);
  return {
    method: calendar.getFirstPropertyValue('method'),
    uid: event.uid,
    sequence: event.sequence,
    start: event.startDate.toJSDate().toISOString(),
    end: event.endDate.toJSDate().toISOString(),
    status: vevent.getFirstPropertyValue('status'),
    organizer: String(vevent.getFirstPropertyValue('organizer')).toLowerCase(),
    attendees: event.attendees.map((a) => String(a.getFirstValue()).toLowerCase()),
  };
}

async function outboxRow(t: TestApp, id: string) {
  return t.ctx.db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('mail over SMTP', () => {
  const clock = new FakeClock('2026-06-01T12:00:00.000Z');
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestApp({ clock, modules: EXTRA, env: { SMTP_URL: sink.url, MAIL_FROM } });
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  it('sends a committed mail with text, html and a REQUEST invite', async () => {
    const subject = bookingId();
    const uid = `${subject}@kairos`;
    const before = sink.raw.length;
    await commit(t, [message(subject, { invite: invite(uid, { sequence: 0 }) })]);
    expect(await mailOf(t).listFor(subject)).toMatchObject([{ status: 'pending', ics_method: 'REQUEST' }]);

    await t.ctx.jobs.drain();
    const mail = (await sink.waitFor(before + 1))[before]!;
    const raw = sink.raw[before]!;
    expect(mail.from?.value).toEqual([{ name: 'Kairos Test', address: 'bookings@kairos.test' }]);
    expect(mail.subject).toBe('Booked: Intro call');
    expect(mail.text?.trim()).toBe('You are booked.\nManage: https://kairos.test/b/secret-token');
    expect(mail.html).toContain('<a href="https://kairos.test/b/secret-token">Manage</a>');

    const cal = calendarPart(mail, raw);
    expect(cal.contentType.replace(/"/g, '')).toMatch(/^text\/calendar; charset=utf-8; method=REQUEST/i);
    expect(parseIcs(cal.ics)).toEqual({
      method: 'REQUEST',
      uid,
      sequence: 0,
      start: '2026-06-10T09:00:00.000Z',
      end: '2026-06-10T09:30:00.000Z',
      status: 'CONFIRMED',
      organizer: 'mailto:ann@kairos.test',
      attendees: ['mailto:bob@example.test'],
    });

    const [row] = await mailOf(t).listFor(subject);
    expect(row).toMatchObject({ kind: 'booking.confirmation', to: 'bob@example.test', status: 'sent' });
    const stored = await outboxRow(t, row!.id);
    expect(stored).toMatchObject({ attempts: 1, last_error: null, sent_at: clock.now() });
    expect(mail.messageId).toBe(`<${row!.id}@kairos.test>`);
  });

  it('sends a CANCEL with the same UID and a higher SEQUENCE; a second job for a sent mail sends nothing', async () => {
    const subject = bookingId();
    const uid = `${subject}@kairos`;
    const before = sink.raw.length;
    await commit(t, [message(subject, { invite: invite(uid, { sequence: 0 }) })]);
    clock.advance(1000);
    await commit(t, [
      message(subject, {
        kind: 'booking.cancellation',
        subject: 'Cancelled: Intro call',
        invite: invite(uid, { method: 'CANCEL', sequence: 1 }),
      }),
    ]);
    await t.ctx.jobs.drain();
    const got = (await sink.waitFor(before + 2)).slice(before);
    const rows = await mailOf(t).listFor(subject);
    expect(rows.map((r) => [r.kind, r.status, r.ics_method])).toEqual([
      ['booking.confirmation', 'sent', 'REQUEST'],
      ['booking.cancellation', 'sent', 'CANCEL'],
    ]);

    const cancel = got.find((m) => m.subject === 'Cancelled: Intro call')!;
    const raw = sink.raw[before + got.indexOf(cancel)]!;
    const cal = calendarPart(cancel, raw);
    expect(cal.contentType.replace(/"/g, '')).toMatch(/method=CANCEL/i);
    expect(parseIcs(cal.ics)).toMatchObject({ method: 'CANCEL', uid, sequence: 1, status: 'CANCELLED' });

    // A job may run twice: the mail is already sent, nothing goes out again.
    const again = await enqueue(t.ctx.db, SEND_QUEUE, { mail_id: rows[1]!.id }, clock.now());
    await t.ctx.jobs.drain();
    // The second run has ended (its row is gone); a mail it sent would be in `raw` by then, since the
    // sink keeps a mail before it accepts it.
    expect(await t.ctx.db.selectFrom('jobs').select('id').where('id', '=', again).execute()).toEqual([]);
    expect(sink.raw).toHaveLength(before + 2);
  });

  it('a rolled-back transaction leaves no mail and sends nothing', async () => {
    const subject = bookingId();
    const before = sink.raw.length;
    await expect(
      t.ctx.db.transaction().execute(async (trx) => {
        await mailOf(t).enqueue(trx, [message(subject), message(subject, { to: 'ann@kairos.test' })]);
        throw new Error('booking failed');
      }),
    ).rejects.toThrow('booking failed');
    expect(await mailOf(t).listFor(subject)).toEqual([]);
    const jobs = await t.ctx.db.selectFrom('jobs').select('id').where('queue', '=', SEND_QUEUE).execute();
    expect(jobs).toEqual([]);
    // With no send job in the store there is nothing to send; the runner, drained, has none in flight.
    await t.ctx.jobs.drain();
    expect(sink.raw).toHaveLength(before);
  });

  it('writes several messages in one call, oldest first', async () => {
    const subject = bookingId();
    const before = sink.raw.length;
    const tos = ['a@example.test', 'b@example.test', 'c@example.test'];
    await commit(
      t,
      tos.map((to) => message(subject, { to })),
    );
    expect((await mailOf(t).listFor(subject)).map((r) => r.to)).toEqual(tos);
    await t.ctx.jobs.drain();
    const got = (await sink.waitFor(before + 3)).slice(before);
    expect(got.map((m) => m.to && !Array.isArray(m.to) && m.to.value[0]?.address).sort()).toEqual(tos);
  });

  it('gives messages sharing one invite the same invite text, and a message with another invite its own', async () => {
    const subject = bookingId();
    const shared = invite(`${subject}@kairos`);
    const other = invite(`${subject}@kairos`, { sequence: 1, method: 'CANCEL' });
    await commit(t, [
      message(subject, { to: 'a@example.test', invite: shared }),
      message(subject, { to: 'b@example.test', invite: shared }),
      message(subject, { to: 'c@example.test', invite: other }),
    ]);
    const rows = await t.ctx.db
      .selectFrom('mail_outbox')
      .select(['to_address', 'ics', 'ics_method'])
      .where('subject_id', '=', subject)
      .orderBy('to_address')
      .execute();
    expect(rows.map((r) => r.ics_method)).toEqual(['REQUEST', 'REQUEST', 'CANCEL']);
    expect(rows[0]!.ics).toBe(rows[1]!.ics);
    expect(parseIcs(rows[0]!.ics!)).toMatchObject({ uid: `${subject}@kairos`, sequence: 0 });
    expect(parseIcs(rows[2]!.ics!)).toMatchObject({ uid: `${subject}@kairos`, sequence: 1 });
    await t.ctx.jobs.drain();
  });
});

// The sink refuses its first 1 + MAX_SEND_ATTEMPTS mails: every attempt of the first test, then the
// first attempt of the second (the tests run in order).
describe('mail over an SMTP server that refuses', () => {
  const clock = new FakeClock('2026-06-01T12:00:00.000Z');
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink({ failFirst: 1 + MAX_SEND_ATTEMPTS });
    t = await startTestApp({ clock, modules: EXTRA, env: { SMTP_URL: sink.url, MAIL_FROM } });
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  it('gives up after MAX_SEND_ATTEMPTS attempts: the row is failed', async () => {
    const subject = bookingId();
    await commit(t, [message(subject)]);
    await t.ctx.jobs.drain();
    for (let i = 1; i < MAX_SEND_ATTEMPTS; i++) {
      const [row] = await mailOf(t).listFor(subject);
      expect(row!.status).toBe('pending');
      clock.advance(HOUR);
      await t.ctx.jobs.drain();
    }
    const [row] = await mailOf(t).listFor(subject);
    const stored = await outboxRow(t, row!.id);
    expect(stored).toMatchObject({ status: 'failed', attempts: MAX_SEND_ATTEMPTS, sent_at: null });
    expect(stored.last_error).toMatch(/451/);
    expect(sink.refused()).toBe(MAX_SEND_ATTEMPTS);
    const jobs = await t.ctx.db.selectFrom('jobs').select('id').where('queue', '=', SEND_QUEUE).execute();
    expect(jobs).toEqual([]);
  });

  it('retries after a refused attempt (2 s backoff) and then sends', async () => {
    const subject = bookingId();
    await commit(t, [message(subject, { invite: invite(`${subject}@kairos`) })]);
    await t.ctx.jobs.drain();
    expect(sink.refused()).toBe(MAX_SEND_ATTEMPTS + 1);
    const [row] = await mailOf(t).listFor(subject);
    expect(await outboxRow(t, row!.id)).toMatchObject({ status: 'pending', attempts: 1 });
    expect((await outboxRow(t, row!.id)).last_error).toMatch(/451/);

    clock.advance(1_999); // the runner's first backoff is 2 s
    await t.ctx.jobs.drain();
    expect(sink.raw).toHaveLength(0);

    clock.advance(1);
    await t.ctx.jobs.drain();
    const [mail] = await sink.waitFor(1);
    expect(mail!.subject).toBe('Booked: Intro call');
    expect(await outboxRow(t, row!.id)).toMatchObject({ status: 'sent', attempts: 2, last_error: null });
  });
});

describe('mail to a recipient the SMTP server refuses for good', () => {
  const clock = new FakeClock('2026-06-01T12:00:00.000Z');
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink({ rejectRecipients: ['nobody@example.test'] });
    t = await startTestApp({ clock, modules: EXTRA, env: { SMTP_URL: sink.url, MAIL_FROM } });
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  it('marks the mail failed at once (a 550 is not retried) and still sends the others', async () => {
    const subject = bookingId();
    await commit(t, [message(subject, { to: 'nobody@example.test' }), message(subject)]);
    await t.ctx.jobs.drain();
    await sink.waitFor(1);
    const rows = await mailOf(t).listFor(subject);
    expect(rows.map((r) => [r.to, r.status])).toEqual([
      ['nobody@example.test', 'failed'],
      ['bob@example.test', 'sent'],
    ]);
    const failed = await outboxRow(t, rows[0]!.id);
    expect(failed).toMatchObject({ attempts: 1 });
    expect(failed.last_error).toMatch(/550/);
    const jobs = await t.ctx.db.selectFrom('jobs').select('id').where('queue', '=', SEND_QUEUE).execute();
    expect(jobs).toEqual([]);
  });
});

describe('mail without SMTP_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ clock: new FakeClock(), modules: EXTRA });
  });
  afterAll(async () => {
    await t.close();
  });

  it('keeps the mail as logged', async () => {
    const subject = bookingId();
    await commit(t, [message(subject, { invite: invite(`${subject}@kairos`) })]);
    await t.ctx.jobs.drain();
    const rows = await mailOf(t).listFor(subject);
    expect(rows).toMatchObject([{ status: 'logged', ics_method: 'REQUEST' }]);
    const stored = await outboxRow(t, rows[0]!.id);
    expect(stored.text_body).toContain('secret-token');
    expect(stored.ics).toContain('METHOD:REQUEST');
    const jobs = await t.ctx.db.selectFrom('jobs').select('id').where('queue', '=', SEND_QUEUE).execute();
    expect(jobs).toEqual([]);
  });

  it('logs who, what and which mail at info level, never the body or its links', async () => {
    const lines: { level: string; obj: object; msg: string }[] = [];
    const log = {
      info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }),
      error: (obj: object, msg: string) => lines.push({ level: 'error', obj, msg }),
    };
    const outbox = new MailOutbox({
      db: t.ctx.db,
      clock: t.ctx.clock,
      config: { smtpUrl: null, mailFrom: MAIL_FROM },
      log,
      jobs: t.ctx.jobs,
    });
    const subject = bookingId();
    await t.ctx.db.transaction().execute((trx) => outbox.enqueue(trx, [message(subject)]));
    const [row] = await outbox.listFor(subject);
    await outbox.send({ id: '1', queue: SEND_QUEUE, payload: { mail_id: row!.id }, attempts: 1 });
    await outbox.send({ id: '1', queue: SEND_QUEUE, payload: { mail_id: row!.id }, attempts: 2 });
    expect(lines).toEqual([
      {
        level: 'info',
        obj: {
          mail: row!.id,
          kind: 'booking.confirmation',
          to: 'bob@example.test',
          subject: 'Booked: Intro call',
        },
        msg: expect.stringContaining('no SMTP_URL'),
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret-token');
    expect((await outbox.listFor(subject))[0]!.status).toBe('logged');
  });
});

describe('mail written as an intent, rendered when sent', () => {
  const clock = new FakeClock('2026-06-01T12:00:00.000Z');
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestApp({ clock, modules: EXTRA, env: { SMTP_URL: sink.url, MAIL_FROM } });
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  /** An outbox of this runtime's store whose renderer `test` is `render`, with its log kept. */
  function outboxWith(render: (data: unknown) => RenderedMail) {
    const errors: string[] = [];
    const outbox = new MailOutbox(
      {
        db: t.ctx.db,
        clock: t.ctx.clock,
        config: { smtpUrl: sink.url, mailFrom: MAIL_FROM },
        log: { error: (_obj, msg) => errors.push(msg) },
        jobs: t.ctx.jobs,
      },
      () => [{ name: 'test', render }],
    );
    return { outbox, errors };
  }

  function intent(subject: string, over: Partial<MailIntent> = {}): MailIntent {
    return {
      kind: 'booking.confirmation',
      livemode: true,
      subjectId: subject,
      to: 'bob@example.test',
      subject: 'Booked: Intro call',
      icsMethod: 'REQUEST',
      renderer: 'test',
      data: { who: 'Bob', uid: `${subject}@kairos` },
      ...over,
    };
  }

  it('shows an intent not sent yet with its text rendered for the reader (`kairos mail show`), storing nothing', async () => {
    const subject = bookingId();
    const { outbox } = outboxWith((data) => {
      const d = data as { who: string; uid: string };
      return { text: `Hello ${d.who}`, html: `<p>Hello ${d.who}</p>`, invite: invite(d.uid) };
    });
    await t.ctx.db.transaction().execute((trx) => outbox.enqueue(trx, [intent(subject)]));
    const [row] = await outbox.listFor(subject);
    expect(await outbox.get(row!.id)).toMatchObject({ status: 'pending', text: 'Hello Bob' });
    expect(await outboxRow(t, row!.id)).toMatchObject({ status: 'pending', text_body: '' });
    await t.ctx.jobs.drain();
  });

  it('a renderer that throws fails the attempt visibly, is retried, then gives up: the mail is failed, not lost', async () => {
    const subject = bookingId();
    let broken = true;
    const { outbox, errors } = outboxWith((data) => {
      if (broken) throw new Error('renderer broke');
      const d = data as { who: string; uid: string };
      return { text: `Hello ${d.who}`, html: `<p>Hello ${d.who}</p>`, invite: invite(d.uid) };
    });
    await t.ctx.db.transaction().execute((trx) => outbox.enqueue(trx, [intent(subject)]));
    const [row] = await outbox.listFor(subject);
    expect(row).toMatchObject({ status: 'pending', ics_method: 'REQUEST' });
    const job = (attempts: number) => ({
      id: '1',
      queue: SEND_QUEUE,
      payload: { mail_id: row!.id },
      attempts,
    });
    await expect(outbox.send(job(1))).rejects.toThrow(/not rendered.*renderer broke/);
    expect(await outboxRow(t, row!.id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_error: 'renderer broke',
    });
    // Mended before the next attempt: rendered (DTSTAMP: when it was written), sent, bodies kept.
    broken = false;
    clock.advance(5_000);
    await outbox.send(job(2));
    const [mail] = await sink.waitFor(1);
    expect(mail!.text?.trim()).toBe('Hello Bob');
    expect(await outboxRow(t, row!.id)).toMatchObject({
      status: 'sent',
      attempts: 2,
      text_body: 'Hello Bob',
      html_body: '<p>Hello Bob</p>',
      ics_method: 'REQUEST',
    });
    expect((await outboxRow(t, row!.id)).ics).toContain('DTSTAMP:20260601T120000Z');
    // Broken for good: the last attempt makes it failed, with the error, and logs it.
    broken = true;
    const other = bookingId();
    await t.ctx.db.transaction().execute((trx) => outbox.enqueue(trx, [intent(other)]));
    const [second] = await outbox.listFor(other);
    await outbox.send({ ...job(MAX_SEND_ATTEMPTS), payload: { mail_id: second!.id } });
    expect(await outboxRow(t, second!.id)).toMatchObject({ status: 'failed', last_error: 'renderer broke' });
    expect(errors).toEqual(['mail not rendered: giving up']);
    await t.ctx.jobs.drain();
  });

  it('an intent whose renderer no module contributes is retried, not dropped; to no one it is skipped unrendered', async () => {
    const subject = bookingId();
    await t.ctx.db
      .transaction()
      .execute((trx) =>
        mailOf(t).enqueue(trx, [
          intent(subject, { renderer: 'nobody' }),
          intent(subject, { to: null, recipient: 'principal x' }),
        ]),
      );
    await t.ctx.jobs.drain();
    const rows = await mailOf(t).listFor(subject);
    expect(rows.map((r) => [r.status, r.ics_method])).toEqual([
      ['pending', 'REQUEST'],
      ['skipped', null],
    ]);
    const pending = await outboxRow(t, rows[0]!.id);
    expect(pending).toMatchObject({ attempts: 1 });
    expect(pending.last_error).toMatch(/no mail renderer named "nobody"/);
    expect((await outboxRow(t, rows[1]!.id)).render).toBeNull();
  });
});

describe('buildInvite, describeTime and escapeHtml', () => {
  it('writes UTC instants, the display zone, and names without quotes', () => {
    const ics = buildInvite(
      invite('x@kairos', {
        sequence: 3,
        organizer: { name: 'Ann "The Host"', email: 'ann@kairos.test' },
        attendees: [{ email: 'bob@example.test' }, { name: 'Line\nBreak', email: 'c@example.test' }],
      }),
      { stamp: new Date('2026-06-01T12:00:00Z') },
    );
    expect(ics).toContain('DTSTART:20260610T090000Z');
    expect(ics).toContain('DTSTAMP:20260601T120000Z');
    expect(ics).toContain('X-WR-TIMEZONE:Europe/Paris');
    expect(ics.indexOf('X-WR-TIMEZONE')).toBeLessThan(ics.indexOf('BEGIN:VEVENT'));
    expect(ics.endsWith('END:VCALENDAR\r\n')).toBe(true);
    expect(ics).toContain(`CN="Ann 'The Host'"`);
    expect(parseIcs(ics)).toMatchObject({
      sequence: 3,
      attendees: ['mailto:bob@example.test', 'mailto:c@example.test'],
    });
    expect(() => buildInvite(invite('x', { end: new Date('2026-06-10T09:00:00Z') }))).toThrow(/end/);
  });

  it('writes exactly what ical-generator writes (its folding at 75 octets included), cheaper', () => {
    const pieces = ['a', 'é', '€', '😀', ';', ',', '\\', '\n', ' ', '"', 'x'.repeat(40), '\ud800', 'Ω'];
    let seed = 7;
    const pick = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    const text = (n: number) => Array.from({ length: n }, () => pieces[pick() % pieces.length]).join('');
    const stamp = new Date('2026-06-01T12:00:00Z');
    for (let i = 0; i < 200; i++) {
      const spec = invite(`u${i}@kairos`, {
        method: i % 3 === 0 ? 'CANCEL' : 'REQUEST',
        sequence: i,
        summary: text(1 + (i % 40)),
        description: i % 5 === 0 ? null : text(i % 120),
        url: i % 4 === 0 ? null : `https://kairos.test/b/${'t'.repeat(i % 90)}`,
        timezone: i % 6 === 0 ? null : 'America/Argentina/Buenos_Aires',
        organizer: { name: text(i % 30), email: 'ann@kairos.test' },
        attendees: [
          { name: text(i % 50), email: `bob${'o'.repeat(i % 70)}@example.test` },
          { name: null, email: 'c@example.test' },
        ],
      });
      // ical-generator writes X-WR-TIMEZONE after the event and no CRLF after the last line.
      const theirs = inviteCalendar(spec, stamp).calendar.toString();
      const zone = /\r\nX-WR-TIMEZONE:[^\r]*(\r\n [^\r]*)*/.exec(theirs)?.[0] ?? '';
      const expected = `${theirs.replace(zone, '').replace('\r\nBEGIN:VEVENT', `${zone}\r\nBEGIN:VEVENT`)}\r\n`;
      expect(buildInvite(spec, { stamp }), `spec ${i}`).toBe(expected);
    }
  });

  it('describes a time in the reader’s zone (UTC when unknown), across a DST change, with or without an end', () => {
    expect(describeTime(new Date('2026-06-01T09:00:00Z'), new Date('2026-06-01T09:30:00Z'), null)).toBe(
      'Monday, 1 June 2026 at 09:00 – 09:30 (UTC)',
    );
    // 00:30–01:30 UTC on the night Berlin moves from +01:00 to +02:00: 01:30 – 03:30 local.
    expect(
      describeTime(new Date('2026-03-29T00:30:00Z'), new Date('2026-03-29T01:30:00Z'), 'Europe/Berlin'),
    ).toBe('Sunday, 29 March 2026 at 01:30 – 03:30 (Europe/Berlin)');
    expect(describeTime(new Date('2026-11-01T16:00:00Z'), null, 'America/New_York')).toBe(
      'Sunday, 1 November 2026 at 11:00 (America/New_York)',
    );
  });

  it('escapes html', () => {
    expect(escapeHtml(`<a href="x">Tom & 'Jerry'</a>`)).toBe(
      '&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;',
    );
  });
});
