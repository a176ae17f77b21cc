import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { SEND_QUEUE } from '../../src/modules/mail/service.js';
import { waitUntil } from '../helpers/promises.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp.js';

/**
 * The SMTP server is down while bookings are made (the outbox: docs/api.md, E-mail and pages): their
 * mails wait in the outbox with backoff, none is given up, and once the server is back every one
 * arrives exactly once. The outage lasts 15 s here (KAIROS_FAULT_SMTP_DOWN_MS=120000 for the two
 * minutes an operator would try; the backoff then waits up to ~2 minutes more).
 */
const DOWN_MS = Number(process.env.KAIROS_FAULT_SMTP_DOWN_MS ?? 15_000);

let t: TestApp | undefined;
let sink: SmtpSink | undefined;
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

function nextThursdayAt(hour: number): string {
  const d = new Date(Date.now() + 2 * 86_400_000);
  d.setUTCHours(hour, 0, 0, 0);
  while (d.getUTCDay() !== 4) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

describe('SMTP down', () => {
  it(
    'mails made while the SMTP server is down wait with backoff and all arrive once it is back, each exactly once',
    async () => {
      const first = await startSmtpSink();
      const port = Number(new URL(first.url).port);
      t = await startTestApp({ workers: true, env: { SMTP_URL: first.url } });
      await first.close(); // down

      const acc = await t.account();
      const made = await t.call('POST', '/v1/hosts', {
        token: acc.key,
        body: { display_name: 'Mail host', timezone: 'UTC', email: 'host@example.com' },
      });
      expect(made.status).toBe(201);
      const host = (await made.json()).host.principal_id as string;
      for (let hour = 9; hour < 14; hour++) {
        const res = await t.call('POST', '/v1/bookings', {
          token: acc.key,
          body: {
            principal_id: host,
            start_time: nextThursdayAt(hour),
            customer_email: `guest${hour}@example.com`,
            customer_name: 'Guest',
          },
        });
        expect(res.status).toBe(201);
      }
      const queued = await t.ctx.db.selectFrom('mail_outbox').select(['id', 'status', 'attempts']).execute();
      expect(queued.length).toBeGreaterThanOrEqual(5);

      // The outage itself: real time, for the runner to try, fail and back off on its own schedule.
      await new Promise((resolve) => setTimeout(resolve, DOWN_MS));
      const waiting = await t.ctx.db.selectFrom('mail_outbox').select(['status', 'attempts']).execute();
      // Tried, failed, kept: nothing sent, nothing given up.
      expect(waiting.filter((m) => m.status !== 'pending')).toEqual([]);
      expect(Math.max(...waiting.map((m) => m.attempts))).toBeGreaterThan(1);

      sink = await startSmtpSink({ port }); // back, where it was
      // The longest wait is the backoff step reached during the outage (about as long as the outage).
      await sink.waitFor(queued.length, DOWN_MS * 2 + 20_000);
      // Every mail is sent and no send job is left in the store (one in flight keeps its row until it
      // ends): nothing more can go out, and the sink keeps a mail before it accepts it.
      const db = t.ctx.db;
      await waitUntil('no send job left', async () => {
        const left = await db.selectFrom('jobs').select('id').where('queue', '=', SEND_QUEUE).execute();
        return left.length === 0;
      });
      const got = await sink.waitFor(sink.raw.length);
      expect(sink.messages).toHaveLength(queued.length);
      const ids = got.map((m) => m.messageId);
      expect(new Set(ids).size).toBe(ids.length);
      const sent = await t.ctx.db.selectFrom('mail_outbox').select('status').execute();
      expect(sent.every((m) => m.status === 'sent')).toBe(true);
    },
    DOWN_MS * 3 + 60_000,
  );
});
