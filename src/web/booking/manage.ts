/**
 * The attendee's page, `/b/{token}` (docs/api.md#e-mail-and-pages): the booking, a new time
 * (reschedule) or a cancellation with a reason. Talks to `/v1/public/bookings/{token}`, `/cancel`,
 * `/reschedule`, and to the link's `/availability` for the new time. The token stays in the path:
 * the page sends no Referer (Referrer-Policy: no-referrer) and loads nothing from elsewhere. Inside
 * the embed's iframe it tells the embedding page of a reschedule or cancellation (shared/embed.ts).
 * An occurrence of a recurring series (`series_id`) cancels with a scope: only this one, this and the
 * following, or all remaining (radio buttons: Tab to the group, arrows to choose).
 */
import { html } from 'htm/preact';
import { render, type VNode } from 'preact';
import { useState } from 'preact/hooks';
import { api, type PublicBooking, type Slot, slotFull, slotTaken } from './shared/api.js';
import { emit, publicFields } from './shared/embed.js';
import { SlotPicker } from './shared/picker.js';
import { detectedZone, timeLabel, whenLabel, zoneLabel } from './shared/time.js';
import { CalendarLink, focusSoon, pageData, Summary, ZoneSelect } from './shared/ui.js';

interface Data {
  /** The link's slug when the booking was made through one (rescheduling needs its free times). */
  slug: string | null;
}

type Mode = 'view' | 'reschedule' | 'cancel';

type Scope = 'single' | 'following' | 'series';

/** The cancel scopes of an occurrence of a series (docs/api.md#recurring-series), as the page says them. */
const SCOPES: { value: Scope; label: string; done: string }[] = [
  {
    value: 'single',
    label: 'Only this one',
    done: 'This booking is cancelled; the other dates of the series stay.',
  },
  {
    value: 'following',
    label: 'This and the following',
    done: 'This booking and the following dates of the series are cancelled.',
  },
  { value: 'series', label: 'All remaining', done: 'Every remaining date of the series is cancelled.' },
];

