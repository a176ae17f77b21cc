/**
 * The send jobs that run together read their mails in one statement and end them in one: each mail
 * still ends exactly once, with its bodies, and a mail the store refuses to end holds back no other.
 */
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp.js';
import { FakeClock } from '../../platform/clock.js';
import { type AnyModule, MODULES } from '../index.js';
import type { MailIntent, MailMessage } from './api.js';
import { mailModule } from './module.js';
import { MailOutbox, SEND_QUEUE } from './service.js';

const MAIL_FROM = 'Kairos Test <bookings@kairos.test>';
const EXTRA = (MODULES as readonly AnyModule[]).some((m) => m.name === 'mail') ? [] : [mailModule];

let n = 0;
const subjectId = () => `bk_batch${++n}${Date.now()}`;

function message(subject: string, i: number): MailMessage {
  return {
    kind: 'booking.confirmation',
    livemode: true,
    subjectId: subject,
    to: `guest${i}@example.test`,
    subject: `Booked ${i}`,
    text: `You are booked (${i}).`,
    html: `<p>You are booked (${i}).</p>`,
  };
}

function intent(subject: string, who: string): MailIntent {
  return {
    kind: 'booking.confirmation',
    livemode: true,
    subjectId: subject,
    to: 'bob@example.test',
    subject: 'Booked: Intro call',
    icsMethod: null,
    renderer: 'test',
    data: { who },
  };
}

/** Counts the statements sent through the Kysely it is added to (each execution once). */
function counter() {
  let count = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    // Called once per statement executed (a query built into another's text is transformed, not run).
    transformResult: async (args) => {
      count++;
      return args.result;
    },
  };
  return { plugin, count: () => count, reset: () => (count = 0) };
}

const job = (id: string, mailId: string) => ({
  id,
  queue: SEND_QUEUE,
  payload: { mail_id: mailId },
  attempts: 1,
});

describe('mail send jobs that run together, without SMTP_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ clock: new FakeClock('2026-06-01T12:00:00.000Z'), modules: EXTRA });
  });
  afterAll(async () => {
    await t.close();
  });

  /** An outbox on this app's store whose statements are counted and whose log is kept. */
  function countedOutbox(
    render: (data: unknown) => { text: string; html: string } = () => ({ text: '', html: '' }),
  ) {
    const statements = counter();
    const lines: { obj: object; msg: string }[] = [];
    const outbox = new MailOutbox(
      {
        db: t.ctx.db.withPlugin(statements.plugin),
        clock: t.ctx.clock,
        config: { smtpUrl: null, mailFrom: MAIL_FROM },
        log: { info: (obj, msg) => lines.push({ obj, msg }), error: (obj, msg) => lines.push({ obj, msg }) },
        jobs: t.ctx.jobs,
      },
      () => [{ name: 'test', render: (data) => ({ ...render(data), invite: null }) }],
    );
    return { outbox, statements, lines };
  }

  it('reads five mails in one statement and logs them (bodies kept) in one, each once', async () => {
    const { outbox, statements, lines } = countedOutbox();
    const subject = subjectId();
    await t.ctx.db.transaction().execute((trx) =>
      outbox.enqueue(
        trx,
        Array.from({ length: 5 }, (_, i) => message(subject, i)),
      ),
    );
    const rows = await outbox.listFor(subject);
    statements.reset();
    await Promise.all(rows.map((r, i) => outbox.send(job(`${900_000 + i}`, r.id))));
    expect(statements.count()).toBe(2);
    const stored = await t.ctx.db
      .selectFrom('mail_outbox')
      .select(['id', 'status', 'text_body', 'attempts'])
      .where('subject_id', '=', subject)
      .orderBy('seq')
      .execute();
    expect(stored.map((r) => [r.status, r.text_body, r.attempts])).toEqual(
      Array.from({ length: 5 }, (_, i) => ['logged', `You are booked (${i}).`, 0]),
    );
    expect(lines.map((l) => (l.obj as { mail: string }).mail).sort()).toEqual(rows.map((r) => r.id).sort());
    // Run again (a job that ran twice): nothing is read as pending, nothing ends or is logged again.
    await Promise.all(rows.map((r, i) => outbox.send(job(`${900_000 + i}`, r.id))));
    expect(lines).toHaveLength(5);
  });

  it('stores each intent’s own rendering, and ends the others when the store refuses one', async () => {
    const { outbox } = countedOutbox((data) => {
      const { who } = data as { who: string };
      // U+0000 cannot be stored in a text column: the store refuses this mail's end.
      const text = who === 'Nul' ? 'Hello \u0000' : `Hello ${who}`;
      return { text, html: `<p>Hello ${who}</p>` };
    });
    const subject = subjectId();
    await t.ctx.db
      .transaction()
      .execute((trx) =>
        outbox.enqueue(trx, [intent(subject, 'Ann'), intent(subject, 'Nul'), intent(subject, 'Cy')]),
      );
    const rows = await outbox.listFor(subject);
    const results = await Promise.allSettled(rows.map((r, i) => outbox.send(job(`${910_000 + i}`, r.id))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const stored = await t.ctx.db
      .selectFrom('mail_outbox')
      .select(['status', 'text_body', 'html_body'])
      .where('subject_id', '=', subject)
      .orderBy('seq')
      .execute();
    expect(stored).toEqual([
      { status: 'logged', text_body: 'Hello Ann', html_body: '<p>Hello Ann</p>' },
      // Still pending, its job kept for the runner to retry.
      { status: 'pending', text_body: '', html_body: '' },
      { status: 'logged', text_body: 'Hello Cy', html_body: '<p>Hello Cy</p>' },
    ]);
  });
});

describe('mail send jobs that run together, over SMTP', () => {
  let sink: SmtpSink;
  let t: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestApp({
      clock: new FakeClock('2026-06-01T12:00:00.000Z'),
      modules: EXTRA,
      env: { SMTP_URL: sink.url, MAIL_FROM },
    });
  });
  afterAll(async () => {
    await t.close();
    await sink.close();
  });

  it('sends twenty committed mails through the runner once each: all sent, one attempt each, no job left', async () => {
    const mail = (t.ctx.modules as unknown as { mail: MailOutbox }).mail;
    const subject = subjectId();
    await t.ctx.db.transaction().execute((trx) =>
      mail.enqueue(
        trx,
        Array.from({ length: 20 }, (_, i) => message(subject, i)),
      ),
    );
    await t.ctx.jobs.drain();
    const got = await sink.waitFor(20);
    expect(got.map((m) => m.subject).sort()).toEqual(
      Array.from({ length: 20 }, (_, i) => `Booked ${i}`).sort(),
    );
    const stored = await t.ctx.db
      .selectFrom('mail_outbox')
      .select(['status', 'attempts', 'sent_at', 'last_error'])
      .where('subject_id', '=', subject)
      .execute();
    expect(stored).toHaveLength(20);
    for (const row of stored) {
      expect(row).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
      expect(row.sent_at).not.toBeNull();
    }
    const jobs = await t.ctx.db.selectFrom('jobs').select('id').where('queue', '=', SEND_QUEUE).execute();
    expect(jobs).toEqual([]);
    // Nothing more arrives: no send job is left to run and each mail ended after one attempt; the sink
    // keeps a mail before it accepts it, so every send that happened is in `raw` already.
    expect(sink.raw).toHaveLength(20);
  });
});
