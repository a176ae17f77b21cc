/**
 * The mails of recurring series (docs/api.md#recurring-series), the parts mails.ts composes: the series
 * as its mails snapshot it (JSON: ISO instants), its invite (one VEVENT with RRULE and EXDATE under the
 * series' UID, METHOD:CANCEL for the whole series, a RECURRENCE-ID override for one occurrence moved
 * alone), the rule in words in the reader's zone and the dates it lists. Every REQUEST of the series
 * also carries an override VEVENT for each live occurrence not at its rule time (moved earlier), so a
 * client that replaces the series' event with it (Outlook) keeps those where they are (RFC 5546 §3.2.2).
 */
import { describeTime } from '../../lib/mail-text.js';
import { type Frequency, occurrences, type RecurrenceRule, rrule } from '../../lib/recurrence.js';
import type { InviteSpec } from '../mail/api.js';
import { type BookingRow, LIVE_STATUSES } from './repo.js';
import type { SeriesRow } from './series-repo.js';

/** A series as the booking side hands it to the mails of one change (docs/api.md#recurring-series). */
export interface SeriesMail {
  /** ser_… → invite UID `${id}@kairos`. */
  id: string;
  frequency: Frequency;
  interval: number;
  count: number;
  timezone: string;
  /** The rule's first occurrence (DTSTART/DTEND of the series VEVENT). */
  first: { start: Date; end: Date };
  /** occurrence_start of every cancelled occurrence so far (EXDATE). */
  exdates: Date[];
  /** The series' SEQUENCE. */
  sequence: number;
  /** The live occurrences now, by start (for the mail text). */
  occurrences: { start: Date; end: Date }[];
  /** The live occurrences not at their rule time: `at` their occurrence_start (RECURRENCE-ID), start/end now. */
  moved: { at: Date; start: Date; end: Date }[];
  /** What this change cancelled (text of a cancellation). */
  cancelled: { start: Date; end: Date }[];
  /** Cancellation of the whole series: METHOD:CANCEL, UID of the series. */
  whole: boolean;
  /** Reschedule of one occurrence: its occurrence_start (RECURRENCE-ID). */
  recurrenceId?: Date | null;
}

/** An interval as JSON: ISO instants. */
export interface IsoSpan {
  start: string;
  end: string;
}

/** `SeriesMail` as a mail intent's data stores it (JSON: every instant an ISO string). */
export interface SeriesMailData {
  id: string;
  frequency: Frequency;
  interval: number;
  count: number;
  timezone: string;
  first: IsoSpan;
  exdates: string[];
  sequence: number;
  occurrences: IsoSpan[];
  /** Absent in the data of mails written before it was snapshotted (read as none). */
  moved?: (IsoSpan & { at: string })[];
  cancelled: IsoSpan[];
  whole: boolean;
  recurrenceId: string | null;
}

const isoSpan = (x: { start: Date; end: Date }): IsoSpan => ({
  start: x.start.toISOString(),
  end: x.end.toISOString(),
});

/** The series as a mail snapshots it. */
export function seriesSnapshot(s: SeriesMail): SeriesMailData {
  return {
    id: s.id,
    frequency: s.frequency,
    interval: s.interval,
    count: s.count,
    timezone: s.timezone,
    first: isoSpan(s.first),
    exdates: s.exdates.map((d) => d.toISOString()),
    sequence: s.sequence,
    occurrences: s.occurrences.map(isoSpan),
    moved: s.moved.map((m) => ({ at: m.at.toISOString(), ...isoSpan(m) })),
    cancelled: s.cancelled.map(isoSpan),
    whole: s.whole,
    recurrenceId: s.recurrenceId ? s.recurrenceId.toISOString() : null,
  };
}

export type SeriesMailKind = 'confirmation' | 'reschedule' | 'cancellation';

/** Whether a mail is about one occurrence moved alone (a RECURRENCE-ID override). */
export const movesOne = (kind: SeriesMailKind, s: SeriesMailData): boolean =>
  kind === 'reschedule' && s.recurrenceId !== null;

/** The invite's method: CANCEL only for the whole series; a cancelled occurrence is an EXDATE of a REQUEST. */
export function seriesMethod(kind: SeriesMailKind, s: SeriesMailData): InviteSpec['method'] {
  return kind === 'cancellation' && s.whole ? 'CANCEL' : 'REQUEST';
}

