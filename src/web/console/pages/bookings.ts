/**
 * Bookings: filter by status, host, booking link and date range; each booking's details (paid ones with their
 * payment state); cancel after a confirmation (an occurrence of a series: this one, this and the
 * following, or the whole series); reschedule to one of the host's real free slots. An occurrence shows
 * its place in its series and the series' occurrences, a seat its group session (pages/series.ts).
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { failure, kairos } from '../lib/api.js';
import { ListPanel, usePaged } from '../lib/list.js';
import { Confirm, FormError, when } from '../lib/ui.js';
import {
  Badges,
  CancelOccurrence,
  type Series,
  SeatLine,
  SeriesOccurrences,
  seatsListed,
  useSeriesOf,
} from './series.js';

/** A listed booking; `series_id` and `seat_session_id` written out for an SDK made before them. */
type Booking = Item<Result<'listBookings'>> & { series_id?: string | null; seat_session_id?: string | null };
const LISTED = 'kairos:bookings-listed';
type Host = Item<Result<'listHosts'>>;
type Link = Item<Result<'listBookingLinks'>> & { seats?: { capacity: number } | null };
type Status = 'pending_payment' | 'confirmed' | 'cancelled' | 'expired';
interface Filters {
  status: Status | '';
  host: string;
  link: string;
  from: string;
  to: string;
}
interface Slot {
  start: string;
  end: string;
}

const STATUSES: readonly (readonly [Status | '', string])[] = [
  ['', 'Any status'],
  ['confirmed', 'Confirmed'],
  ['pending_payment', 'Awaiting payment'],
  ['cancelled', 'Cancelled'],
  ['expired', 'Expired'],
];

function money(amount: number, currency: string | null): string {
  try {
    return new Intl.NumberFormat(undefined, {
      style: 'currency',
      currency: (currency ?? 'USD').toUpperCase(),
    }).format(amount / 100);
  } catch {
    return `${amount / 100} ${currency ?? ''}`;
  }
}

function Payment(p: { b: Booking }): VNode | null {
  const b = p.b;
  if (b.payment_amount === null) return null;
  const state =
    b.status === 'pending_payment'
      ? `awaiting payment until ${when(b.payment_expires_at)}`
      : b.refund_status
        ? `refund ${b.refund_status}`
        : b.status === 'expired'
          ? 'not paid in time'
          : 'paid';
  return html`<div><dt>Payment</dt><dd>${money(b.payment_amount, b.payment_currency)} — ${state}</dd></div>`;
}

/** The day (YYYY-MM-DD, local) of an instant. */
function dayOf(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function Reschedule(p: { b: Booking; onDone: () => void; onClose: () => void }): VNode {
  const b = p.b;
  const minutes = Math.round((Date.parse(b.end_time) - Date.parse(b.start_time)) / 60_000);
  const [day, setDay] = useState(dayOf(b.start_time));
  const [slots, setSlots] = useState<Slot[] | null>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setSlots(null);
    setChosen(null);
    const from = new Date(`${day}T00:00:00`);
    const to = new Date(from.getTime() + 86_400_000);
    const now = Date.now();
    kairos.availability
      .slots({
        principal_id: b.principal_id,
        duration_minutes: minutes,
        from: new Date(Math.max(from.getTime(), now)).toISOString(),
        to: to.toISOString(),
      })
      .then((r) => setSlots((r as { slots?: Slot[] }).slots ?? []))
      .catch((err) => {
        setSlots([]);
        setError(failure(err).message);
      });
  }, [day]);
  const move = async () => {
    if (!chosen) return;
    setBusy(true);
    setError(null);
    try {
      await kairos.bookings.reschedule(b.id, { start_time: chosen });
      p.onDone();
    } catch (err) {
      setError(failure(err).message);
      setBusy(false);
    }
  };
  const id = `reschedule-${b.id}`;
  return html`<fieldset class="reschedule">
    <legend>Reschedule to a free time</legend>
    <label for=${`${id}-day`}>Day</label>
    <input id=${`${id}-day`} type="date" value=${day} onChange=${(e: Event) => setDay((e.currentTarget as HTMLInputElement).value)} />
    ${slots === null ? html`<p role="status">Loading the free times…</p>` : null}
    ${slots?.length === 0 ? html`<p>No free time that day: pick another day.</p>` : null}
    ${
      slots && slots.length > 0
        ? html`<div class="slots" role="radiogroup" aria-label="Free times">
            ${slots.map(
              (s) =>
                html`<label class="choice" key=${s.start}><input type="radio" name=${`${id}-slot`} value=${s.start} checked=${chosen === s.start} onChange=${() => setChosen(s.start)} /> ${new Date(s.start).toLocaleTimeString(undefined, { timeStyle: 'short' })}</label>`,
            )}
          </div>`
        : null
    }
    <${FormError} message=${error} />
    <div class="actions start">
      <button type="button" disabled=${!chosen || busy} onClick=${move}>${busy ? 'Moving…' : 'Move the booking'}</button>
      <button type="button" class="secondary" onClick=${p.onClose}>Cancel</button>
    </div>
  </fieldset>`;
}

