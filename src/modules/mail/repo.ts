/** Every SQL statement of the mail module: the `mail_outbox` table (tables.ts). */
import { type Insertable, sql } from 'kysely';
import { rowsInsert, type SqlPart } from '../../db/parts.js';
import { purgeInBatches } from '../../db/purge.js';
import type { Db } from '../../db/store.js';
import type { BatchedWrite } from '../../jobs/runner.js';
import type { MailDetail, MailRow, MailSummary } from './api.js';
import type { MailOutboxTable } from './tables.js';

/** A job's end as the first part of a statement (the job runner's `finishingMany(jobs)(db)`). */
type JobEnd = ReturnType<BatchedWrite>;

/** The INSERT of outbox rows, to join the caller's write batch. */
export function outboxInsert(rows: readonly Insertable<MailOutboxTable>[]): SqlPart {
  return rowsInsert('mail_outbox', rows);
}

/** Rows of the outbox about one subject, oldest first. */
export async function mailsAbout(db: Db, subjectId: string): Promise<MailRow[]> {
  return db
    .selectFrom('mail_outbox')
    .select(['id', 'kind', 'to_address as to', 'subject', 'status', 'ics_method', 'livemode'])
    .where('subject_id', '=', subjectId)
    .orderBy('created_at')
    .orderBy('seq')
    .execute();
}

/** The most recent mails, newest first. */
export async function recentMails(db: Db, limit: number): Promise<MailSummary[]> {
  return db
    .selectFrom('mail_outbox')
    .select(['id', 'kind', 'to_address as to', 'subject', 'status', 'created_at', 'livemode'])
    .orderBy('created_at', 'desc')
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
}

/** One mail with its text body. */
export async function mailDetail(
  db: Db,
  id: string,
): Promise<(MailDetail & { render: { renderer: string; data: unknown } | null }) | undefined> {
  return db
    .selectFrom('mail_outbox')
    .select([
      'id',
      'kind',
      'to_address as to',
      'subject',
      'status',
      'created_at',
      'livemode',
      'text_body as text',
      'last_error',
      'render',
    ])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The bodies and invite of a mail rendered as it is sent, stored on its row with its last update. */
export interface RenderedRow {
  text_body: string;
  html_body: string;
  ics: string | null;
  ics_method: 'REQUEST' | 'CANCEL' | null;
}

/** Whole outbox rows by id, in one statement (an id not found is absent). */
export async function findMails(db: Db, ids: readonly string[]) {
  if (ids.length === 1) return db.selectFrom('mail_outbox').selectAll().where('id', '=', ids[0]!).execute();
  return db
    .selectFrom('mail_outbox')
    .selectAll()
    .where(sql<boolean>`id = ANY(${[...ids]}::text[])`)
    .execute();
}

/**
 * How a pending mail ended: `logged` (no SMTP_URL) or `sent` at `sentAt` (one more attempt, its last
 * error cleared), with its bodies when they were rendered now.
 */
export interface MailEnd {
  id: string;
  status: 'logged' | 'sent';
  sentAt: Date | null;
  rendered: RenderedRow | null;
}

/**
 * Ends pending mails (`MailEnd`) and their jobs (`done`, the runner's finishing statement), in one
 * statement; answers the mails that were pending, as they are now. A mail no longer pending (its job
 * ran twice) is left as it is.
 */
export async function markEnded(
  db: Db,
  done: JobEnd,
  ends: readonly MailEnd[],
): Promise<Pick<MailOutboxTable, 'id' | 'kind' | 'to_address' | 'subject' | 'status'>[]> {
  const rows = ends.map((e) => ({
    id: e.id,
    status: e.status,
    sent_at: e.sentAt,
    rendered: e.rendered !== null,
    text_body: e.rendered?.text_body ?? null,
    html_body: e.rendered?.html_body ?? null,
    ics: e.rendered?.ics ?? null,
    ics_method: e.rendered?.ics_method ?? null,
  }));
  const { rows: ended } = await sql<
    Pick<MailOutboxTable, 'id' | 'kind' | 'to_address' | 'subject' | 'status'>
  >`
    WITH done AS (${done}),
    v AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(
        id text, status text, sent_at timestamptz, rendered boolean, text_body text, html_body text,
        ics text, ics_method text)
    )
    UPDATE mail_outbox m
    SET status = v.status,
        sent_at = CASE WHEN v.status = 'sent' THEN v.sent_at ELSE m.sent_at END,
        attempts = m.attempts + CASE WHEN v.status = 'sent' THEN 1 ELSE 0 END,
        last_error = CASE WHEN v.status = 'sent' THEN NULL ELSE m.last_error END,
        text_body = CASE WHEN v.rendered THEN v.text_body ELSE m.text_body END,
        html_body = CASE WHEN v.rendered THEN v.html_body ELSE m.html_body END,
        ics = CASE WHEN v.rendered THEN v.ics ELSE m.ics END,
        ics_method = CASE WHEN v.rendered THEN v.ics_method ELSE m.ics_method END
    FROM v
    WHERE m.id = v.id AND m.status = 'pending' AND m.to_address IS NOT NULL
    RETURNING m.id, m.kind, m.to_address, m.subject, m.status`.execute(db);
  return ended;
}

/** Records a failed attempt on a pending mail; `giveUp` makes it `failed`. */
export async function recordAttemptFailed(
  db: Db,
  id: string,
  lastError: string,
  giveUp: boolean,
): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_error: lastError,
      ...(giveUp ? { status: 'failed' as const } : {}),
    }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/** Deletes mails created before `before` that are no longer pending (retention.ts); answers how many. */
export function purgeFinishedMail(db: Db, before: Date): Promise<number> {
  return purgeInBatches(db, 'mail_outbox', sql<boolean>`created_at < ${before} AND status <> 'pending'`);
}