/**
 * The series' part of an invite: its UID and SEQUENCE, and either the series VEVENT (DTSTART the
 * rule's first occurrence, RRULE, EXDATE; in a REQUEST, an override for each occurrence moved so far)
 * or, for one occurrence moved alone, its override (RECURRENCE-ID, DTSTART/DTEND the booking's new
 * time `moved`).
 */
export function seriesInvite(
  kind: SeriesMailKind,
  s: SeriesMailData,
  moved: { start: Date; end: Date },
): Pick<
  InviteSpec,
  'method' | 'uid' | 'sequence' | 'start' | 'end' | 'recurrence' | 'recurrenceId' | 'overrides'
> {
  const common = { method: seriesMethod(kind, s), uid: `${s.id}@kairos`, sequence: s.sequence };
  if (movesOne(kind, s)) {
    return {
      ...common,
      ...moved,
      recurrence: null,
      recurrenceId: { at: new Date(s.recurrenceId as string), timezone: s.timezone },
    };
  }
  return {
    ...common,
    start: new Date(s.first.start),
    end: new Date(s.first.end),
    recurrence: { rrule: rrule(s), timezone: s.timezone, exdates: s.exdates.map((d) => new Date(d)) },
    recurrenceId: null,
    // The whole series cancelled needs none: its CANCEL takes every occurrence, moved or not.
    overrides:
      common.method === 'REQUEST'
        ? (s.moved ?? []).map((m) => ({
            recurrenceId: new Date(m.at),
            start: new Date(m.start),
            end: new Date(m.end),
          }))
        : [],
  };
}

const UNITS: Record<Frequency, string> = { daily: 'day', weekly: 'week', monthly: 'month' };

/** How often, as a subject says it: "every week", "every 2 weeks". */
function every(s: Pick<RecurrenceRule, 'frequency' | 'interval'>): string {
  const unit = UNITS[s.frequency];
  return s.interval === 1 ? `every ${unit}` : `every ${s.interval} ${unit}s`;
}

const times = (n: number) => (n === 1 ? 'once' : `${n} times`);

/** A series' subject's tail: "(every week, 10 times)". */
export function seriesTag(s: SeriesMailData): string {
  return `(${every(s)}, ${times(s.count)})`;
}

/** "1 date", "3 dates". */
export const datesCount = (n: number) => `${n} date${n === 1 ? '' : 's'}`;

/** Formatters per zone for the parts of a time the rule in words names. */
const partFormatters = new Map<string, Intl.DateTimeFormat>();

function partsIn(zone: string, at: number) {
  let f = partFormatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      weekday: 'long',
      day: 'numeric',
      month: 'long',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    if (partFormatters.size >= 500) partFormatters.clear();
    partFormatters.set(zone, f);
  }
  const p: Record<string, string> = {};
  for (const { type, value } of f.formatToParts(at)) p[type] = value;
  return {
    weekday: p.weekday ?? '',
    day: Number(p.day),
    date: `${p.day} ${p.month} ${p.year}`,
    time: `${p.hour}:${p.minute}`,
  };
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix =
    tens >= 11 && tens <= 13 ? 'th' : n % 10 === 1 ? 'st' : n % 10 === 2 ? 'nd' : n % 10 === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}

/**
 * The rule in words, e.g. "Every week on Tuesday at 09:00 – 09:30, 10 times, from 16 March 2027
 * (Europe/Berlin)": in the reader's zone when every occurrence of the rule falls there on the same
 * weekday (day of the month) and time, else in the series' own zone, whose wall clock the rule keeps
 * (a reader in New York of a Berlin series sees 03:00 some weeks and 04:00 others).
 */
