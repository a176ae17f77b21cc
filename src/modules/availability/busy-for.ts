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
  only?: BusySource['name'];
  unclipped?: boolean;
}

/** Busy time of one principal, per source kind, inside the asked window. */
export interface PrincipalBusy {
  calendar: readonly Interval[];
  booking: readonly Interval[];
  /** Each kind's whole known list, when one source answered with one (BusyAnswer.whole). */
  whole: { calendar?: WholeBusy; booking?: WholeBusy };
}

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
  const sources = opts.only === undefined ? all : all.filter((s) => s.name === opts.only);
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
    const entry: PrincipalBusy = { calendar: NO_BUSY, booking: NO_BUSY, whole: {} };
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
      const list = entry[source.name];
      entry[source.name] = list.length === 0 ? answer.intervals : union(list, answer.intervals);
      entry.whole[source.name] = ++answered[source.name] === 1 ? answer.whole : undefined;
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