function BookingRow(p: {
  b: Booking;
  hosts: Map<string, string>;
  links: Map<string, string>;
  series: Series | undefined;
  /** A seat: its session's live seats in this list, and its link's capacity where known. */
  seats?: { listed: number; capacity: number | undefined } | undefined;
  onChanged: () => void;
}): VNode {
  const b = p.b;
  const [open, setOpen] = useState(false);
  const [moving, setMoving] = useState(false);
  const hostNames = b.host_ids.map((h) => p.hosts.get(h) ?? h).join(', ');
  const live = b.status === 'confirmed' || b.status === 'pending_payment';
  const told = `${b.customer_name} is told by e-mail${b.payment_amount !== null ? ', and a paid booking is refunded' : ''}. This cannot be undone.`;
  return html`<li class=${`row booking${b.seat_session_id ? ' seat' : ''}`} data-session=${b.seat_session_id ?? undefined}>
    <div class="row-head"><h3>${when(b.start_time)} — ${b.title ?? 'Booking'}</h3><span class=${`badge ${b.status}`}>${b.status.replace('_', ' ')}</span><${Badges} b=${b} series=${p.series} /></div>
    <p class="hint">${b.customer_name} · ${b.customer_email}</p>
    ${p.seats ? html`<${SeatLine} listed=${p.seats.listed} capacity=${p.seats.capacity} />` : null}
    ${b.series_id ? html`<${SeriesOccurrences} b=${b} series=${p.series} who=${b.customer_name} />` : null}
    <div class="actions start">
      <button type="button" aria-expanded=${open} onClick=${() => setOpen(!open)}>${open ? 'Hide details' : 'Details'}<span class="sr"> of the booking with ${b.customer_name}</span></button>
      ${b.status === 'confirmed' ? html`<button type="button" onClick=${() => setMoving(true)} disabled=${moving}>Reschedule</button>` : null}
      ${
        live && b.series_id
          ? html`<${CancelOccurrence} b=${b} who=${b.customer_name} body=${told} onCancelled=${p.onChanged} />`
          : null
      }
      ${
        live && !b.series_id
          ? html`<${Confirm}
              id=${`cancel-${b.id}`}
              label="Cancel booking"
              labelSuffix=${`with ${b.customer_name}`}
              danger=${true}
              title="Cancel this booking?"
              body=${told}
              confirmLabel="Cancel the booking"
              onConfirm=${async () => {
                await kairos.bookings.cancel(b.id, { reason: 'Cancelled from the console' });
                p.onChanged();
              }}
            />`
          : null
      }
    </div>
    ${moving ? html`<${Reschedule} b=${b} onDone=${p.onChanged} onClose=${() => setMoving(false)} />` : null}
    ${
      open
        ? html`<dl class="facts">
            <div><dt>Starts</dt><dd>${when(b.start_time)}</dd></div>
            <div><dt>Ends</dt><dd>${when(b.end_time)}</dd></div>
            <div><dt>Hosts</dt><dd>${hostNames}</dd></div>
            <div><dt>Booking link</dt><dd>${b.booking_link_id ? (p.links.get(b.booking_link_id) ?? b.booking_link_id) : '—'}</dd></div>
            ${b.series_id ? html`<div><dt>Series</dt><dd><code>${b.series_id}</code></dd></div>` : null}
            ${b.seat_session_id ? html`<div><dt>Seat session</dt><dd><code>${b.seat_session_id}</code></dd></div>` : null}
            <div><dt>Attendee’s zone</dt><dd>${b.customer_timezone ?? '—'}</dd></div>
            <div><dt>Notes</dt><dd>${b.notes ?? '—'}</dd></div>
            ${Object.entries(b.answers).map(([k, v]) => html`<div key=${k}><dt>${k}</dt><dd>${String(v)}</dd></div>`)}
            <${Payment} b=${b} />
            ${b.cancelled_at ? html`<div><dt>Cancelled</dt><dd>${when(b.cancelled_at)}${b.cancellation_reason ? ` — ${b.cancellation_reason}` : ''}</dd></div>` : null}
            <div><dt>Id</dt><dd><code>${b.id}</code></dd></div>
          </dl>`
        : null
    }
  </li>`;
}