export function describeRule(s: SeriesMailData, readerZone: string | null): string {
  const first = { start: Date.parse(s.first.start), end: Date.parse(s.first.end) };
  const all = occurrences(first, s);
  const keyIn = (zone: string, o: { start: number; end: number }) => {
    const a = partsIn(zone, o.start);
    const on = s.frequency === 'weekly' ? a.weekday : s.frequency === 'monthly' ? String(a.day) : '';
    return `${on} ${a.time} ${partsIn(zone, o.end).time}`;
  };
  const reader = readerZone ?? 'UTC';
  const key = keyIn(reader, first);
  const zone = all.every((o) => keyIn(reader, o) === key) ? reader : s.timezone;
  const a = partsIn(zone, first.start);
  const on =
    s.frequency === 'weekly'
      ? ` on ${a.weekday}`
      : s.frequency === 'monthly'
        ? ` on the ${ordinal(a.day)}`
        : '';
  const how = every(s);
  return `${how.charAt(0).toUpperCase()}${how.slice(1)}${on} at ${a.time} – ${partsIn(zone, first.end).time}, ${times(s.count)}, from ${a.date} (${zone})`;
}

/** Dates listed in a mail at most; past them, how many more. */
const MAX_LISTED = 60;

/**
 * A list of dates under its heading, in the reader's zone (named once, in the heading): "Dates
 * (Europe/Berlin):", then "- Tuesday, 16 March 2027 at 09:00 – 09:30" each. Nothing for no dates.
 */
export function dateLines(heading: string, spans: readonly IsoSpan[], readerZone: string | null): string[] {
  if (spans.length === 0) return [];
  const zone = readerZone ?? 'UTC';
  const suffix = ` (${zone})`;
  const lines = spans.slice(0, MAX_LISTED).map((x) => {
    const t = describeTime(new Date(x.start), new Date(x.end), zone);
    return `- ${t.endsWith(suffix) ? t.slice(0, -suffix.length) : t}`;
  });
  if (spans.length > MAX_LISTED) lines.push(`- and ${datesCount(spans.length - MAX_LISTED)} more`);
  return [`${heading} (${zone}):`, ...lines];
}

/**
 * What the series' mail says (mails.ts): the rule, its first occurrence as the rule made it, the
 * cancelled occurrences (EXDATE), the live ones, those of them not at their rule time (overrides),
 * and this change.
 */
export function seriesMail(
  s: SeriesRow,
  all: readonly BookingRow[],
  change: { cancelled: readonly BookingRow[]; whole: boolean; recurrenceId?: Date | null },
): SeriesMail {
  // The rule's first occurrence: the earliest as the rule made it (a moved one keeps its RECURRENCE-ID).
  const firstOf = all.reduce((a, o) => (startOf(o) < startOf(a) ? o : a));
  const firstStart = startOf(firstOf);
  // The rule's length: that of the earliest occurrence still at its rule start (a moved one may have
  // taken another length), else the first's.
  const atRule = all.filter((o) => new Date(o.start_time).getTime() === startOf(o));
  const lengthOf = (o: BookingRow) => new Date(o.end_time).getTime() - new Date(o.start_time).getTime();
  const length = lengthOf(atRule.reduce((a, o) => (startOf(o) < startOf(a) ? o : a), atRule[0] ?? firstOf));
  const span = (o: BookingRow) => ({ start: new Date(o.start_time), end: new Date(o.end_time) });
  const live = all.filter((o) => LIVE_STATUSES.includes(o.status));
  // Not at its rule time (RECURRENCE-ID its occurrence_start): moved, or its length changed.
  const isMoved = (o: BookingRow) =>
    o.occurrence_start != null && (new Date(o.start_time).getTime() !== startOf(o) || lengthOf(o) !== length);
  return {
    id: s.id,
    frequency: s.frequency,
    interval: s.interval,
    count: s.count,
    timezone: s.timezone,
    first: { start: new Date(firstStart), end: new Date(firstStart + length) },
    exdates: all
      .filter((o) => o.status === 'cancelled' || o.status === 'expired')
      .map((o) => new Date(startOf(o))),
    sequence: s.sequence,
    occurrences: live.map(span),
    moved: live.filter(isMoved).map((o) => ({ at: new Date(startOf(o)), ...span(o) })),
    cancelled: change.cancelled.map(span),
    whole: change.whole,
    recurrenceId: change.recurrenceId ?? null,
  };
}

/** An occurrence's start as the rule made it (its RECURRENCE-ID). */
function startOf(o: BookingRow): number {
  return new Date(o.occurrence_start ?? o.start_time).getTime();
}
