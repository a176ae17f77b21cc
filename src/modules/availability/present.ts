/**
 * Rendering of availability answers. Slot lists are the bulk of an answer (a 30-day query has hundreds of
 * slots), so they are written straight to JSON text here: building slot objects, formatting each
 * instant with Date#toISOString and running the schema serializer over them cost more than computing
 * the slots (measured with bench/availability.ts). The text is exactly what the response schema
 * describes; present.test.ts checks it against the plain object rendering.
 *
 * Instants are written in UTC (`2026-06-10T14:00:00.000Z`), or, when a zone is given (`offsetsIn`),
 * with that zone's offset there (`2026-06-10T16:00:00+02:00`, lib/time.ts `isoInZone`): what the MCP
 * tools answer (docs/mcp.md#answers), written here once instead of parsed and rewritten there.
 */
import type { Interval } from '../../lib/intervals.js';
import { toWall } from '../../lib/schedule.js';
import { DAY, isoInZone, isoUtc, MINUTE } from '../../lib/time.js';

export interface PresentedSlot {
  start: string;
  end: string;
}

export function presentSlot(x: Interval): PresentedSlot {
  return { start: isoUtc(x.start), end: isoUtc(x.end) };
}

/** The local date (YYYY-MM-DD) in `zone` of instant `ms`. */
export function localDate(zone: string, ms: number): string {
  return isoUtc(toWall(zone, ms)).slice(0, 10);
}

/** Slots grouped by the local date of their start in `zone`, in order. */
export function groupByDay(
  slots: readonly Interval[],
  zone: string,
): { date: string; slots: PresentedSlot[] }[] {
  const days: { date: string; slots: PresentedSlot[] }[] = [];
  for (const s of slots) {
    const date = localDate(zone, s.start);
    const last = days[days.length - 1];
    if (last && last.date === date) last.slots.push(presentSlot(s));
    else days.push({ date, slots: [presentSlot(s)] });
  }
  return days;
}

/** The answer of GET /v1/availability/slots before rendering. */
export interface SlotsResult {
  principal_id: string;
  duration_minutes: number;
  timezone: string;
  stale: boolean;
  /** When stale: when the oldest busy time used was read (ISO); null when everything was fresh. */
  busy_as_of: string | null;
  group_by_day: boolean;
  slots: readonly Interval[];
}

/** The answer as plain objects: `slots`, or `days` with group_by_day. */
export function presentSlots(r: SlotsResult) {
  const head = {
    principal_id: r.principal_id,
    duration_minutes: r.duration_minutes,
    timezone: r.timezone,
    stale: r.stale,
    busy_as_of: r.busy_as_of,
  };
  return r.group_by_day
    ? { ...head, days: groupByDay(r.slots, r.timezone) }
    : { ...head, slots: r.slots.map(presentSlot) };
}

/** The members of a booking link's slots answer before its slots. */
export interface LinkSlotsHead {
  duration_minutes: number;
  timezone: string;
  stale: boolean;
  busy_as_of: string | null;
}

/** A booking link's slots (public surface): the slots shape without any principal id. */
export function linkSlotsJson(r: LinkSlotsHead & { slots: readonly Interval[] }): Buffer {
  return slotList(r.slots, 0, r.slots.length, linkHead(r), ']}');
}

/**
 * A seated link's slots: each with `seats_remaining` (after `start` and `end`) when the link shows
 * what remains, else exactly the shape of `linkSlotsJson`. Seated links are few: their slots are
 * written as they come, without the remembered texts of `slotList`.
 */
export function linkSeatSlotsJson(
  r: LinkSlotsHead & { slots: readonly (Interval & { seatsRemaining: number })[] },
  showRemaining: boolean,
): Buffer {
  if (!showRemaining) return linkSlotsJson(r);
  const parts = new Array<string>(r.slots.length);
  for (let i = 0; i < r.slots.length; i++) {
    const s = r.slots[i]!;
    parts[i] =
      `{"start":"${isoUtc(s.start)}","end":"${isoUtc(s.end)}","seats_remaining":${s.seatsRemaining}}`;
  }
  const text = `${linkHead(r)}${parts.join(',')}]}`;
  // A buffer of its own (never a slice of Node's shared pool), as slotList's: answers are remembered.
  const out = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  out.write(text, 0);
  return out;
}

/** A link's slots answer up to the opening of its slot list. */
function linkHead(r: LinkSlotsHead): string {
  return (
    `{"duration_minutes":${r.duration_minutes},"timezone":${JSON.stringify(r.timezone)},` +
    `"stale":${r.stale},"busy_as_of":${asOfJson(r.busy_as_of, undefined)},"slots":[`
  );
}

/** One instant in UTC, or with the offset of `offsetsIn` (see the top of this file). */
function instant(ms: number, offsetsIn: string | undefined): string {
  return offsetsIn === undefined ? isoUtc(ms) : isoInZone(ms, offsetsIn);
}

/** `busy_as_of` as JSON: null, or the ISO instant (no character of it needs escaping). */
function asOfJson(asOf: string | null, offsetsIn: string | undefined): string {
  if (asOf === null) return 'null';
  return offsetsIn === undefined ? `"${asOf}"` : `"${isoInZone(Date.parse(asOf), offsetsIn)}"`;
}

