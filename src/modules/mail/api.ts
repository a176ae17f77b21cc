/**
 * The mail module's public surface (docs/architecture.md#modules): a transactional outbox. A caller
 * writes its mails with `enqueue(trx, …)` inside its own transaction (a rolled-back booking leaves no
 * mail, a committed one always has its mail); the `mail.send` job sends them after commit over SMTP
 * (SMTP_URL, From: MAIL_FROM), with retries. Without SMTP_URL a mail is recorded as `logged` (kept in
 * the database, announced in the log without its body). A test-mode mail (`livemode: false`) is kept as
 * `suppressed`, rendered and complete, and never sent (docs/api.md#test-mode).
 */
import type { Tx } from '../../db/store.js';
import type { WriteBatch } from '../../jobs/runner.js';

/** The mail module needs no other module. */
export type MailNeeds = Record<never, never>;

/** A calendar invite carried by a mail as a text/calendar alternative (iTIP REQUEST or CANCEL). */
export interface InviteSpec {
  method: 'REQUEST' | 'CANCEL';
  /** Stable across a booking's life, e.g. `${bookingId}@kairos`. */
  uid: string;
  /** Rises with each change. */
  sequence: number;
  start: Date;
  end: Date;
  summary: string;
  description?: string | null;
  url?: string | null;
  /** IANA, for display; instants are UTC (in a series' zone with `recurrence` or `recurrenceId`). */
  timezone?: string | null;
  organizer: { name: string; email: string };
  attendees: { name?: string | null; email: string }[];
  /** A recurring series (docs/api.md#recurring-series): the VEVENT repeats; start/end are its first occurrence. */
  recurrence?: {
    /** An RRULE value without its name, e.g. `FREQ=WEEKLY;INTERVAL=1;COUNT=10`. */
    rrule: string;
    /** The IANA zone the rule repeats in (DTSTART;TZID=, with its VTIMEZONE). */
    timezone: string;
    /** Instants the rule made that no longer happen (EXDATE). */
    exdates: Date[];
  } | null;
  /** One occurrence of a series changed alone: its start as the rule made it (RECURRENCE-ID, in the series' zone). */
  recurrenceId?: { at: Date; timezone: string } | null;
  /**
   * With `recurrence` only: occurrences of the series not at their rule time, each written after the
   * series' VEVENT as an override of the same UID and SEQUENCE (RECURRENCE-ID `recurrenceId`, their
   * start as the rule made it; DTSTART/DTEND `start`/`end`), so a client that takes the series' event
   * anew keeps them where they are.
   */
  overrides?: { recurrenceId: Date; start: Date; end: Date }[];
}

export interface MailMessage {
  /** What it is, e.g. 'booking.confirmation', 'waitlist.offer'. */
  kind: string;
  /** What it is about, e.g. a booking id. */
  subjectId?: string | null;
  /** One address; null when the recipient has none (the mail is recorded as `skipped`, not sent). */
  to: string | null;
  /** Who it is for, named in the record of a skipped mail (e.g. `principal <id>`). */
  recipient?: string;
  subject: string;
  text: string;
  html: string;
  invite?: InviteSpec | null;
  /**
   * The mode of what it is about (docs/api.md#test-mode): a test-mode mail is kept as `suppressed`, never sent. Absent: live.
   */
  livemode: boolean;
  /**
   * When it is written, if not now: a test-mode mail written as at a time of the account's test clock
   * (the actor's `clock.now()`, or a timed piece of work's due time). Absent: the server's now.
   */
  at?: Date;
}

/**
 * A mail written as an intent: what it is, to whom, and the data its renderer needs, rendered when it
 * is sent (the `mail.send` job), not in the caller's transaction. `data` is stored as JSON: it must
 * snapshot everything that could change before sending (names, times, zone, titles) and carry only
 * JSON values, so that the rendered mail is the one the caller would have written at commit. The
 * invite's DTSTAMP is the row's `created_at` either way.
 */
export interface MailIntent {
  kind: string;
  subjectId?: string | null;
  to: string | null;
  recipient?: string;
  subject: string;
  /** Whether it will carry an invite, and which (known at commit: `listFor` answers it). */
  icsMethod: InviteSpec['method'] | null;
  /** The `name` of a contributed `mailRenderers` item. */
  renderer: string;
  /** JSON: what that renderer takes. */
  data: unknown;
  /**
   * The mode of what it is about (docs/api.md#test-mode): a test-mode mail is kept as `suppressed`, never sent. Absent: live.
   */
  livemode: boolean;
  /**
   * When it is written, if not now: a test-mode mail written as at a time of the account's test clock
   * (the actor's `clock.now()`, or a timed piece of work's due time). Absent: the server's now.
   */
  at?: Date;
}

/** What a renderer makes of an intent's data: the parts of a `MailMessage` decided at sending. */
export interface RenderedMail {
  text: string;
  html: string;
  invite: InviteSpec | null;
}

/**
 * A renderer of mail intents, contributed by the module that writes them (the mail module imports
 * none): `render` takes the intent's `data` as stored (parsed JSON) and answers the mail, or throws
 * (the send is retried, then the mail is `failed` with the error: never lost silently).
 */
export interface MailRenderer {
  name: string;
  render(data: unknown): RenderedMail;
}

declare module '../module.js' {
  interface ExtensionPointTypes {
    /** Who renders mails written as intents, by name (bookings: its confirmation, reschedule, cancellation). */
    mailRenderers: MailRenderer;
  }
}

/** One outbox row, as `listFor` answers it. */
export interface MailRow {
  id: string;
  kind: string;
  to: string | null;
  subject: string;
  status: string;
  ics_method: string | null;
  /** False for a test-mode mail (status `suppressed`). */
  livemode: boolean;
}

/** One outbox row as an operator lists it (`kairos mail list`), newest first. */
export interface MailSummary {
  id: string;
  kind: string;
  to: string | null;
  subject: string;
  status: string;
  created_at: Date;
  /** False for a test-mode mail (status `suppressed`). */
  livemode: boolean;
}

/** One outbox row with its plain-text body (`kairos mail show`). */
export interface MailDetail extends MailSummary {
  text: string;
  /** Why it was not sent (skipped, failed, a retried SMTP error, a test-mode mail), or null. */
  last_error: string | null;
}

export interface MailApi {
  /**
   * Writes the messages into the outbox inside `trx` and enqueues their sending (after commit): the
   * rows and their send jobs in one statement, no per-message round trips. With `batch`, they join
   * the caller's batch instead (sent when the caller runs it). A `MailIntent` is stored as its data
   * and rendered by its renderer when it is sent. A test-mode message (`livemode: false`) is stored
   * `suppressed` (an intent rendered now) with no send job: it never leaves the server.
   */
  enqueue(trx: Tx, messages: readonly (MailMessage | MailIntent)[], batch?: WriteBatch): Promise<void>;
  /** Rows of the outbox about one subject (for tests and support), oldest first; both modes. */
  listFor(subjectId: string): Promise<MailRow[]>;
  /**
   * The most recent mails, newest first, at most `limit` (for operators reading mails that were
   * only logged: no SMTP_URL, or suppressed: test mode); both modes.
   */
  listRecent(limit: number): Promise<MailSummary[]>;
  /** One mail with its text body, or null when there is no mail with that id. */
  get(id: string): Promise<MailDetail | null>;
}
