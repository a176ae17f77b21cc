import { defineModule } from '../module.js';
import type { MailApi, MailNeeds } from './api.js';
import { MailOutbox } from './service.js';
import { mailRetentionSchedule } from './retention.js';

/**
 * The mail outbox: mails written in their caller's transaction, sent after commit by the `mail.send`
 * job with retries (SMTP_URL, From: MAIL_FROM; without SMTP_URL they are kept as `logged`).
 */
export const mailModule = defineModule<MailNeeds>()({
  name: 'mail',
  needs: [],
  create({ platform, extensions }) {
    const { db, clock, config } = platform;
    const outbox = new MailOutbox(platform, () => extensions.all('mailRenderers'));
    const api: MailApi = outbox;
    return {
      api,
      jobs: outbox.queues(),
      schedules: [mailRetentionSchedule(db, clock, config.retention.mailMs)],
      close: () => outbox.close(),
    };
  },
});
