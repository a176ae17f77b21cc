/**
 * The bookings page's series and seats: an occurrence's place in its series ("Series · 3 of 10") and
 * how it repeats, the series' occurrences (GET /v1/booking-series/{id}), cancelling an occurrence with
 * its scope (this one, this and the following, the whole series) after a confirmation, and a seat of a
 * seated link marked with its session's seats as the list shows them.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { failure, kairos } from '../lib/api.js';
import { FormError, when } from '../lib/ui.js';

export type Frequency = 'daily' | 'weekly' | 'monthly';
export type Scope = 'single' | 'following' | 'series';

export interface Occurrence {
  booking_id: string;
  start_time: string;
  end_time: string;
  status: string;
}

/** GET /v1/booking-series/{id}'s `series`, as far as the console reads it. */
export interface Series {
  id: string;
  recurrence: { frequency: Frequency; interval: number; count: number; timezone: string };
  occurrences: Occurrence[];
}

/** What a listed booking says of its series and its seat (null or absent: neither). */
export interface SeriesAndSeat {
  id: string;
  series_id?: string | null;
  seat_session_id?: string | null;
  status: string;
}

const UNITS: Record<Frequency, [string, string]> = {
  daily: ['daily', 'days'],
  weekly: ['weekly', 'weeks'],
  monthly: ['monthly', 'months'],
};

/** "Repeats weekly", "Repeats every 2 weeks". */
export function repeats(r: Series['recurrence']): string {
  const [one, many] = UNITS[r.frequency] ?? [r.frequency, r.frequency];
  return r.interval > 1 ? `Repeats every ${r.interval} ${many}` : `Repeats ${one}`;
}

export function getSeries(id: string): Promise<Series> {
  return kairos
    .request<{ series: Series }>({ method: 'GET', path: `/v1/booking-series/${encodeURIComponent(id)}` })
    .then((r) => r.series);
}

/**
 * The series of the listed bookings, by id: each one read once whenever the list is loaded again (so
 * a cancellation's statuses show). A series that cannot be read is left out (its rows say "Series").
 */
export function useSeriesOf(items: readonly SeriesAndSeat[] | null): ReadonlyMap<string, Series> {
  const [byId, setById] = useState<ReadonlyMap<string, Series>>(new Map());
  useEffect(() => {
    if (!items) return;
    const ids = [...new Set(items.map((b) => b.series_id).filter((s): s is string => !!s))];
    if (ids.length === 0) return;
    let live = true;
    Promise.all(ids.map((id) => getSeries(id).catch(() => null))).then((all) => {
      if (live) setById(new Map(all.filter((s): s is Series => s !== null).map((s) => [s.id, s])));
    });
    return () => {
      live = false;
    };
  }, [items]);
  return byId;
}

/** The live seats of each seat session among the listed bookings. */
export function seatsListed(items: readonly SeriesAndSeat[] | null): ReadonlyMap<string, number> {
  const n = new Map<string, number>();
  for (const b of items ?? []) {
    if (!b.seat_session_id || (b.status !== 'confirmed' && b.status !== 'pending_payment')) continue;
    n.set(b.seat_session_id, (n.get(b.seat_session_id) ?? 0) + 1);
  }
  return n;
}

/** The row's badges: "Series · 3 of 10" (or "Series" before the series is read), "Seat". */
export function Badges(p: { b: SeriesAndSeat; series: Series | undefined }): VNode | null {
  const b = p.b;
  if (!b.series_id && !b.seat_session_id) return null;
  const at = p.series ? p.series.occurrences.findIndex((o) => o.booking_id === b.id) : -1;
  const label = at >= 0 && p.series ? `Series · ${at + 1} of ${p.series.occurrences.length}` : 'Series';
  return html`${b.series_id ? html`<span class="badge series">${label}</span>` : null}${
    b.seat_session_id ? html`<span class="badge seat">Seat</span>` : null
  }`;
}

/** A seat's line: its group session and the seats of it the list shows (of the link's capacity). */
export function SeatLine(p: { listed: number; capacity: number | undefined }): VNode {
  const of = p.capacity ? ` of ${p.capacity}` : '';
  return html`<p class="hint seat-line">Group session: ${p.listed}${of} seat${p.listed === 1 && !of ? '' : 's'} booked in this list</p>`;
}

