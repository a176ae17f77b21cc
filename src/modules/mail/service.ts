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
 *
 * Render at send: a `MailIntent` is stored as its renderer's name and data (`render`, JSON), not its
 * bodies; the send job renders it (the contributed `mailRenderers`; the invite's DTSTAMP is the row's
 * `created_at`, as it would have been at commit) and stores the bodies with the row's last update. A
 * renderer that throws, or is missing, fails the attempt like an SMTP error: recorded, retried, then
 * `failed` and logged.
 *
 * Test mode (docs/api.md#test-mode): `enqueue` is the one place that decides. A message with
 * `livemode: false` is stored `suppressed` with `livemode = false` and no send job, whatever SMTP_URL
 * says (to no one: `skipped`, as a live one); it keeps what a logged mail keeps (bodies, invite,
 * links: an intent is rendered at once), so `kairos mail list|show` reads it. The send job never
 * touches a row that is not `pending`.
 */
import type { Selectable } from 'kysely';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../../config.js';
import type { Db, Tx } from '../../db/store.js';
import { type Job, type JobRunner, WriteBatch } from '../../jobs/runner.js';
import type { Clock } from '../../platform/clock.js';
import { prefixedId } from '../../platform/ids.js';
import { Batcher } from '../../lib/batcher.js';
import type { JobContribution } from '../module.js';
import type {
  InviteSpec,
  MailApi,
  MailDetail,
  MailIntent,
  MailMessage,
  MailRenderer,
  MailRow,
  MailSummary,
} from './api.js';
import { buildInvite } from './invite.js';
import * as repo from './repo.js';
import type { MailOutboxTable } from './tables.js';

/** A whole outbox row, as the send job reads it. */
type MailOutboxRow = Selectable<MailOutboxTable>;

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

/** A mail that was logged or sent, and its job. */
interface Ending {
  job: Job;
  mail: repo.MailEnd;
}

export class MailOutbox implements MailApi {
  private transport: Transporter | null = null;
  /** The rows of the send jobs that start together, read in one statement. */
  private readonly reads = new Batcher<string, MailOutboxRow | undefined>(async (ids) => {
    const byId = new Map((await repo.findMails(this.db, ids)).map((m) => [m.id, m]));
    return ids.map((id) => byId.get(id));
  });
  /** The mails (and jobs) that end together, ended in one statement. */
  private readonly ends = new Batcher<Ending, null>((endings) => this.endMany(endings));

  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Pick<Config, 'smtpUrl' | 'mailFrom'>;
  private readonly log: MailLog;
  private readonly jobs: Pick<JobRunner, 'finishingMany'>;
  private readonly renderers: () => readonly MailRenderer[];

  constructor(
    platform: {
      db: Db;
      clock: Clock;
      config: Pick<Config, 'smtpUrl' | 'mailFrom'>;
      log: MailLog;
      jobs: Pick<JobRunner, 'finishingMany'>;
    },
    /** The contributed renderers of intents, read when a mail is sent (none: intents fail visibly). */
    renderers: () => readonly MailRenderer[] = () => [],
  ) {
    this.db = platform.db;
    this.clock = platform.clock;
    this.config = platform.config;
    this.log = platform.log;
    this.jobs = platform.jobs;
    this.renderers = renderers;
  }

  async enqueue(trx: Tx, messages: readonly (MailMessage | MailIntent)[], batch?: WriteBatch): Promise<void> {
    if (messages.length === 0) return;
    const now = this.clock.now();
    // One build per invite: a booking's mails to its customer and hosts share theirs (~0.3 ms each).
    const built = new Map<InviteSpec, { at: number; ics: string }>();
    const inviteOf = (invite: InviteSpec, stamp: Date): string => {
      const known = built.get(invite);
      if (known?.at === stamp.getTime()) return known.ics;
      const ics = buildInvite(invite, { stamp });
      built.set(invite, { at: stamp.getTime(), ics });
      return ics;
    };
    const rows = messages.map((m) => {
      const livemode = m.livemode ?? true;
      const createdAt = m.at ?? now;
      let ics: string | null = null;
      let render: string | null = null;
      let icsMethod: InviteSpec['method'] | null;
      let text = '';
      let html = '';
      let lastError: string | null = null;
      if ('renderer' in m) {
        icsMethod = m.icsMethod;
        // A mail never sent needs no rendering: it keeps its empty bodies, as a rendered one would.
        if (m.to !== null) render = JSON.stringify({ renderer: m.renderer, data: m.data });
        else icsMethod = null;
        if (render !== null && !livemode) {
          // A test-mode mail is never sent, so it is rendered now, as the send job renders a logged
          // one: it keeps its bodies and invite. A renderer that throws leaves it to `get` (shown as
          // rendered on reading), with why.
          try {
            const r = this.render({ renderer: m.renderer, data: m.data }, createdAt);
            text = r.text_body;
            html = r.html_body;
            ics = r.ics;
            icsMethod = r.ics_method;
          } catch (err) {
            lastError = `not rendered: ${describe(err)}`;
          }
        }
      } else {
        if (m.invite) ics = inviteOf(m.invite, createdAt);
        icsMethod = m.invite ? m.invite.method : null;
        text = m.text;
        html = m.html;
      }
      // To no one: skipped in either mode (never sent either way; the table ties a null address to it).
      const status =
        m.to === null ? ('skipped' as const) : livemode ? ('pending' as const) : ('suppressed' as const);
      if (m.to === null) lastError = `no e-mail address for ${m.recipient ?? 'the recipient'}`;
      return {
        id: prefixedId('mail', now.getTime()),
        kind: m.kind,
        subject_id: m.subjectId ?? null,
        to_address: m.to,
        subject: m.subject,
        text_body: text,
        html_body: html,
        ics,
        ics_method: icsMethod,
        render,
        status,
        last_error: lastError,
        attempts: 0,
        created_at: createdAt,
        livemode,
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

  /** One mail; one written as an intent and not sent yet is rendered for the answer (not stored). */
  async get(id: string): Promise<MailDetail | null> {
    const row = await repo.mailDetail(this.db, id);
    if (!row) return null;
    const { render, ...detail } = row;
    if (render && detail.text === '') {
      try {
        detail.text = this.render(render, detail.created_at).text_body;
      } catch {
        // Shown as it is stored; the send job records why it cannot be rendered.
      }
    }
    return detail;
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
   * update and the end of the job are one statement (`finishingMany`), shared with the other send
   * jobs ending at the same time; their rows are read together too (`reads`, `ends`).
   */
  async send(job: Job<SendPayload>): Promise<void> {
    const smtpUrl = this.config.smtpUrl;
    const mail = await this.reads.ask(job.payload.mail_id);
    if (mail?.status !== 'pending' || mail.to_address === null) return;
    let rendered: repo.RenderedRow | null = null;
    try {
      rendered = mail.render ? this.render(mail.render, mail.created_at) : null;
    } catch (err) {
      await this.failed(job, mail, err, 'mail not rendered');
      return;
    }
    if (!smtpUrl) {
      // Nothing to send: the mail is logged (with its bodies, rendered now) as its job ends.
      await this.end({ job, mail: { id: mail.id, status: 'logged', sentAt: null, rendered } });
      return;
    }
    const body = rendered ?? mail;
    try {
      this.transport ??= createTransport(smtpUrl);
      await this.transport.sendMail({
        from: this.config.mailFrom,
        to: mail.to_address,
        subject: mail.subject,
        text: body.text_body,
        html: body.html_body,
        // The same Message-ID on every attempt: a receiver that got an attempt we think failed can
        // tell the retry is the same mail.
        messageId: `<${mail.id}@${domainOf(this.config.mailFrom)}>`,
        ...(body.ics && body.ics_method ? { icalEvent: { method: body.ics_method, content: body.ics } } : {}),
      });
    } catch (err) {
      await this.failed(job, mail, err, 'mail not sent');
      return;
    }
    await this.end({ job, mail: { id: mail.id, status: 'sent', sentAt: this.clock.now(), rendered } });
  }

  /**
   * Ends a mail and its job with the others ending now. A batch that fails may have failed for another
   * mail's sake (one whose rendered bodies the store refuses): this one is ended alone, once more.
   */
  private async end(ending: Ending): Promise<void> {
    await this.ends.ask(ending).catch((err: unknown) => {
      this.log.error({ err, mail: ending.mail.id }, 'mail end batch failed; ending this mail alone');
      return this.endMany([ending]);
    });
  }

  /** Ends mails and their jobs in one statement, and logs each mail logged. */
  private async endMany(endings: readonly Ending[]): Promise<null[]> {
    const done = this.jobs.finishingMany(endings.map((e) => e.job))(this.db);
    const ended = await repo.markEnded(
      this.db,
      done,
      endings.map((e) => e.mail),
    );
    for (const m of ended) {
      if (m.status !== 'logged') continue;
      const fields = { mail: m.id, kind: m.kind, to: m.to_address, subject: m.subject };
      this.log.info?.(fields, 'mail not sent (no SMTP_URL): kept in mail_outbox');
    }
    return endings.map(() => null);
  }

  /**
   * A mail rendered from its intent, as the caller would have written it at commit: the contributed
   * renderer's text and HTML, and its invite built with the row's `created_at` as DTSTAMP.
   */
  render(intent: { renderer: string; data: unknown }, createdAt: Date | string): repo.RenderedRow {
    const renderer = this.renderers().find((r) => r.name === intent.renderer);
    if (!renderer) throw new Error(`no mail renderer named ${JSON.stringify(intent.renderer)}`);
    const { text, html, invite } = renderer.render(intent.data);
    return {
      text_body: text,
      html_body: html,
      ics: invite ? buildInvite(invite, { stamp: new Date(createdAt) }) : null,
      ics_method: invite ? invite.method : null,
    };
  }

  /**
   * A failed attempt (SMTP or rendering), recorded on the row; throws so that the runner retries it,
   * unless this was the last attempt or the refusal is for good: then the mail is `failed` and logged.
   */
  private async failed(
    job: Job<SendPayload>,
    mail: Pick<MailOutboxTable, 'id' | 'kind'>,
    err: unknown,
    what: string,
  ): Promise<void> {
    const lastError = describe(err);
    const giveUp = job.attempts >= MAX_SEND_ATTEMPTS || isPermanent(err);
    await repo.recordAttemptFailed(this.db, mail.id, lastError, giveUp);
    if (giveUp) {
      this.log.error({ err, mail: mail.id, kind: mail.kind, attempts: job.attempts }, `${what}: giving up`);
      return;
    }
    throw new Error(`${what.replace('mail', `mail ${mail.id}`)} (attempt ${job.attempts}): ${lastError}`);
  }
}
