/**
 * How every module's mails write things (docs/api.md#e-mail-and-pages): times ("Monday, 1 June 2026 at
 * 09:00 – 09:30 (UTC)", in the reader's zone when known, else UTC), people's names where the public
 * reads them (never an address), the simple HTML body made from the plain-text lines, and the address
 * in MAIL_FROM. Pure: the mail module sends what modules compose.
 */
import { escapeHtml } from './html.js';

/** Formatters per zone: making one costs ~0.2 ms, using one ~2 µs (a booking mails several times). */
const formatters = new Map<string, { start: Intl.DateTimeFormat; end: Intl.DateTimeFormat }>();

function formattersFor(zone: string) {
  let f = formatters.get(zone);
  if (!f) {
    f = {
      start: new Intl.DateTimeFormat('en-GB', {
        timeZone: zone,
        weekday: 'long',
        day: 'numeric',
        month: 'long',
        year: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
      }),
      end: new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit' }),
    };
    if (formatters.size >= 500) formatters.clear(); // zones are IANA names: few, but never unbounded
    formatters.set(zone, f);
  }
  return f;
}

/** A start (and the end's time of day, when given) as a person reads them in `zone` (null: UTC). */
export function describeTime(start: Date, end: Date | null, zone: string | null): string {
  const tz = zone ?? 'UTC';
  const f = formattersFor(tz);
  return `${f.start.format(start)}${end ? ` – ${f.end.format(end)}` : ''} (${tz})`;
}

/** An e-mail address anywhere in a text. */
const ADDRESS_IN_TEXT = /[^\s@<>"',;]+@[^\s@<>"',;]+/;

/**
 * A person's name where anyone may read it — public pages, `/v1/public/*` answers, customers' mails
 * and invites: never an e-mail address. A name that is empty or holds an address gives `fallback`.
 */
export function publicName(name: string | null | undefined, fallback = 'Your host'): string {
  const n = (name ?? '').trim();
  return n === '' || ADDRESS_IN_TEXT.test(n) ? fallback : n;
}

/** The address in `MAIL_FROM` (`a@b` out of `Name <a@b>`): who organizes an invite when nobody else can. */
export function addressOf(from: string): string {
  const m = /<([^>]+)>/.exec(from);
  return (m ? m[1]! : from).trim();
}

/**
 * The simple HTML body of a mail from its text lines ('' = a break), with `link` (if any) as a last
 * paragraph: the same words as the plain-text part, escaped.
 */
export function htmlBody(lines: readonly string[], link: string | null): string {
  const body = lines.map((l) => (l === '' ? '<br>' : `<p>${escapeHtml(l)}</p>`)).join('\n');
  const button = link ? `\n<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>` : '';
  return `<!doctype html><html><body style="font-family:sans-serif">${body}${button}</body></html>`;
}
