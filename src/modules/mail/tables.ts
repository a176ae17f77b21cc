/** Table types of the mail module (migrations 0006_mail, 0016_mail_render), merged into the database type. */
import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from '../../db/types.js';

/**
 * pending: waiting for its job; sent: accepted by the SMTP server; logged: no SMTP_URL; failed: gave
 * up; skipped: its recipient has no address (recorded, never sent); suppressed: a test-mode mail
 * (migration 0024, docs/api.md#test-mode), kept whole and never sent.
 */
export type MailStatus = 'pending' | 'sent' | 'logged' | 'failed' | 'skipped' | 'suppressed';

/** What `render` holds: a contributed renderer's name and the data it takes. */
export interface MailRender {
  renderer: string;
  data: unknown;
}

export interface MailOutboxTable {
  /** False for objects made in test mode (migration 0024, docs/api.md#test-mode). */
  livemode: Generated<boolean>;
  /** `mail_…` */
  id: string;
  /** Insertion order (rows of one millisecond). */
  seq: Generated<number>;
  /** What it is: 'booking.confirmation', 'waitlist.offer', … */
  kind: string;
  /** What it is about (a booking id), or null. */
  subject_id: string | null;
  /** Null exactly when skipped. */
  to_address: string | null;
  subject: string;
  text_body: string;
  html_body: string;
  /** The text/calendar invite, or null. */
  ics: string | null;
  ics_method: 'REQUEST' | 'CANCEL' | null;
  /**
   * A mail rendered when sent (migration 0016): its renderer and data (JSON). Its bodies and invite
   * are empty until the send job renders and stores them.
   */
  render: ColumnType<MailRender | null, string | null, string | null>;
  status: MailStatus;
  /** SMTP attempts made. */
  attempts: number;
  last_error: string | null;
  created_at: Timestamp;
  sent_at: Timestamp | null;
}

declare module '../../db/types.js' {
  interface DB {
    mail_outbox: MailOutboxTable;
  }
}
