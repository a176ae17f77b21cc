import { describe, expect, it } from 'vitest';
import { clockedApp } from '../../../test/helpers/clocked-app.js';
import { DAY } from '../../lib/time.js';

const { clock, t } = clockedApp();

type Status = 'pending' | 'sent' | 'logged' | 'failed' | 'skipped';

async function mail(id: string, status: Status, createdAt: Date) {
  await t.ctx.db
    .insertInto('mail_outbox')
    .values({
      id,
      kind: 'test',
      subject_id: null,
      to_address: status === 'skipped' ? null : 'a@example.com',
      subject: 's',
      text_body: 't',
      html_body: 'h',
      ics: null,
      ics_method: null,
      status,
      last_error: null,
      attempts: 0,
      created_at: createdAt,
      sent_at: status === 'sent' ? createdAt : null,
    })
    .execute();
}

describe('mail retention', () => {
  it('deletes sent, logged, failed and skipped mails past 30 days, and keeps pending and recent ones', async () => {
    const old = new Date(clock.nowMs() - 30 * DAY - 60_000);
    const recent = new Date(clock.nowMs() - 29 * DAY);
    for (const status of ['sent', 'logged', 'failed', 'skipped'] as const) {
      await mail(`mail_old_${status}`, status, old);
      await mail(`mail_recent_${status}`, status, recent);
    }
    await mail('mail_old_pending', 'pending', old);

    await t.ctx.jobs.drain(); // the mail-retention schedule runs (the pending mail has no send job here)

    const left = await t.ctx.db.selectFrom('mail_outbox').select('id').orderBy('id').execute();
    expect(left.map((r) => r.id)).toEqual([
      'mail_old_pending',
      'mail_recent_failed',
      'mail_recent_logged',
      'mail_recent_sent',
      'mail_recent_skipped',
    ]);
  });
});
