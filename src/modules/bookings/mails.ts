/**
 * Booking mails (docs/api.md#e-mail-and-pages): confirmation, reschedule and cancellation to the
 * customer and every host with an address (a host without one gets a `skipped` record), each with a
 * calendar invite (same UID for the booking's whole life, SEQUENCE rising with each change; REQUEST,
 * or CANCEL when cancelled) except a host whose own calendar Kairos writes the booking into; and
 * waitlist offers.
 * Written into the mail outbox inside the booking's own transaction.
 */
import type { InviteSpec, MailMessage } from '../mail/api.js';
import { describeTime, htmlBody } from '../../lib/mail-text.js';
import type { BookingRow } from './repo.js';

export type BookingMailKind = 'confirmation' | 'reschedule' | 'cancellation';

export interface Contact {
  /** The host's principal id (named in the record of a mail skipped for want of an address). */
  id: string;
  name: string;
  email: string | null;
  /**
   * Kairos writes the booking into this host's own calendar (calendar write-through): their mail
   * carries no invite, which their mail client would add as a second event.
   */
  calendarWritten?: boolean;
}

export interface BookingMailInput {
  kind: BookingMailKind;
  booking: BookingRow;
  /** What the booking is: the link's title, or a plain description. */
  title: string;
  hosts: readonly Contact[];
  /** The attendee's self-service link. */
  manageUrl: string;
  /** The address mails are sent from, the organizer when no host has an address. */
  fromAddress: string;
}

const SUBJECTS: Record<BookingMailKind, (title: string) => string> = {
  confirmation: (t) => `Confirmed: ${t}`,
  reschedule: (t) => `Rescheduled: ${t}`,
  cancellation: (t) => `Cancelled: ${t}`,
};

export function bookingMails(input: BookingMailInput): MailMessage[] {
  const { booking: b, kind, title, hosts } = input;
  const start = new Date(b.start_time);
  const end = new Date(b.end_time);
  const organizerHost = hosts.find((h) => h.email !== null);
  const invite: InviteSpec = {
    method: kind === 'cancellation' ? 'CANCEL' : 'REQUEST',
    uid: `${b.id}@kairos`,
    sequence: b.sequence,
    start,
    end,
    summary: title,
    description: b.notes ?? null,
    url: null,
    timezone: b.customer_timezone,
    organizer: organizerHost
      ? { name: organizerHost.name, email: organizerHost.email as string }
      : { name: 'Kairos', email: input.fromAddress },
    attendees: [
      { name: b.customer_name, email: b.customer_email },
      ...hosts.filter((h) => h.email !== null).map((h) => ({ name: h.name, email: h.email as string })),
    ],
  };
  const when = describeTime(start, end, b.customer_timezone);
  const hostNames = hosts.map((h) => h.name).join(', ');
  const subject = SUBJECTS[kind](title);
  const lead: Record<BookingMailKind, string> = {
    confirmation: 'Your booking is confirmed.',
    reschedule: 'Your booking has moved to a new time.',
    cancellation: 'Your booking has been cancelled.',
  };
  const out: MailMessage[] = [];
  const customerLines = [
    `Hello ${b.customer_name},`,
    '',
    lead[kind],
    '',
    `What: ${title}`,
    `When: ${when}`,
    `With: ${hostNames}`,
    ...(kind === 'cancellation' && b.cancellation_reason ? [`Reason: ${b.cancellation_reason}`] : []),
    ...(kind === 'cancellation' ? [] : ['', `View, reschedule or cancel: ${input.manageUrl}`]),
  ];
  out.push({
    kind: `booking.${kind}`,
    subjectId: b.id,
    to: b.customer_email,
    subject,
    text: customerLines.join('\n'),
    html: htmlBody(customerLines, kind === 'cancellation' ? null : input.manageUrl),
    invite,
  });
  for (const h of hosts) {
    if (h.email === null) {
      // Recorded, never sent (docs/api.md#e-mail-and-pages): the host has no address.
      out.push({
        kind: `booking.${kind}`,
        subjectId: b.id,
        to: null,
        recipient: `principal ${h.id}`,
        subject,
        text: '',
        html: '',
        invite: null,
      });
      continue;
    }
    const hostLines = [
      `Hello ${h.name},`,
      '',
      `${kind === 'confirmation' ? 'New booking' : kind === 'reschedule' ? 'Booking rescheduled' : 'Booking cancelled'}: ${title}`,
      '',
      `When: ${describeTime(start, end, null)}`,
      `Customer: ${b.customer_name} <${b.customer_email}>`,
      ...(b.notes ? [`Notes: ${b.notes}`] : []),
      ...(kind === 'cancellation' && b.cancellation_reason ? [`Reason: ${b.cancellation_reason}`] : []),
      `Booking: ${b.id}`,
      ...(h.calendarWritten
        ? ['', kind === 'cancellation' ? 'It is removed from your calendar.' : 'It is in your calendar.']
        : []),
    ];
    out.push({
      kind: `booking.${kind}`,
      subjectId: b.id,
      to: h.email,
      subject,
      text: hostLines.join('\n'),
      html: htmlBody(hostLines, null),
      invite: h.calendarWritten ? null : invite,
    });
  }
  return out;
}

/** A payment that arrived after its hold ended, when the time was gone: the customer is refunded. */
export function latePaymentMail(b: BookingRow): MailMessage {
  const amount =
    b.payment_amount !== null && b.payment_currency !== null
      ? formatAmount(b.payment_amount, b.payment_currency)
      : 'your payment';
  const lines = [
    `Hello ${b.customer_name},`,
    '',
    'Your payment arrived after the time we held for you had been released, and the time is no longer available.',
    `We are refunding ${amount} in full; you do not need to do anything.`,
    '',
    `When: ${describeTime(new Date(b.start_time), new Date(b.end_time), b.customer_timezone)}`,
  ];
  return {
    kind: 'booking.payment_refunded',
    subjectId: b.id,
    to: b.customer_email,
    subject: 'Your payment is being refunded',
    text: lines.join('\n'),
    html: htmlBody(lines, null),
    invite: null,
  };
}

export interface OfferMailInput {
  entryId: string;
  to: string;
  name: string;
  title: string;
  start: Date;
  end: Date;
  expiresAt: Date;
  claimUrl: string;
}

export function offerMail(o: OfferMailInput): MailMessage {
  const lines = [
    `Hello ${o.name},`,
    '',
    `A time you were waiting for is free: ${o.title}`,
    `When: ${describeTime(o.start, o.end, null)}`,
    '',
    `It is held for you until ${o.expiresAt.toISOString()}. Claim it: ${o.claimUrl}`,
  ];
  return {
    kind: 'waitlist.offer',
    subjectId: o.entryId,
    to: o.to,
    subject: `A time is free: ${o.title}`,
    text: lines.join('\n'),
    html: htmlBody(lines, o.claimUrl),
    invite: null,
  };
}

/** Minor units as a reader sees them: 2500 eur → €25.00, 500 jpy → ¥500. */
export function formatAmount(minor: number, currency: string): string {
  try {
    const f = new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() });
    return f.format(minor / 10 ** (f.resolvedOptions().maximumFractionDigits ?? 2));
  } catch {
    return `${minor} ${currency.toUpperCase()} (minor units)`;
  }
}
