/**
 * Booking mails (docs/api.md#e-mail-and-pages): confirmation, reschedule and cancellation to the
 * customer, each guest (the customer's mail without the self-service link) and every host with an address (a host without one gets a `skipped` record), each with a
 * calendar invite (same UID for the booking's whole life, SEQUENCE rising with each change; REQUEST,
 * or CANCEL when cancelled) except a host whose own calendar Kairos writes the booking into; and
 * waitlist offers.
 * Confirmation, reschedule and cancellation are written into the mail outbox inside the booking's own
 * transaction as intents (their data, snapshotted at commit), rendered when sent by
 * `bookingMailRenderer`; the others are written rendered.
 * A change of a recurring series (`series`; docs/api.md#recurring-series) mails each recipient once for
 * the series: its invite is the series' (series-mails.ts), its text names the rule and lists the dates.
 */
import type { InviteSpec, MailIntent, MailMessage, MailRenderer, RenderedMail } from '../mail/api.js';
import { describeTime, htmlBody, publicName } from '../../lib/mail-text.js';
import type { BookingRow } from './repo.js';
import {
  dateLines,
  datesCount,
  describeRule,
  movesOne,
  type SeriesMail,
  type SeriesMailData,
  seriesInvite,
  seriesMethod,
  seriesSnapshot,
  seriesTag,
} from './series-mails.js';

export type { SeriesMail, SeriesMailData } from './series-mails.js';

export type BookingMailKind = 'confirmation' | 'reschedule' | 'cancellation';

export interface Contact {
  /** The host's principal id (named in the record of a mail skipped for want of an address). */
  id: string;
  name: string;
  email: string | null;
  /** The zone the host reads its mails in (its schedule's); absent in mails written before it was kept: UTC. */
  timezone?: string | null;
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
  /** The booking's series, when the change is one of a recurring series: one mail for the series. */
  series?: SeriesMail;
}

const SUBJECTS: Record<BookingMailKind, (title: string) => string> = {
  confirmation: (t) => `Confirmed: ${t}`,
  reschedule: (t) => `Rescheduled: ${t}`,
  cancellation: (t) => `Cancelled: ${t}`,
};

const LEADS: Record<BookingMailKind, string> = {
  confirmation: 'Your booking is confirmed.',
  reschedule: 'Your booking has moved to a new time.',
  cancellation: 'Your booking has been cancelled.',
};

/** The name of the bookings' renderer of mail intents (module.ts contributes it). */
export const BOOKING_MAIL_RENDERER = 'booking';

/**
 * What one booking mail is made of, as JSON: everything read from the booking, its link and its hosts
 * at commit (a later rename, move or edit does not change a mail already written), and whom it is for.
 */
export interface BookingMailData {
  kind: BookingMailKind;
  booking: {
    id: string;
    /** ISO instants. */
    start: string;
    end: string;
    sequence: number;
    notes: string | null;
    customer_name: string;
    customer_email: string;
    customer_timezone: string | null;
    cancellation_reason: string | null;
    /** The guests' addresses (absent in mails written before guests: none). */
    guests?: string[];
  };
  title: string;
  hosts: Contact[];
  manageUrl: string;
  fromAddress: string;
  /** The customer, the guest at this index of `booking.guests`, or the host at this index of `hosts`. */
  for: Recipient;
  /** The series the change is of (absent: a booking alone, as before series). */
  series?: SeriesMailData;
}

/** Whom one mail is for: the customer, a guest (by index) or a host (by index). */
export type Recipient = 'customer' | { guest: number } | number;

/** The guests' leads: they are invited to the customer's booking, they do not manage it. */
const GUEST_LEADS: Record<BookingMailKind, string> = {
  confirmation: 'You are invited as a guest to this booking.',
  reschedule: 'A booking you are a guest of has moved to a new time.',
  cancellation: 'A booking you are a guest of has been cancelled.',
};