export function Bookings(): VNode {
  // `?link=<id>` (the booking links page's "Bookings" link) opens the list filtered to that link.
  const [filters, setFilters] = useState<Filters>(() => ({
    status: '',
    host: '',
    link: new URLSearchParams(location.search).get('link') ?? '',
    from: '',
    to: '',
  }));
  const [hosts, setHosts] = useState<Host[]>([]);
  const [links, setLinks] = useState<Link[]>([]);
  useEffect(() => {
    kairos.hosts
      .list({ limit: 100 })
      .page()
      .then((r) => setHosts(r.hosts))
      .catch(() => {});
    kairos.bookingLinks
      .list({ limit: 100 })
      .page()
      .then((r) => setLinks(r.booking_links))
      .catch(() => {});
  }, []);
  const list = usePaged(
    (cursor) => {
      const q: Record<string, string | number> = { limit: 20 };
      if (filters.status) q.status = filters.status;
      if (filters.host) q.principal_id = filters.host;
      if (filters.link) q.booking_link_id = filters.link;
      if (filters.from) q.from = new Date(`${filters.from}T00:00:00`).toISOString();
      if (filters.to)
        q.to = new Date(new Date(`${filters.to}T00:00:00`).getTime() + 86_400_000).toISOString();
      return kairos.bookings
        .list(q as Parameters<typeof kairos.bookings.list>[0])
        .page(cursor)
        .then((r) => ({ items: r.bookings, pagination: r.pagination }));
    },
    [filters],
  );
  const apply = (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    setFilters({
      status: String(f.get('status') ?? '') as Filters['status'],
      host: String(f.get('host') ?? ''),
      link: String(f.get('link') ?? ''),
      from: String(f.get('from') ?? ''),
      to: String(f.get('to') ?? ''),
    });
    list.reset();
  };
  useEffect(() => {
    // What `npm run bench -- console` times: the first booking listed, from the start of navigation.
    if (list.items?.length && performance.getEntriesByName(LISTED).length === 0) performance.mark(LISTED);
  }, [list.items]);
  const names = new Map(hosts.map((h) => [h.principal_id, h.display_name]));
  const titles = new Map(links.map((l) => [l.id, l.title]));
  const capacities = new Map(links.map((l) => [l.id, l.seats?.capacity]));
  const series = useSeriesOf(list.items);
  const listed = seatsListed(list.items);
  const seatsOf = (b: Booking) =>
    b.seat_session_id
      ? {
          listed: listed.get(b.seat_session_id) ?? 0,
          capacity: b.booking_link_id ? capacities.get(b.booking_link_id) : undefined,
        }
      : undefined;
  return html`<section class="panel" aria-labelledby="filter-title">
      <h2 id="filter-title">Filter</h2>
      <form class="filters" onSubmit=${apply}>
        <div class="field"><label for="f-status">Status</label>
          <select id="f-status" name="status">${STATUSES.map(([v, l]) => html`<option value=${v} key=${v}>${l}</option>`)}</select></div>
        <div class="field"><label for="f-host">Host</label>
          <select id="f-host" name="host"><option value="">Any host</option>${hosts.map((h) => html`<option value=${h.principal_id} key=${h.principal_id}>${h.display_name}</option>`)}</select></div>
        <div class="field"><label for="f-link">Booking link</label>
          <select id="f-link" name="link"><option value="">Any link or none</option>${links.map((l) => html`<option value=${l.id} key=${l.id} selected=${filters.link === l.id}>${l.title} (/${l.slug})</option>`)}</select></div>
        <div class="field"><label for="f-from">From</label><input id="f-from" name="from" type="date" /></div>
        <div class="field"><label for="f-to">To</label><input id="f-to" name="to" type="date" /></div>
        <button type="submit">Show bookings</button>
      </form>
    </section>
    <${ListPanel}
      title="Bookings"
      list=${list}
      loading="Loading the bookings…"
      empty=${html`<p>No booking matches. Share a booking link, or widen the filter.</p>`}
      row=${(b: Booking) =>
        html`<${BookingRow} key=${`${b.id}-${b.updated_at}`} b=${b} hosts=${names} links=${titles} series=${b.series_id ? series.get(b.series_id) : undefined} seats=${seatsOf(b)} onChanged=${list.reload} />`}
    />`;
}
