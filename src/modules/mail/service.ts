/**
 * The mail outbox: rows written in the caller's transaction, sent after commit by the `mail.send` job.
 *
 * Sending (one job per mail, payload `{ mail_id }`): a mail already `sent`, `logged` or `failed` is
 * left alone (a job may run twice). With SMTP_URL the mail goes through one pooled nodemailer
 * transport per outbox (one per process), made on first use and closed when the runtime stops; an
 * SMTP error is recorded on the row (attempts, last_error) and thrown, so the job runner retries it
 * with its backoff (2 s, 4 s, 8 s, … capped at an hour); after MAX_SEND_ATTEMPTS attempts, or at once
 * when the server refuses the mail for good (5xx to its recipient or data), the row is `failed` and
 * the job ends. Without SMTP_URL the mail is `logged`: kept in the database and announced in the log (id, kind, to, subject), never
 * with its body (bodies carry self-service links with tokens).
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../../config.js';
import type { Db, Tx } from '../../db/store.js';
import { type Job, type JobRunner, WriteBatch } from '../../jobs/runner.js';
import type { Clock } from '../../platform/clock.js';
import { prefixedId } from '../../platform/ids.js';
import type { JobContribution } from '../module.js';
import type { InviteSpec, MailApi, MailDetail, MailMessage, MailRow, MailSummary } from './api.js';
import { buildInvite } from './invite.js';
import * as repo from './repo.js';

export const SEND_QUEUE = 'mail.send';

/**
 * Attempts before a mail is given up (`failed`). With the runner's backoff (1 s · 2^attempt, capped
 * at an hour) the last one comes about five hours after the first.
 */
export const MAX_SEND_ATTEMPTS = 16;

export interface SendPayload {
  mail_id: string;
}