/** The snapshot a booking's mails are rendered from (one per recipient: `for`). */
function snapshotOf(input: BookingMailInput): Omit<BookingMailData, 'for'> {
  const b = input.booking;
  return {
    kind: input.kind,
    booking: {
      id: b.id,
      start: new Date(b.start_time).toISOString(),
      end: new Date(b.end_time).toISOString(),
      sequence: b.sequence,
      notes: b.notes ?? null,
      customer_name: b.customer_name,
      customer_email: b.customer_email,
      customer_timezone: b.customer_timezone,
      cancellation_reason: b.cancellation_reason ?? null,
      ...((b.guests ?? []).length > 0 ? { guests: [...b.guests] } : {}),
    },
    title: input.title,
    hosts: input.hosts.map((h) => ({
      id: h.id,
      name: h.name,
      email: h.email,
      timezone: h.timezone ?? null,
      ...(h.calendarWritten ? { calendarWritten: true } : {}),
    })),
    manageUrl: input.manageUrl,
    fromAddress: input.fromAddress,
    ...(input.series ? { series: seriesSnapshot(input.series) } : {}),
  };
}

/** A mail's subject: a series' names its rule, or how many dates a cancellation took away. */
function subjectOf(d: Omit<BookingMailData, 'for'>): string {
  const plain = SUBJECTS[d.kind](d.title);
  const s = d.series;
  if (!s || movesOne(d.kind, s)) return plain;
  if (d.kind === 'cancellation' && !s.whole) return `${plain} (${datesCount(s.cancelled.length)})`;
  return `${plain} ${seriesTag(s)}`;
}

/** The invite's method: a booking's cancellation is a CANCEL, a series' only when it is the whole series. */
function methodOf(d: Omit<BookingMailData, 'for'>): InviteSpec['method'] {
  if (d.series) return seriesMethod(d.kind, d.series);
  return d.kind === 'cancellation' ? 'CANCEL' : 'REQUEST';
}

/**
 * The zone a recipient reads the booking in: a host its own (its schedule's), the customer theirs,
 * else the zone of the host the booking is attributed to (the first).
 */
function zoneFor(d: Omit<BookingMailData, 'for'>, recipient: Recipient): string | null {
  if (typeof recipient === 'number') return d.hosts[recipient]?.timezone ?? null;
  return d.booking.customer_timezone ?? d.hosts[0]?.timezone ?? null;
}

/** The invite every recipient's mail carries (a host whose calendar Kairos writes gets none), in `zone`. */
function inviteOf(d: Omit<BookingMailData, 'for'>, zone: string | null): InviteSpec {
  const b = d.booking;
  const organizerHost = d.hosts.find((h) => h.email !== null);
  const start = new Date(b.start);
  const end = new Date(b.end);
  return {
    method: methodOf(d),
    uid: `${b.id}@kairos`,
    sequence: b.sequence,
    start,
    end,
    // A series' UID, SEQUENCE and times (the series VEVENT, or one occurrence's override).
    ...(d.series ? seriesInvite(d.kind, d.series, { start, end }) : {}),
    summary: d.title,
    description: b.notes ?? null,
    url: null,
    timezone: zone ?? 'UTC',
    // The customer reads these names: never an address as a name.
    organizer: organizerHost
      ? { name: publicName(organizerHost.name), email: organizerHost.email as string }
      : { name: 'Kairos', email: d.fromAddress },
    attendees: [
      { name: b.customer_name, email: b.customer_email },
      ...(b.guests ?? []).map((email) => ({ name: null, email })),
      ...d.hosts
        .filter((h) => h.email !== null)
        .map((h) => ({ name: publicName(h.name), email: h.email as string })),
    ],
  };
}

/**
 * One booking mail's text, HTML and invite from its data: the bookings' renderer (the mail module calls
 * it when it sends an intent) and the pre-rendered path alike.
 */
