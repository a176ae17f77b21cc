/** Every SQL statement of the mail module: the `mail_outbox` table (tables.ts). */
import { type Insertable, sql } from 'kysely';
import { rowsInsert, type SqlPart } from '../../db/parts.js';
import { purgeInBatches } from '../../db/purge.js';
import type { Db } from '../../db/store.js';
import type { BatchedWrite } from '../../jobs/runner.js';
import type { MailDetail, MailRow, MailSummary } from './api.js';
import type { MailOutboxTable } from './tables.js';

/** A job's end as the first part of a statement (the job runner's `finishing(job)(db)`). */
type JobEnd = ReturnType<BatchedWrite>;

/** The INSERT of outbox rows, to join the caller's write batch. */
export function outboxInsert(rows: readonly Insertable<MailOutboxTable>[]): SqlPart {
  return rowsInsert('mail_outbox', rows);
}

/** Rows of the outbox about one subject, oldest first. */
export async function mailsAbout(db: Db, subjectId: string): Promise<MailRow[]> {
  return db
    .selectFrom('mail_outbox')
    .select(['id', 'kind', 'to_address as to', 'subject', 'status', 'ics_method'])
    .where('subject_id', '=', subjectId)
    .orderBy('created_at')
    .orderBy('seq')
    .execute();
}

/** The most recent mails, newest first. */
export async function recentMails(db: Db, limit: number): Promise<MailSummary[]> {
  return db
    .selectFrom('mail_outbox')
    .select(['id', 'kind', 'to_address as to', 'subject', 'status', 'created_at'])
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
      'text_body as text',
      'last_error',
      'render',
    ])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** One whole outbox row. */
export async function findMail(db: Db, id: string) {
  return db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The bodies and invite of a mail rendered as it is sent, stored on its row with its last update. */
export interface RenderedRow {
  text_body: string;
  html_body: string;
  ics: string | null;
  ics_method: 'REQUEST' | 'CANCEL' | null;
}

/**
 * Marks a pending mail `logged` (with its bodies when it was rendered now) and ends its job (`done`,
 * the runner's finishing statement), in one statement; answers the mail when it was pending.
 */
export async function markLogged(
  db: Db,
  done: JobEnd,
  id: string,
  rendered: RenderedRow | null,
): Promise<Pick<MailOutboxTable, 'id' | 'kind' | 'to_address' | 'subject'> | undefined> {
  const bodies = rendered
    ? sql`, text_body = ${rendered.text_body}, html_body = ${rendered.html_body}, ics = ${rendered.ics},
        ics_method = ${rendered.ics_method}`
    : sql``;
  const { rows } = await sql<Pick<MailOutboxTable, 'id' | 'kind' | 'to_address' | 'subject'>>`
    WITH done AS (${done})
    UPDATE mail_outbox SET status = 'logged'${bodies}
    WHERE id = ${id} AND status = 'pending' AND to_address IS NOT NULL
    RETURNING id, kind, to_address, subject`.execute(db);
  return rows[0];
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

/**
 * Marks a pending mail `sent` (with its bodies when it was rendered now) and ends its job (`done`), in
 * one statement.
 */
export async function markSent(
  db: Db,
  done: JobEnd,
  id: string,
  now: Date,
  rendered: RenderedRow | null,
): Promise<void> {
  const sent = db
    .updateTable('mail_outbox')
    .set((eb) => ({
      status: 'sent',
      sent_at: now,
      attempts: eb('attempts', '+', 1),
      last_error: null,
      ...(rendered ?? {}),
    }))
    .where('id', '=', id)
    .where('status', '=', 'pending');
  await sql`WITH done AS (${done}) ${sent}`.execute(db);
}

/** Deletes mails created before `before` that are no longer pending (retention.ts); answers how many. */
export function purgeFinishedMail(db: Db, before: Date): Promise<number> {
  return purgeInBatches(db, 'mail_outbox', sql<boolean>`created_at < ${before} AND status <> 'pending'`);
}