/** The members of a slots answer before its slots, without the closing brace. */
function answerHead(r: Omit<SlotsResult, 'slots' | 'group_by_day'>, offsetsIn: string | undefined): string {
  return (
    `{"principal_id":${JSON.stringify(r.principal_id)},"duration_minutes":${r.duration_minutes},` +
    `"timezone":${JSON.stringify(r.timezone)},"stale":${r.stale},"busy_as_of":${asOfJson(r.busy_as_of, offsetsIn)}`
  );
}

/** A slots answer without group_by_day, split around its slot list: its text is head + slots + tail. */
export function slotsFrame(
  r: Omit<SlotsResult, 'slots' | 'group_by_day'>,
  offsetsIn?: string,
): { head: string; tail: string } {
  return { head: `${answerHead(r, offsetsIn)},"slots":[`, tail: ']}' };
}

/** The same answer as JSON text (see the top of this file). */
export function slotsJson(r: SlotsResult, offsetsIn?: string): string {
  return slotsBytes(r, offsetsIn).toString();
}

/** The same answer as the bytes of its JSON text, as sent (see the top of this file). */
export function slotsBytes(r: SlotsResult, offsetsIn?: string): Buffer {
  if (!r.group_by_day) {
    const { head, tail } = slotsFrame(r, offsetsIn);
    return slotList(r.slots, 0, r.slots.length, head, tail, offsetsIn);
  }
  const head = answerHead(r, offsetsIn);
  const days: string[] = [];
  let i = 0;
  while (i < r.slots.length) {
    const date = localDate(r.timezone, r.slots[i]!.start);
    let j = i + 1;
    while (j < r.slots.length && localDate(r.timezone, r.slots[j]!.start) === date) j++;
    days.push(
      `{"date":"${date}","slots":[${slotList(r.slots, i, j, '', '', offsetsIn).toString('latin1')}]}`,
    );
    i = j;
  }
  return Buffer.from(`${head},"days":[${days.join(',')}]}`);
}

/**
 * Rendered `{"start":…,"end":…}` texts as bytes, a pure memo: by the zone whose offsets they carry
 * (`''`: UTC) and slot length in minutes, then UTC day,
 * an array indexed by the minute of the day the slot starts (small-integer keys and array slots: much
 * cheaper than keying on epoch milliseconds). Slots of every principal lie on grids of local quarter
 * hours and the like, so the same texts come back request after request. An answer is assembled by
 * copying them into one buffer: joining hundreds of strings and encoding the result when it is sent
 * cost about twice as much (measured in docs/performance.md, "Reads"). Bounded by MAX_FRAGMENTS texts.
 */
const fragments = new Map<string, Map<number, (Buffer | undefined)[]>>();
let fragmentCount = 0;
const MAX_FRAGMENTS = 50_000;
const COMMA = 44;

/**
 * `head`, the slots [from, to) rendered and separated by commas, then `tail`, in one buffer of its own
 * (never a slice of Node's shared pool: remembered answers would keep whole pool blocks alive).
 */
function slotList(
  slots: readonly Interval[],
  from: number,
  to: number,
  head = '',
  tail = '',
  offsetsIn?: string,
): Buffer {
  const parts = new Array<Buffer>(to - from);
  let size = to > from ? to - from - 1 : 0;
  let day = Number.NaN;
  let length = Number.NaN;
  let texts: (Buffer | undefined)[] = [];
  for (let i = from; i < to; i++) {
    const s = slots[i]!;
    const d = Math.floor(s.start / DAY);
    const minute = (s.start - d * DAY) / MINUTE;
    const len = (s.end - s.start) / MINUTE;
    let text: Buffer | undefined;
    if (!Number.isInteger(minute) || !Number.isInteger(len)) {
      text = zonedSlot(s, offsetsIn); // not on whole minutes: not remembered
    } else {
      if (d !== day || len !== length) {
        day = d;
        length = len;
        texts = textsOf(offsetsIn, len, d);
      }
      text = texts[minute];
      if (text === undefined) {
        if (fragmentCount >= MAX_FRAGMENTS) {
          fragments.clear();
          fragmentCount = 0;
          texts = textsOf(offsetsIn, len, d);
        }
        text = zonedSlot(s, offsetsIn);
        texts[minute] = text;
        fragmentCount++;
      }
    }
    parts[i - from] = text;
    size += text.length;
  }
  const headBytes = Buffer.byteLength(head);
  const out = Buffer.allocUnsafeSlow(headBytes + size + Buffer.byteLength(tail));
  let at = out.write(head, 0);
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) out[at++] = COMMA;
    const part = parts[i]!;
    out.set(part, at);
    at += part.length;
  }
  out.write(tail, at);
  return out;
}

function textsOf(offsetsIn: string | undefined, lengthMinutes: number, day: number): (Buffer | undefined)[] {
  const key = `${offsetsIn ?? ''}|${lengthMinutes}`;
  let byDay = fragments.get(key);
  if (byDay === undefined) {
    byDay = new Map();
    fragments.set(key, byDay);
  }
  let texts = byDay.get(day);
  if (texts === undefined) {
    texts = [];
    byDay.set(day, texts);
  }
  return texts;
}

/** One slot's `{"start":…,"end":…}` text, as bytes. */
export function renderSlot(s: Interval): Buffer {
  return zonedSlot(s, undefined);
}

/** One slot's text in UTC, or with the offsets of `offsetsIn`. */
function zonedSlot(s: Interval, offsetsIn: string | undefined): Buffer {
  return Buffer.from(
    `{"start":"${instant(s.start, offsetsIn)}","end":"${instant(s.end, offsetsIn)}"}`,
    'latin1',
  );
}