export function renderBookingMail(d: BookingMailData): RenderedMail {
  if (d.series) return renderSeriesMail(d, d.series);
  const { booking: b, kind, title } = d;
  const start = new Date(b.start);
  const end = new Date(b.end);
  const zone = zoneFor(d, d.for);
  if (typeof d.for !== 'number') {
    // A guest's mail is the customer's without the self-service link: a guest cannot manage it.
    const guest = d.for !== 'customer';
    const manage = kind === 'cancellation' || guest ? null : d.manageUrl;
    const lines = [
      guest ? 'Hello,' : `Hello ${b.customer_name},`,
      '',
      guest ? GUEST_LEADS[kind] : LEADS[kind],
      '',
      `What: ${title}`,
      `When: ${describeTime(start, end, zone)}`,
      `With: ${d.hosts.map((h) => publicName(h.name)).join(', ')}`,
      ...(guest ? [`Booked by: ${publicName(b.customer_name)}`] : []),
      ...(kind === 'cancellation' && b.cancellation_reason ? [`Reason: ${b.cancellation_reason}`] : []),
      ...(manage ? ['', `View, reschedule or cancel: ${manage}`] : []),
    ];
    return { text: lines.join('\n'), html: htmlBody(lines, manage), invite: inviteOf(d, zone) };
  }
  const h = d.hosts[d.for];
  if (!h) throw new Error(`booking mail: no host ${d.for} in the mail's data`);
  const lines = [
    `Hello ${h.name},`,
    '',
    `${kind === 'confirmation' ? 'New booking' : kind === 'reschedule' ? 'Booking rescheduled' : 'Booking cancelled'}: ${title}`,
    '',
    `When: ${describeTime(start, end, zone)}`,
    `Customer: ${b.customer_name} <${b.customer_email}>`,
    ...(b.notes ? [`Notes: ${b.notes}`] : []),
    ...(kind === 'cancellation' && b.cancellation_reason ? [`Reason: ${b.cancellation_reason}`] : []),
    `Booking: ${b.id}`,
    ...(h.calendarWritten
      ? ['', kind === 'cancellation' ? 'It is removed from your calendar.' : 'It is in your calendar.']
      : []),
  ];
  return {
    text: lines.join('\n'),
    html: htmlBody(lines, null),
    invite: h.calendarWritten ? null : inviteOf(d, zone),
  };
}

const SERIES_LEADS: Record<BookingMailKind, string> = {
  confirmation: 'Your recurring booking is confirmed.',
  reschedule: 'Your recurring booking has moved to new times.',
  cancellation: 'Your recurring booking has been cancelled: every date of it.',
};

const SERIES_HOST_LEADS: Record<BookingMailKind, string> = {
  confirmation: 'New recurring booking',
  reschedule: 'Recurring booking rescheduled',
  cancellation: 'Recurring booking cancelled',
};

/**
 * A series' mail: the rule in words and the dates (the live ones; a cancellation's cancelled ones),
 * or, for one occurrence moved alone, a reschedule's text naming it as one date of the series.
 */
function renderSeriesMail(d: BookingMailData, s: SeriesMailData): RenderedMail {
  const { booking: b, kind, title } = d;
  const zone = zoneFor(d, d.for);
  const one = movesOne(kind, s);
  const partial = kind === 'cancellation' && !s.whole;
  const n = s.cancelled.length;
  const when = one
    ? [`When: ${describeTime(new Date(b.start), new Date(b.end), zone)}`]
    : [
        `${partial ? 'Series' : 'When'}: ${describeRule(s, zone)}`,
        ...(kind === 'cancellation'
          ? dateLines('Cancelled', s.cancelled, zone)
          : dateLines('Dates', s.occurrences, zone)),
        ...(partial ? dateLines('Still booked', s.occurrences, zone) : []),
      ];
  const reason = kind === 'cancellation' && b.cancellation_reason ? [`Reason: ${b.cancellation_reason}`] : [];
  const live = kind !== 'cancellation' || partial;
  const hostIndex = d.for;
  if (typeof hostIndex !== 'number') {
    const guest = hostIndex !== 'customer';
    const lead = guest
      ? partial
        ? 'Some dates of a recurring booking you are a guest of have been cancelled.'
        : GUEST_LEADS[one ? 'reschedule' : kind]
      : one
        ? 'One date of your recurring booking has moved to a new time; the other dates stay as they are.'
        : partial
          ? `${n === 1 ? 'A date' : `${n} dates`} of your recurring booking ${n === 1 ? 'has' : 'have'} been cancelled.`
          : SERIES_LEADS[kind];
    const manage = live && !guest ? d.manageUrl : null;
    const lines = [
      guest ? 'Hello,' : `Hello ${b.customer_name},`,
      '',
      lead,
      '',
      `What: ${title}`,
      ...when,
      `With: ${d.hosts.map((h) => publicName(h.name)).join(', ')}`,
      ...(guest ? [`Booked by: ${publicName(b.customer_name)}`] : []),
      ...reason,
      ...(manage ? ['', `View, reschedule or cancel: ${manage}`] : []),
    ];
    return { text: lines.join('\n'), html: htmlBody(lines, manage), invite: inviteOf(d, zone) };
  }
  const h = d.hosts[hostIndex];
  if (!h) throw new Error(`booking mail: no host ${hostIndex} in the mail's data`);
  const lead = one
    ? 'Booking rescheduled (one date of a series)'
    : partial
      ? `Dates cancelled (${datesCount(n)})`
      : SERIES_HOST_LEADS[kind];
  const lines = [
    `Hello ${h.name},`,
    '',
    `${lead}: ${title}`,
    '',
    ...when,
    `Customer: ${b.customer_name} <${b.customer_email}>`,
    ...(b.notes ? [`Notes: ${b.notes}`] : []),
    ...reason,
    `Booking: ${b.id}`,
    `Series: ${s.id}`,
    ...(h.calendarWritten
      ? ['', kind === 'cancellation' ? 'They are removed from your calendar.' : 'It is in your calendar.']
      : []),
  ];
  return {
    text: lines.join('\n'),
    html: htmlBody(lines, null),
    invite: h.calendarWritten ? null : inviteOf(d, zone),
  };
}

