/**
 * Mail in test mode (docs/api.md#test-mode), over the real runtime, a real database and a real SMTP
 * server (test/helpers/smtp.ts): a test-mode mail is kept whole as `suppressed` and never reaches SMTP,
 * while a live one is sent; `kairos mail list|show` (the real command) reads it.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { runCli } from '../../../test/helpers/process.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';
import { FakeClock } from '../../platform/clock.js';
import type { InviteSpec, MailIntent, MailMessage, RenderedMail } from './api.js';
import { MailOutbox } from './service.js';

const MAIL_FROM = 'Kairos Test <bookings@kairos.test>';

let n = 0;
const subjectId = () => `bk_testmode${++n}${Date.now()}`;

function invite(uid: string): InviteSpec {
  return {
    method: 'REQUEST',
    uid,
    sequence: 0,
    start: new Date('2026-06-10T09:00:00Z'),
    end: new Date('2026-06-10T09:30:00Z'),
    summary: 'Intro call',
    organizer: { name: 'Ann Host', email: 'ann@kairos.test' },
    attendees: [{ name: 'Bob Customer', email: 'bob@example.test' }],
  };
}

function message(subject: string, over: Partial<MailMessage> = {}): MailMessage {
  return {
    kind: 'booking.confirmation',
    subjectId: subject,
    to: 'bob@example.test',
    subject: 'Booked: Intro call',
    text: 'You are booked.\nManage: https://kairos.test/b/secret-token',
    html: '<p>You are booked.</p>',
    invite: invite(`${subject}@kairos`),
    ...over,
  };
}

describe('mail in test mode', () => {
  const clock = new FakeClock('2026-06-01T12:00:00.000Z');
  let sink: SmtpSink;
  let t: TestApp;
  let cliEnv: Record<string, string>;
  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestApp({ clock, env: { SMTP_URL: sink.url, MAIL_FROM } });
    cliEnv = { DATABASE_URL: t.database.url, KAIROS_MASTER_KEY: t.masterKey };
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  const mail = () => t.ctx.modules.mail;
  const row = (id: string) =>
    t.ctx.db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const sendJobs = (ids: readonly string[]) =>
    t.ctx.db
      .selectFrom('jobs')
      .select('id')
      .where('queue', '=', 'mail.send')
      .where(sql<boolean>`payload->>'mail_id' = ANY(${[...ids]}::text[])`)
      .execute();

  it('sends a live mail and keeps a test-mode one as suppressed, whole, with no send job, never reaching SMTP', async () => {
    const liveSubject = subjectId();
    const testSubject = subjectId();
    await t.ctx.db
      .transaction()
      .execute((trx) =>
        mail().enqueue(trx, [
          message(liveSubject, { to: 'live@example.test' }),
          message(testSubject, { to: 'test@example.test', livemode: false }),
        ]),
      );
    const [kept] = await mail().listFor(testSubject);
    expect(kept).toMatchObject({ status: 'suppressed', livemode: false, ics_method: 'REQUEST' });
    expect(await sendJobs([kept!.id])).toEqual([]);

    await t.ctx.jobs.drain();
    const [sent] = await mail().listFor(liveSubject);
    expect(sent).toMatchObject({ status: 'sent', livemode: true });
    await sink.waitFor(1);
    expect(sink.raw).toHaveLength(1);
    expect(sink.raw[0]).toContain('live@example.test');
    expect(sink.raw.some((r) => r.includes('test@example.test'))).toBe(false);

    const stored = await row(kept!.id);
    expect(stored).toMatchObject({
      status: 'suppressed',
      livemode: false,
      text_body: 'You are booked.\nManage: https://kairos.test/b/secret-token',
      html_body: '<p>You are booked.</p>',
      attempts: 0,
      sent_at: null,
    });
    expect(stored.ics).toContain(`UID:${testSubject}@kairos`);
    // Still suppressed after the jobs ran: nothing sends it later either.
    expect((await row(kept!.id)).status).toBe('suppressed');
  });

  it('renders a test-mode intent at once (its bodies and invite stored), and records a test mail to no one as skipped, as a live one', async () => {
    const subject = subjectId();
    const outbox = new MailOutbox(
      {
        db: t.ctx.db,
        clock: t.ctx.clock,
        config: { smtpUrl: sink.url, mailFrom: MAIL_FROM },
        log: { error: () => {} },
        jobs: t.ctx.jobs,
      },
      () => [
        {
          name: 'test-mode',
          render: (data: unknown): RenderedMail => {
            const d = data as { who: string; uid: string };
            return {
              text: `Hello ${d.who}\nhttps://kairos.test/b/tok-${d.who}`,
              html: `<p>Hello ${d.who}</p>`,
              invite: invite(d.uid),
            };
          },
        },
      ],
    );
    const intent: MailIntent = {
      kind: 'booking.confirmation',
      subjectId: subject,
      to: 'bob@example.test',
      subject: 'Booked: Intro call',
      icsMethod: 'REQUEST',
      renderer: 'test-mode',
      data: { who: 'Bob', uid: `${subject}@kairos` },
      livemode: false,
    };
    await t.ctx.db
      .transaction()
      .execute((trx) =>
        outbox.enqueue(trx, [
          intent,
          { ...intent, to: null, recipient: 'principal p_1', data: { who: 'Nobody', uid: 'x@kairos' } },
        ]),
      );
    const [rendered, noOne] = await outbox.listFor(subject);
    expect(rendered).toMatchObject({ status: 'suppressed', livemode: false, ics_method: 'REQUEST' });
    expect(await row(rendered!.id)).toMatchObject({
      text_body: 'Hello Bob\nhttps://kairos.test/b/tok-Bob',
      html_body: '<p>Hello Bob</p>',
      last_error: null,
    });
    expect((await row(rendered!.id)).ics).toContain(`UID:${subject}@kairos`);
    expect(noOne).toMatchObject({ status: 'skipped', livemode: false, to: null });
    expect(await sendJobs([rendered!.id, noOne!.id])).toEqual([]);
  });

  it('writes a test-mode mail as at the time it is given (a test clock’s), its invite stamped then', async () => {
    const subject = subjectId();
    const at = new Date('2026-07-01T08:00:00.000Z');
    await t.ctx.db
      .transaction()
      .execute((trx) => mail().enqueue(trx, [message(subject, { livemode: false, at })]));
    const [kept] = await mail().listFor(subject);
    const stored = await row(kept!.id);
    expect(new Date(stored.created_at).toISOString()).toBe(at.toISOString());
    expect(stored.ics).toContain('DTSTAMP:20260701T080000Z');
  });

  it('`kairos mail list` shows a test-mode mail as suppressed and marked [test]; `kairos mail show` shows its text and links', {
    timeout: 120_000,
  }, async () => {
    const subject = subjectId();
    await t.ctx.db.transaction().execute((trx) =>
      mail().enqueue(trx, [
        message(subject, {
          to: 'cli-test@example.test',
          subject: 'Test-mode booking',
          text: 'Booked in test mode.\nManage: https://kairos.test/b/test-token',
          livemode: false,
        }),
      ]),
    );
    const [kept] = await mail().listFor(subject);
    expect(kept!.status).toBe('suppressed');

    const listed = await runCli(['mail', 'list', '--json'], cliEnv);
    expect(listed.code, listed.stderr).toBe(0);
    const { mails } = JSON.parse(listed.stdout) as {
      mails: { id: string; status: string; livemode: boolean; to: string }[];
    };
    expect(mails.find((m) => m.id === kept!.id)).toMatchObject({
      status: 'suppressed',
      livemode: false,
      to: 'cli-test@example.test',
    });

    const human = await runCli(['mail', 'list'], cliEnv);
    expect(human.code, human.stderr).toBe(0);
    const line = human.stdout.split('\n').find((l) => l.startsWith(kept!.id));
    expect(line).toMatch(/ suppressed {2}\[test\] cli-test@example\.test {2}Test-mode booking$/);

    const shown = await runCli(['mail', 'show', kept!.id, '--json'], cliEnv);
    expect(shown.code, shown.stderr).toBe(0);
    const detail = JSON.parse(shown.stdout).mail as {
      status: string;
      livemode: boolean;
      text: string;
      links: string[];
    };
    expect(detail).toMatchObject({
      status: 'suppressed',
      livemode: false,
      text: 'Booked in test mode.\nManage: https://kairos.test/b/test-token',
      links: ['https://kairos.test/b/test-token'],
    });
    const text = await runCli(['mail', 'show', kept!.id], cliEnv);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `Mail ${kept!.id} (booking.confirmation), suppressed (test mode: never sent)`,
    );
    expect(text.stdout).toContain('Booked in test mode.');
    expect(text.stdout).toContain('  https://kairos.test/b/test-token');
  });
});
