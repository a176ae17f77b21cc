/**
 * Busy time of principals from the contributed busy sources (extension point `busySources`), as
 * availability asks for it: in the caller's mode (docs/api.md#test-mode), all sources at once.
 */
import type { Interval } from '../../lib/intervals.js';
import { union } from '../../lib/intervals.js';
import { AppError } from '../../platform/errors.js';
import type { PrincipalProfile } from '../principals/api.js';
import type { BusyAnswer, BusySource, WholeBusy } from './api.js';
import { EVERYWHERE_FREE, NO_BUSY } from './rules.js';

/** How `busyFor` asks: in the caller's mode, whole lists or cut, which sources. */
export interface BusyFor {
  livemode: boolean;
  requireCalendar?: boolean;
  /** Only these sources (by name). */
  only?: BusySource['name'] | readonly BusySource['name'][];
  unclipped?: boolean;
}

/** Busy time of one principal, per source kind, inside the asked window. */
export interface PrincipalBusy {
  /** Calendar busy time and out-of-office ranges (both kept clear with the schedule's buffers). */
  calendar: readonly Interval[];
  booking: readonly Interval[];
  /** The out-of-office ranges alone (also in `calendar`): for blocks and refusals. */
  outOfOffice: readonly Interval[];
  /** Each kind's whole known list, when one source answered with one (BusyAnswer.whole). */
  whole: { calendar?: WholeBusy; booking?: WholeBusy };
}

/** The kind each source's busy time is counted as: out-of-office ranges are busy as calendar time is. */
const KIND: Record<BusySource['name'], 'calendar' | 'booking'> = {
  calendar: 'calendar',
  booking: 'booking',
  out_of_office: 'calendar',
};

/**
 * Busy time of each principal (principal i over windows[i]) from every registered source, all asked
 * at once. A principal the calendar source does not know (no connected calendar) is 404; a source
 * that fails with nothing cached propagates its ServiceUnavailable (503, naming the failed
 * calendar), never "all free". `busyAsOf`: when any answer is stale, the oldest `asOf` among the
 * stale answers (when that busy time was read from its provider); null when all are fresh. Memo
 * keys carry it in place of `stale`, so a remembered answer never shows another read's age.
 */
export async function busyFor(
  all: readonly BusySource[],
  ps: readonly PrincipalProfile[],
  windows: readonly Interval[],
  opts: BusyFor,
): Promise<{ busy: PrincipalBusy[]; stale: boolean; busyAsOf: number | null }> {
  const only = opts.only;
  const sources =
    only === undefined
      ? all
      : all.filter((s) => (typeof only === 'string' ? s.name === only : only.includes(s.name)));
  const requireCalendar = opts.requireCalendar ?? true;
  const asking = { unclipped: opts.unclipped === true, livemode: opts.livemode };
  const asks = ps.flatMap((p, i) => sources.map((s) => s.busy(p.id, windows[i]!, asking)));
  const settled = await Promise.allSettled(asks);
  const busy: PrincipalBusy[] = [];
  let stale = false;
  let busyAsOf: number | null = null;
  let failure: unknown = null;
  for (let i = 0; i < ps.length; i++) {
    // One shared empty list: a fresh [] per request would give memo keys a new id every time.
    const entry: PrincipalBusy = { calendar: NO_BUSY, booking: NO_BUSY, outOfOffice: NO_BUSY, whole: {} };
    // A kind no source answered for has no busy time anywhere; one answered for twice has no single list.
    const answered = { calendar: 0, booking: 0 };
    let calendarKnown = false;
    for (let j = 0; j < sources.length; j++) {
      const r = settled[i * sources.length + j]!;
      const source = sources[j]!;
      if (r.status === 'rejected') {
        failure ??= r.reason;
        continue;
      }
      const answer: BusyAnswer | null = r.value;
      if (answer === null) continue;
      if (source.name === 'calendar') calendarKnown = true;
      if (answer.stale) {
        stale = true;
        if (busyAsOf === null || answer.asOf < busyAsOf) busyAsOf = answer.asOf;
      }
      const kind = KIND[source.name];
      const list = entry[kind];
      entry[kind] = list.length === 0 ? answer.intervals : union(list, answer.intervals);
      entry.whole[kind] = ++answered[kind] === 1 ? answer.whole : undefined;
      if (source.name === 'out_of_office') {
        const away = entry.outOfOffice;
        entry.outOfOffice = away.length === 0 ? answer.intervals : union(away, answer.intervals);
      }
    }
    for (const kind of ['calendar', 'booking'] as const) {
      if (answered[kind] === 0) entry.whole[kind] = EVERYWHERE_FREE;
    }
    const calendarFailed = sources.some(
      (s, j) => s.name === 'calendar' && settled[i * sources.length + j]!.status === 'rejected',
    );
    if (requireCalendar && !calendarKnown && !calendarFailed) {
      throw new AppError(
        404,
        'not-found',
        ps.length > 1
          ? `The principal ${ps[i]!.id} has no connected calendar`
          : 'The principal has no connected calendar',
        { code: 'calendar_not_connected' },
      );
    }
    busy.push(entry);
  }
  if (failure !== null) throw failure;
  return { busy, stale, busyAsOf };
}