/**
 * The bookings' renderer of mail intents. Its data is what `bookingMailIntents` wrote, read back from
 * the outbox as JSON: written by this module only, so it is taken as that shape.
 */
export const bookingMailRenderer: MailRenderer = {
  name: BOOKING_MAIL_RENDERER,
  render: (data) => renderBookingMail(data as BookingMailData),
};

/**
 * Whom each of a booking's mails goes to: the customer, each guest, then every host (null: recorded
 * as skipped).
 */
function recipients(d: Omit<BookingMailData, 'for'>) {
  const out: { for: Recipient; to: string | null; recipient: string | undefined }[] = [
    { for: 'customer', to: d.booking.customer_email, recipient: undefined },
    ...(d.booking.guests ?? []).map((g, i) => ({ for: { guest: i }, to: g, recipient: undefined })),
    ...d.hosts.map((h, i) => ({ for: i, to: h.email, recipient: `principal ${h.id}` })),
  ];
  return out;
}

/**
 * A booking's mails as intents, rendered when sent (the booking's transaction writes their data, not
 * their text, HTML and invite). A host without an address gets a `skipped` record, never rendered.
 */
export function bookingMailIntents(input: BookingMailInput): MailIntent[] {
  const snap = snapshotOf(input);
  const subject = subjectOf(snap);
  const method = methodOf(snap);
  return recipients(snap).map((r) => ({
    kind: `booking.${input.kind}`,
    subjectId: snap.booking.id,
    to: r.to,
    ...(r.to === null ? { recipient: r.recipient } : {}),
    subject,
    icsMethod:
      r.to === null || (typeof r.for === 'number' && snap.hosts[r.for]?.calendarWritten) ? null : method,
    renderer: BOOKING_MAIL_RENDERER,
    data: { ...snap, for: r.for } satisfies BookingMailData,
    livemode: input.booking.livemode,
  }));
}

/** A booking's mails rendered now (the path before render at send; tests compare the two). */
export function bookingMails(input: BookingMailInput): MailMessage[] {
  const snap = snapshotOf(input);
  const subject = subjectOf(snap);
  return recipients(snap).map((r) => {
    const base = {
      kind: `booking.${input.kind}`,
      subjectId: snap.booking.id,
      to: r.to,
      subject,
      livemode: input.booking.livemode,
    };
    // Recorded, never sent (docs/api.md#e-mail-and-pages): the host has no address.
    if (r.to === null) return { ...base, recipient: r.recipient, text: '', html: '', invite: null };
    return { ...base, ...renderBookingMail({ ...snap, for: r.for }) };
  });
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
    livemode: b.livemode,
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
  /** The zone the offer's time is written in (named in the mail). */
  timezone: string;
}

export function offerMail(o: OfferMailInput): Omit<MailMessage, 'livemode'> {
  const lines = [
    `Hello ${o.name},`,
    '',
    `A time you were waiting for is free: ${o.title}`,
    `When: ${describeTime(o.start, o.end, o.timezone)}`,
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
