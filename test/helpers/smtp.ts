/**
 * A real SMTP server FOR TESTS (smtp-server on 127.0.0.1, random port) that keeps what it receives,
 * raw and parsed (mailparser). Any sender and recipient, no auth, no STARTTLS. `failFirst: n` answers
 * the first n DATA commands with `451` (a temporary failure) to exercise retries; `rejectRecipients`
 * refuses those addresses with `550` (a permanent one).
 */
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { waitUntil } from './promises.js';

export interface SmtpSink {
  /** smtp://127.0.0.1:<port> */
  url: string;
  /** Accepted mails, parsed, in the order they were accepted. */
  messages: ParsedMail[];
  /** Accepted mails as received (CRLF line ends), same order (may be ahead of `messages`). */
  raw: string[];
  /** DATA commands refused so far (failFirst). */
  refused(): number;
  /** Resolves with every accepted mail once there are at least `count` (default timeout 2 s). */
  waitFor(count: number, timeoutMs?: number): Promise<ParsedMail[]>;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /** Answer the first n DATA commands with 451 (try again later). */
  failFirst?: number;
  /** Answer RCPT TO for these addresses with 550 (no such user): a permanent refusal. */
  rejectRecipients?: readonly string[];
  /** Listen on this port (a sink started again where a stopped one was); default: a free one. */
  port?: number;
}

export async function startSmtpSink(opts: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const messages: ParsedMail[] = [];
  const raw: string[] = [];
  let dataCommands = 0;
  let refused = 0;
  // Parsing is asynchronous: mails are parsed one after another, so `messages` keeps the arrival order.
  let parsing: Promise<void> = Promise.resolve();

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // Connections still open on close (a pooled client) are cut after this long.
    closeTimeout: 200,
    onRcptTo(address, _session, callback) {
      if (opts.rejectRecipients?.includes(address.address.toLowerCase())) {
        callback(Object.assign(new Error('No such user (test sink)'), { responseCode: 550 }));
        return;
      }
      callback();
    },
    onData(stream, _session, callback) {
      const n = ++dataCommands;
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', callback);
      stream.on('end', () => {
        if (n <= (opts.failFirst ?? 0)) {
          refused++;
          callback(Object.assign(new Error('Try again later (test sink)'), { responseCode: 451 }));
          return;
        }
        const text = Buffer.concat(chunks).toString('utf8');
        raw.push(text);
        parsing = parsing.then(async () => {
          messages.push(await simpleParser(text));
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    raw,
    refused: () => refused,
    async waitFor(count, timeoutMs = 2_000) {
      await waitUntil(`${count} mails at the SMTP sink`, () => messages.length >= count, timeoutMs, 10);
      await parsing;
      return messages;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