/** What the outbox logs through: info when the platform's log has it (the runtime's does). */
export interface MailLog {
  error(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
}

// ---------------------------------------------------------------------------------------------------
// The transport: one pooled SMTP transport per outbox (per process), made on first use.

function createTransport(smtpUrl: string): Transporter {
  // The URL may set its own options (?pool=false, ?secure=true, …); these are the defaults.
  return nodemailer.createTransport({
    url: smtpUrl,
    pool: true,
    maxConnections: 5,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
}

/** The domain of an address such as `Kairos <no-reply@kairos.example>` (for Message-IDs). */
function domainOf(from: string): string {
  const m = /@([^\s>]+)>?\s*$/.exec(from);
  return m?.[1] ?? 'kairos.localhost';
}

/**
 * Whether an SMTP error refuses this mail for good: the server answered 5xx to its recipient or its
 * data, or nodemailer found its envelope unusable (no valid recipient). Anything else (connection,
 * timeout, 4xx, authentication, TLS) may pass later and is retried.
 */
function isPermanent(err: unknown): boolean {
  const { code, responseCode } = (err ?? {}) as { code?: unknown; responseCode?: unknown };
  if (code !== 'EENVELOPE' && code !== 'EMESSAGE') return false;
  if (typeof responseCode !== 'number') return code === 'EENVELOPE';
  return responseCode >= 500 && responseCode < 600;
}

/** An error's message without anything long: SMTP answers can be long, bodies are never in them. */
function describe(err: unknown): string {
  return String(err instanceof Error ? err.message : err).slice(0, 1000);
}

// ---------------------------------------------------------------------------------------------------

export class MailOutbox implements MailApi {
  private transport: Transporter | null = null;

  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Pick<Config, 'smtpUrl' | 'mailFrom'>;
  private readonly log: MailLog;
  private readonly jobs: Pick<JobRunner, 'finishing'>;

  constructor(platform: {
    db: Db;
    clock: Clock;
    config: Pick<Config, 'smtpUrl' | 'mailFrom'>;
    log: MailLog;
    jobs: Pick<JobRunner, 'finishing'>;
  }) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.config = platform.config;
    this.log = platform.log;
    this.jobs = platform.jobs;
  }

  async enqueue(trx: Tx, messages: readonly MailMessage[], batch?: WriteBatch): Promise<void> {
    if (messages.length === 0) return;
    const now = this.clock.now();
    // One build per invite: a booking's mails to its customer and hosts share theirs (~0.3 ms each).
    const built = new Map<InviteSpec, string>();
    const rows = messages.map((m) => {
      let ics: string | null = null;
      if (m.invite) {
        ics = built.get(m.invite) ?? buildInvite(m.invite, { stamp: now });
        built.set(m.invite, ics);
      }
      return {
        id: prefixedId('mail', now.getTime()),
        kind: m.kind,
        subject_id: m.subjectId ?? null,
        to_address: m.to,
        subject: m.subject,
        text_body: m.text,
        html_body: m.html,
        ics,
        ics_method: m.invite ? m.invite.method : null,
        status: m.to === null ? ('skipped' as const) : ('pending' as const),
        last_error: m.to === null ? `no e-mail address for ${m.recipient ?? 'the recipient'}` : null,
        attempts: 0,
        created_at: now,
      };
    });
    const into = batch ?? new WriteBatch();
    into.add(
      repo.outboxInsert(rows),
      rows
        .filter((r) => r.status === 'pending')
        .map((r) => ({ queue: SEND_QUEUE, payload: { mail_id: r.id } satisfies SendPayload, runAt: now })),
    );
    if (!batch) await into.run(trx);
  }

  listFor(subjectId: string): Promise<MailRow[]> {
    return repo.mailsAbout(this.db, subjectId);
  }

  listRecent(limit: number): Promise<MailSummary[]> {
    return repo.recentMails(this.db, limit);
  }

  async get(id: string): Promise<MailDetail | null> {
    return (await repo.mailDetail(this.db, id)) ?? null;
  }

  /** Closes the SMTP connections (the runtime calls it on stop, after the jobs have stopped). */
  async close(): Promise<void> {
    this.transport?.close();
    this.transport = null;
  }

  /** The `mail.send` queue. */
  queues(): JobContribution[] {
    return [
      {
        queue: SEND_QUEUE,
        handler: (job: Job<SendPayload>) => this.send(job),
        // A send ends within the transport's timeouts (under a minute), so a short lease renewed while
        // it runs is safe: the mails a crashed process had claimed go out from another within ~30 s.
        options: { leaseMs: 30_000, extendLease: true },
      },
    ];
  }

  /**
   * Sends (or logs) one mail; throws on an SMTP error so that the runner retries. The row's last
   * update and the end of the job are one statement (`finishing`).
   */
  async send(job: Job<SendPayload>): Promise<void> {
    const smtpUrl = this.config.smtpUrl;
    if (!smtpUrl) {
      // Nothing to send: mark a pending mail logged, and end the job, in one statement.
      const mail = await repo.markLogged(this.db, this.jobs.finishing(job)(this.db), job.payload.mail_id);
      if (mail) {
        const fields = { mail: mail.id, kind: mail.kind, to: mail.to_address, subject: mail.subject };
        this.log.info?.(fields, 'mail not sent (no SMTP_URL): kept in mail_outbox');
      }
      return;
    }
    const mail = await repo.findMail(this.db, job.payload.mail_id);
    if (mail?.status !== 'pending' || mail.to_address === null) return;

    try {
      this.transport ??= createTransport(smtpUrl);
      await this.transport.sendMail({
        from: this.config.mailFrom,
        to: mail.to_address,
        subject: mail.subject,
        text: mail.text_body,
        html: mail.html_body,
        // The same Message-ID on every attempt: a receiver that got an attempt we think failed can
        // tell the retry is the same mail.
        messageId: `<${mail.id}@${domainOf(this.config.mailFrom)}>`,
        ...(mail.ics && mail.ics_method ? { icalEvent: { method: mail.ics_method, content: mail.ics } } : {}),
      });
    } catch (err) {
      const lastError = describe(err);
      const giveUp = job.attempts >= MAX_SEND_ATTEMPTS || isPermanent(err);
      await repo.recordAttemptFailed(this.db, mail.id, lastError, giveUp);
      if (giveUp) {
        this.log.error(
          { err, mail: mail.id, kind: mail.kind, attempts: job.attempts },
          'mail not sent: giving up',
        );
        return;
      }
      throw new Error(`mail ${mail.id} not sent (attempt ${job.attempts}): ${lastError}`);
    }
    await repo.markSent(this.db, this.jobs.finishing(job)(this.db), mail.id, this.clock.now());
  }
}