function App(p: { token: string; initial: PublicBooking; slug: string | null }): VNode {
  const [booking, setBooking] = useState(p.initial);
  const [zone, setZone] = useState(detectedZone);
  const [mode, setMode] = useState<Mode>('view');
  const [picked, setPicked] = useState<Slot | null>(null);
  const [notice, setNotice] = useState('');
  const [message, setMessage] = useState('');
  const [failure, setFailure] = useState('');
  const [refresh, setRefresh] = useState(0);
  const [busy, setBusy] = useState(false);
  const path = `/v1/public/bookings/${p.token}`;
  const inSeries = Boolean(booking.series_id);
  const [chosenScope, setScope] = useState<Scope>('single');
  const live = booking.status === 'confirmed' || booking.status === 'pending_payment';
  const started = Date.parse(booking.start_time) <= Date.now();
  const minutes = Math.round((Date.parse(booking.end_time) - Date.parse(booking.start_time)) / 60_000);

  const to = (m: Mode, focus: string) => {
    setMode(m);
    setScope('single');
    setFailure('');
    setPicked(null);
    focusSoon(focus);
  };

  const reschedule = async () => {
    if (!picked) return;
    setBusy(true);
    const a = await api<{ booking: PublicBooking }>('POST', `${path}/reschedule`, {
      start_time: picked.start,
    });
    setBusy(false);
    if (a.ok) {
      setBooking(a.data.booking);
      emit('booking_rescheduled', { booking: publicFields(a.data.booking) });
      setMessage(
        `Your booking was moved to ${whenLabel(a.data.booking.start_time, a.data.booking.end_time, zone)}.`,
      );
      to('view', 'booking-h');
      return;
    }
    if (slotTaken(a.problem) || slotFull(a.problem)) {
      setNotice(
        slotFull(a.problem)
          ? `${timeLabel(picked.start, zone)} just filled up: every seat was taken just before you. The times shown still have seats.`
          : `Someone booked ${timeLabel(picked.start, zone)} just before you. The times shown are still free.`,
      );
      setPicked(null);
      setRefresh((n) => n + 1);
      focusSoon('month-h');
      return;
    }
    setFailure(a.problem.detail ?? 'The booking could not be moved.');
  };

  const cancel = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const reason = (form.elements.namedItem('reason') as HTMLTextAreaElement).value.trim();
    const scope = inSeries ? chosenScope : null;
    setBusy(true);
    const a = await api<{ booking: PublicBooking }>('POST', `${path}/cancel`, {
      ...(reason ? { reason } : {}),
      ...(scope ? { scope } : {}),
    });
    setBusy(false);
    if (!a.ok) {
      setFailure(a.problem.detail ?? 'The booking could not be cancelled.');
      return;
    }
    setBooking(a.data.booking);
    emit('booking_cancelled', { booking: publicFields(a.data.booking) });
    const said = SCOPES.find((x) => x.value === scope)?.done ?? 'Your booking is cancelled.';
    setMessage(`${said} Everyone involved has been told.`);
    to('view', 'booking-h');
  };

  let actions: VNode | string = '';
  if (mode === 'view' && live && !started) {
    actions = html`<div class="actions">
      ${booking.status === 'confirmed' && html`<${CalendarLink} booking=${booking} manageUrl=${location.href} />`}
      ${booking.status === 'pending_payment' && booking.checkout_url && html`<a class="button" href=${booking.checkout_url}>Complete payment</a>`}
      ${p.slug && booking.status === 'confirmed' && html`<button type="button" onClick=${() => to('reschedule', 'resched-h')}>Reschedule</button>`}
      <button type="button" class="danger" onClick=${() => to('cancel', 'cancel-h')}>Cancel booking</button>
    </div>`;
  } else if (mode === 'view' && live && started) {
    actions = html`<p class="muted">This booking has started, so it can no longer be changed here.</p>`;
  }

  return html`<div class="card">
    <header class="head">
      <p class="eyebrow">Your booking</p>
      <h1 id="booking-h" tabindex="-1">${booking.title}</h1>
    </header>
    <main class="body">
      ${message && html`<p class="success" role="status">${message}</p>`}
      <${Summary} booking=${booking} zone=${zone} status=${true} />
      ${inSeries && html`<p class="muted">One date of a recurring series.</p>`}
      <div class="options"><${ZoneSelect} zone=${zone} onChange=${setZone} /></div>
      ${actions}
      ${
        mode === 'reschedule' &&
        p.slug &&
        html`<section aria-labelledby="resched-h" class="panel">
        <h2 id="resched-h" tabindex="-1">Pick a new time</h2>
        <${SlotPicker} slug=${p.slug} duration=${minutes} zone=${zone} refresh=${refresh} notice=${notice}
          picked=${picked?.start} onPick=${(s: Slot) => {
            setNotice('');
            setPicked(s);
            focusSoon('confirm-move');
          }} />
        ${failure && html`<p class="error" role="alert">${failure}</p>`}
        <div class="actions">
          <button type="button" id="confirm-move" disabled=${!picked || busy} onClick=${reschedule}>
            ${picked ? `Move to ${whenLabel(picked.start, picked.end, zone)}` : 'Pick a new time above'}
          </button>
          <button type="button" class="secondary" onClick=${() => to('view', 'booking-h')}>Keep the current time</button>
        </div>
        <p class="muted">Times are shown in ${zoneLabel(zone)}.</p>
      </section>`
      }
      ${
        mode === 'cancel' &&
        html`<form class="panel" onSubmit=${cancel} aria-labelledby="cancel-h">
        <h2 id="cancel-h" tabindex="-1">Cancel this booking</h2>
        ${failure && html`<p class="error" role="alert">${failure}</p>`}
        ${
          inSeries &&
          html`<fieldset class="scope">
          <legend>This booking is one of a series. Cancel:</legend>
          ${SCOPES.map(
            (x) => html`<label class="radio"><input type="radio" name="scope" value=${x.value}
              checked=${x.value === chosenScope} onChange=${() => setScope(x.value)} /> ${x.label}</label>`,
          )}
        </fieldset>`
        }
        <div class="field">
          <label for="reason">Reason (optional, shared with the host)</label>
          <textarea id="reason" name="reason" rows="3" maxlength="1000"></textarea>
        </div>
        <div class="actions">
          <button type="submit" class="danger" disabled=${busy}>${busy ? 'Cancelling…' : 'Cancel booking'}</button>
          <button type="button" class="secondary" onClick=${() => to('view', 'booking-h')}>Keep booking</button>
        </div>
      </form>`
      }
    </main>
  </div>`;
}

async function main(): Promise<void> {
  const root = document.getElementById('app');
  if (!root) return;
  const token = location.pathname.split('/').pop() ?? '';
  const a = await api<{ booking: PublicBooking }>('GET', `/v1/public/bookings/${encodeURIComponent(token)}`);
  if (!a.ok) {
    root.textContent = a.problem.detail ?? 'This booking link is not valid.';
    return;
  }
  root.textContent = '';
  render(
    html`<${App} token=${token} initial=${a.data.booking} slug=${pageData<Data>()?.slug ?? null} />`,
    root,
  );
}

void main();