/** How the series repeats and, expanded, every occurrence with its status (this one marked). */
export function SeriesOccurrences(p: { b: SeriesAndSeat; series: Series | undefined; who: string }): VNode {
  const [open, setOpen] = useState(false);
  const [series, setSeries] = useState<Series | undefined>(p.series);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => setSeries(p.series), [p.series]);
  const id = `occurrences-${p.b.id}`;
  const toggle = () => {
    const next = !open;
    setOpen(next);
    // Read again when opened: what another tab or the attendee changed shows.
    if (next && p.b.series_id) {
      setError(null);
      getSeries(p.b.series_id)
        .then(setSeries)
        .catch((err) => setError(failure(err).message));
    }
  };
  return html`<div class="series">
    ${series ? html`<p class="hint">${repeats(series.recurrence)} · ${series.occurrences.length} occurrences</p>` : null}
    <button type="button" class="secondary" aria-expanded=${open} aria-controls=${id} onClick=${toggle}>${open ? 'Hide occurrences' : 'Occurrences'}<span class="sr"> of the series with ${p.who}</span></button>
    <div id=${id} hidden=${!open}>
      <${FormError} message=${error} />
      ${open && !series && !error ? html`<p role="status">Loading the series…</p>` : null}
      ${
        open && series
          ? html`<ol class="occurrences" aria-label="Occurrences of the series">
              ${series.occurrences.map(
                (o) =>
                  html`<li key=${o.booking_id} aria-current=${o.booking_id === p.b.id ? 'true' : undefined}>${when(o.start_time)} <span class=${`badge ${o.status}`}>${o.status.replace('_', ' ')}</span>${o.booking_id === p.b.id ? html` <strong>(this one)</strong>` : null}</li>`,
              )}
            </ol>`
          : null
      }
    </div>
  </div>`;
}

/** Each scope: its choice, what it cancels (the API's rule), its confirm button. */
const SCOPES: readonly (readonly [Scope, string, string, string])[] = [
  ['single', 'This one', 'Only this occurrence; the others stay booked.', 'Cancel the booking'],
  [
    'following',
    'This and following',
    'This occurrence and every later one still booked.',
    'Cancel this and the following',
  ],
  [
    'series',
    'The whole series',
    'Every occurrence still to come, this one included; past ones stay as they were.',
    'Cancel the whole series',
  ],
];

/**
 * Cancelling an occurrence of a series: the Confirm pattern (a modal dialog; Escape or "Cancel" closes
 * it) with the scope chosen by radio buttons (arrow keys move between them), "This one" first.
 */
export function CancelOccurrence(p: {
  b: SeriesAndSeat;
  who: string;
  body: string;
  onCancelled: () => void;
}): VNode {
  const ref = useRef<HTMLDialogElement>(null);
  const [scope, setScope] = useState<Scope>('single');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = `cancel-${p.b.id}`;
  const show = () => {
    setScope('single');
    setError(null);
    ref.current?.showModal();
  };
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      // `scope` is the query parameter of DELETE /v1/bookings/{id} (docs/api.md#recurring-series).
      const query = { reason: 'Cancelled from the console', scope };
      await kairos.bookings.cancel(p.b.id, query as Parameters<typeof kairos.bookings.cancel>[1]);
      ref.current?.close();
      p.onCancelled();
    } catch (err) {
      setError(failure(err).message);
    } finally {
      setBusy(false);
    }
  };
  const chosen = SCOPES.find(([s]) => s === scope) ?? SCOPES[0];
  return html`<button type="button" class="danger" onClick=${show}>Cancel booking<span class="sr"> with ${p.who}</span></button>
    <dialog ref=${ref} aria-labelledby=${`${id}-title`}>
      <h2 id=${`${id}-title`}>Cancel an occurrence of a series?</h2>
      <fieldset aria-describedby=${`${id}-what`}>
        <legend>Which occurrences</legend>
        ${SCOPES.map(
          ([s, label]) =>
            html`<label class="choice" key=${s}><input type="radio" name=${`${id}-scope`} value=${s} checked=${scope === s} onChange=${() => setScope(s)} /> ${label}</label>`,
        )}
      </fieldset>
      <p class="hint" id=${`${id}-what`}>${chosen?.[2]}</p>
      <p>${p.body}</p>
      <${FormError} message=${error} />
      <div class="actions">
        <button type="button" class="secondary" onClick=${() => ref.current?.close()}>Cancel</button>
        <button type="button" class="danger" disabled=${busy} onClick=${confirm}>${chosen?.[3]}</button>
      </div>
    </dialog>`;
}
