/**
 * The booking page, `/book/{slug}` (docs/api.md#e-mail-and-pages): pick a day and a time in the
 * visitor's zone, answer the link's questions, book. Talks to the public booking surface only:
 * `/v1/public/links/{slug}` (served inline with the page), `/availability`, `/bookings`, `/waitlist`.
 * A priced link goes to Stripe Checkout and comes back here (`?booking=…&payment=success|cancelled`).
 * Inside the embed's iframe it fills in the embed's prefill and tells the embedding page what happens
 * (shared/embed.ts). A test-mode link (`livemode: false`) shows a "Test mode — no real booking" banner.
 * Where the link allows a series (`recurrence`), the form offers "Repeat" (off by default): a 409 names
 * the dates that are not free, the done step lists every date. A seated link's times say the seats left;
 * a seat taken first (`slot_full`) asks for the times again.
 */
import { html } from 'htm/preact';
import { render, type VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  api,
  type Frequency,
  linkPath,
  type Problem,
  type PublicBooking,
  type PublicLink,
  type PublicSeries,
  type SeriesConflict,
  type Slot,
  slotFull,
  slotTaken,
} from './shared/api.js';
import { embedded, embedQuery, emit, prefill, publicFields, whenPrefilled } from './shared/embed.js';
import { type EmptyRange, preloadSlots, SlotPicker, seatsLeft } from './shared/picker.js';
import { dayKey, dayLabel, detectedZone, money, timeLabel, whenLabel, zoneLabel } from './shared/time.js';
import { CalendarLink, Field, focusSoon, pageData, Summary, ZoneSelect } from './shared/ui.js';

type Step =
  | { kind: 'pick' }
  | { kind: 'form'; slot: Slot }
  | { kind: 'done'; booking: PublicBooking; series: PublicSeries | null }
  | { kind: 'waitlisted'; range: EmptyRange }
  | { kind: 'paid'; booking: PublicBooking | null; manageUrl: string | undefined }
  | { kind: 'redirect' }
  | { kind: 'checkout'; url: string };

const STORE = 'kairos:checkout:';

/** What a paid booking leaves behind for the page Checkout returns to (this tab only). */
interface Pending {
  booking: PublicBooking;
  manageUrl: string | undefined;
}

/** The visitor's choice of a series: off by default, kept while they change the time. */
interface Repeat {
  on: boolean;
  frequency: Frequency;
  count: number;
}

const FREQUENCY: Record<Frequency, { label: string; every: string; unit: [string, string] }> = {
  daily: { label: 'Daily', every: 'every day', unit: ['day', 'days'] },
  weekly: { label: 'Weekly', every: 'every week', unit: ['week', 'weeks'] },
  monthly: { label: 'Monthly', every: 'every month', unit: ['month', 'months'] },
};

function tokenOf(manageUrl: string | undefined): string | null {
  const m = manageUrl && /\/b\/([A-Za-z0-9_-]+)$/.exec(manageUrl);
  return m ? (m[1] ?? null) : null;
}

function App(p: { link: PublicLink; returned: Step | null; notice: string }): VNode {
  const { link } = p;
  const [zone, setZone] = useState(detectedZone);
  const [duration, setDuration] = useState(link.duration_minutes);
  const [step, setStep] = useState<Step>(p.returned ?? { kind: 'pick' });
  const [refresh, setRefresh] = useState(0);
  const [notice, setNotice] = useState(p.notice);
  const [empty, setEmpty] = useState<EmptyRange | null>(null);
  const [repeat, setRepeat] = useState<Repeat>({
    on: false,
    frequency: link.recurrence?.frequencies[0] ?? 'weekly',
    count: Math.min(4, link.recurrence?.max_count ?? 2),
  });
  const hosts = link.hosts.map((h) => h.display_name).filter(Boolean);

  const header = html`<header class="head">
    <p class="eyebrow">${hosts.join(', ') || 'Booking'}</p>
    <h1 id="title">${link.title}</h1>
    ${link.description && html`<p class="description">${link.description}</p>`}
    <p class="facts">
      <span>${durationLabel(duration)}</span>
      ${link.price_amount !== null && link.price_currency && html`<span>${money(link.price_amount, link.price_currency)}</span>`}
    </p>
  </header>`;

  let body: VNode;
  if (step.kind === 'form') {
    body = html`<${BookingForm} link=${link} slot=${step.slot} zone=${zone} duration=${duration}
      repeat=${repeat} onRepeat=${setRepeat} onStale=${() => setRefresh((n) => n + 1)}
      onBack=${() => {
        setStep({ kind: 'pick' });
        focusSoon('month-h');
      }}
      onTaken=${(slot: Slot, full: boolean) => {
        const code = full ? 'slot_full' : 'slot_unavailable';
        emit('booking_failed', { status: 409, code, start: slot.start });
        setNotice(
          full
            ? `${timeLabel(slot.start, zone)} just filled up: every seat was taken just before you. The times shown still have seats: please pick another.`
            : `Someone booked ${timeLabel(slot.start, zone)} just before you. The times shown are still free: please pick another.`,
        );
        setRefresh((n) => n + 1);
        setStep({ kind: 'pick' });
        focusSoon('month-h');
      }}
      onBooked=${(b: PublicBooking, series: PublicSeries | null) => {
        emit('booking_succeeded', { booking: publicFields(b), metadata: prefill.metadata ?? {} });
        if (b.status === 'pending_payment' && b.checkout_url) {
          try {
            sessionStorage.setItem(STORE + b.id, JSON.stringify({ booking: b, manageUrl: b.manage_url }));
          } catch {
            // private mode: the return page says to look for the e-mail instead
          }
          // Checkout cannot be shown inside a frame: inside the embed it opens in a tab of its own.
          if (embedded) {
            setStep({ kind: 'checkout', url: b.checkout_url });
            focusSoon('done-h');
            return;
          }
          setStep({ kind: 'redirect' });
          location.assign(b.checkout_url);
          return;
        }
        setStep({ kind: 'done', booking: b, series });
        focusSoon('done-h');
      }} />`;
  } else if (step.kind === 'done') {
    body = html`<${Done} booking=${step.booking} series=${step.series} manageUrl=${step.booking.manage_url} zone=${zone} paid=${false} />`;
  } else if (step.kind === 'paid') {
    body = step.booking
      ? html`<${Done} booking=${step.booking} manageUrl=${step.manageUrl} zone=${zone} paid=${true} />`
      : html`<section class="done"><h2 id="done-h" tabindex="-1">Payment received</h2>
          <p>Thank you. Your confirmation e-mail has the details and a link to reschedule or cancel.</p></section>`;
  } else if (step.kind === 'checkout') {
    body = html`<section class="done"><h2 id="done-h" tabindex="-1">One more step: the payment</h2>
      <p>Your time is held while you pay. The payment page opens in a new tab; the confirmation e-mail follows.</p>
      <div class="actions"><a class="button" href=${step.url} target="_blank" rel="noopener">Continue to payment</a></div>
    </section>`;
  } else if (step.kind === 'redirect') {
    body = html`<p role="status">Taking you to the payment page…</p>`;
  } else if (step.kind === 'waitlisted') {
    body = html`<section class="done"><h2 id="done-h" tabindex="-1">You are on the waitlist</h2>
      <p>If time frees up between ${whenRange(step.range, zone)}, we will e-mail you a link to claim it.</p>
      <button type="button" class="secondary" onClick=${() => setStep({ kind: 'pick' })}>Back to the calendar</button></section>`;
  } else {
    body = html`<section aria-labelledby="pick-h">
      <h2 id="pick-h" class="sr-only">Choose a time</h2>
      <div class="options">
        ${
          link.durations.length > 1 &&
          html`<fieldset class="durations"><legend>Duration</legend>
          ${link.durations.map(
            (
              d,
            ) => html`<label class="radio"><input type="radio" name="duration" value=${d} checked=${d === duration}
              onChange=${() => setDuration(d)} /> ${durationLabel(d)}</label>`,
          )}
        </fieldset>`
        }
        <${ZoneSelect} zone=${zone} onChange=${setZone} />
      </div>
      <${SlotPicker} slug=${link.slug} duration=${duration} zone=${zone} refresh=${refresh} notice=${notice}
        onEmpty=${setEmpty}
        onPick=${(slot: Slot) => {
          setNotice('');
          emit('slot_selected', {
            start: slot.start,
            end: slot.end,
            duration_minutes: duration,
            timezone: zone,
          });
          setStep({ kind: 'form', slot });
          focusSoon('form-h');
        }} />
      ${
        // A seated link has no waitlist (docs/api.md#seats).
        empty &&
        !link.seats &&
        html`<${Waitlist} link=${link} range=${empty} zone=${zone}
        onJoined=${() => {
          setStep({ kind: 'waitlisted', range: empty });
          focusSoon('done-h');
        }} />`
      }
    </section>`;
  }
  // A test-mode link (docs/api.md#test-mode): said before anything else, on every step.
  const test =
    link.livemode === false
      ? html`<p class="test-banner" id="test-mode" role="note"><strong>Test mode</strong> — no real booking. What you book here is a test: no e-mail is sent and no calendar changes.</p>`
      : null;
  return html`<div class="card">${test}${header}<main class="body">${body}</main></div>`;
}

function durationLabel(minutes: number): string {
  if (minutes < 60 || minutes % 60) return `${minutes} min`;
  return minutes === 60 ? '1 hour' : `${minutes / 60} hours`;
}

function whenRange(r: EmptyRange, zone: string): string {
  const f = new Intl.DateTimeFormat(undefined, { timeZone: zone, day: 'numeric', month: 'long' });
  return `${f.format(r.from)} and ${f.format(r.to - 1)}`;
}

/** Field errors of a 400 (`errors.customer_email`, `errors["answers.<id>"]`), by input id. */
function fieldErrors(p: Problem): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.errors ?? {})) {
    const id = k.startsWith('answers.') ? `q-${k.slice(8)}` : k;
    out[id] = v.charAt(0).toUpperCase() + v.slice(1);
  }
  return out;
}

function formValues(form: HTMLFormElement): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const el of Array.from(form.elements)) {
    if (
      !(
        el instanceof HTMLInputElement ||
        el instanceof HTMLTextAreaElement ||
        el instanceof HTMLSelectElement
      )
    )
      continue;
    if (!el.name) continue;
    out[el.name] = el instanceof HTMLInputElement && el.type === 'checkbox' ? el.checked : el.value.trim();
  }
  return out;
}

function BookingForm(p: {
  link: PublicLink;
  slot: Slot;
  zone: string;
  duration: number;
  repeat: Repeat;
  onRepeat(r: Repeat): void;
  /** The free times changed (a series refused): ask for them again when the picker shows next. */
  onStale(): void;
  onBack(): void;
  /** `full`: a seated slot's last seat went first (`slot_full`). */
  onTaken(slot: Slot, full: boolean): void;
  onBooked(b: PublicBooking, series: PublicSeries | null): void;
}): VNode {
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState('');
  const [conflicts, setConflicts] = useState<SeriesConflict[]>([]);
  const series = p.link.recurrence && p.repeat.on ? p.repeat : null;
  const form = useRef<HTMLFormElement>(null);

  // The embed's prefill, into the fields still empty (uncontrolled inputs: set once, then the visitor's).
  useEffect(() => {
    whenPrefilled(() => {
      const set = (name: string, v: string | boolean | undefined) => {
        const el = form.current?.elements.namedItem(name);
        if (v === undefined || !el) return;
        if (el instanceof HTMLInputElement && el.type === 'checkbox') el.checked = v === true || v === 'true';
        else if (
          (el instanceof HTMLInputElement ||
            el instanceof HTMLTextAreaElement ||
            el instanceof HTMLSelectElement) &&
          !el.value
        )
          el.value = String(v);
      };
      set('customer_name', prefill.name);
      set('customer_email', prefill.email);
      set('notes', prefill.notes);
      for (const [id, v] of Object.entries(prefill.answers ?? {})) set(`q-${id}`, v);
    });
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    const values = formValues(e.currentTarget as HTMLFormElement);
    const answers: Record<string, string | boolean> = {};
    for (const q of p.link.questions) {
      const v = values[`q-${q.id}`];
      if (v !== undefined && v !== '') answers[q.id] = v;
    }
    setBusy(true);
    setFailure('');
    setConflicts([]);
    const a = await api<{ booking: PublicBooking; series?: PublicSeries }>(
      'POST',
      linkPath(p.link.slug, '/bookings'),
      {
        customer_name: values.customer_name,
        customer_email: values.customer_email,
        start_time: p.slot.start,
        duration_minutes: p.duration,
        customer_timezone: p.zone,
        ...(values.notes ? { notes: values.notes } : {}),
        answers,
        ...(prefill.metadata ? { metadata: prefill.metadata } : {}),
        ...(series
          ? { recurrence: { frequency: series.frequency, count: series.count, timezone: p.zone } }
          : {}),
      },
    );
    setBusy(false);
    if (a.ok) return p.onBooked(a.data.booking, a.data.series ?? null);
    if (series && slotTaken(a.problem) && a.problem.conflicts?.length) {
      // Nothing was booked: say which dates are not free, keep the form to change the count or the time.
      emit('booking_failed', { status: 409, code: 'slot_unavailable', start: p.slot.start });
      setConflicts(a.problem.conflicts);
      setErrors({});
      p.onStale();
      focusSoon('form-error');
      return;
    }
    if (slotFull(a.problem)) return p.onTaken(p.slot, true);
    if (slotTaken(a.problem)) return p.onTaken(p.slot, false);
    emit('booking_failed', {
      status: a.status,
      code: a.problem.code ?? null,
      detail: a.problem.detail ?? null,
    });
    const fields = fieldErrors(a.problem);
    setErrors(fields);
    setFailure(
      Object.keys(fields).length
        ? 'Please correct the fields marked below.'
        : (a.problem.detail ?? 'Booking failed.'),
    );
    focusSoon('form-error');
  };

  return html`<form class="book-form" ref=${form} onSubmit=${submit}>
    <h2 id="form-h" tabindex="-1">Your details</h2>
    <p class="chosen">${whenLabel(p.slot.start, p.slot.end, p.zone)} <span class="muted">(${zoneLabel(p.zone)})</span>
      ${p.slot.seats_remaining !== undefined && html`<span class="muted"> · ${seatsLeft(p.slot.seats_remaining)}</span>`}
      <button type="button" class="link" onClick=${p.onBack}>Change time</button></p>
    ${failure && html`<p class="error" id="form-error" role="alert" tabindex="-1">${failure}</p>`}
    ${conflicts.length > 0 && html`<${Conflicts} conflicts=${conflicts} zone=${p.zone} onBack=${p.onBack} />`}
    ${
      p.link.recurrence &&
      html`<${RepeatFields} allowed=${p.link.recurrence} value=${p.repeat} slot=${p.slot} zone=${p.zone}
        onChange=${(r: Repeat) => {
          setConflicts([]);
          p.onRepeat(r);
        }} />`
    }
    <${Field} id="customer_name" label="Name" required=${true} autocomplete="name" error=${errors.customer_name} />
    <${Field} id="customer_email" label="E-mail" type="email" required=${true} autocomplete="email" error=${errors.customer_email} />
    ${p.link.questions.map(
      (q) => html`<${Field} id=${`q-${q.id}`} label=${q.label} type=${q.type === 'phone' ? 'tel' : q.type}
        required=${q.required} options=${q.options} error=${errors[`q-${q.id}`]} />`,
    )}
    <${Field} id="notes" label="Anything we should know? (optional)" type="textarea" error=${errors.notes} />
    <div class="actions">
      <button type="submit" disabled=${busy}>${busy ? 'Booking…' : p.link.price_amount !== null ? 'Continue to payment' : 'Book'}</button>
      <button type="button" class="secondary" onClick=${p.onBack}>Back</button>
    </div>
  </form>`;
}

/** "Repeat": off by default; on, a frequency of the link's and how many times, up to its max_count. */
function RepeatFields(p: {
  allowed: { frequencies: Frequency[]; max_count: number };
  value: Repeat;
  slot: Slot;
  zone: string;
  onChange(r: Repeat): void;
}): VNode {
  const v = p.value;
  const f = FREQUENCY[v.frequency];
  const counts: number[] = [];
  for (let n = 2; n <= p.allowed.max_count; n++) counts.push(n);
  const pick = (e: Event) => (e.target as HTMLSelectElement).value;
  const first = dayLabel(dayKey(Date.parse(p.slot.start), p.zone), true);
  return html`<fieldset class="repeat">
    <legend>Repeat</legend>
    <div class="field check">
      <input type="checkbox" id="repeat" checked=${v.on}
        onChange=${(e: Event) => p.onChange({ ...v, on: (e.target as HTMLInputElement).checked })} />
      <label for="repeat">Repeat this booking</label>
    </div>
    ${
      v.on &&
      html`<div class="repeat-options">
        <div class="field">
          <label for="repeat-frequency">How often</label>
          <select id="repeat-frequency" value=${v.frequency}
            onChange=${(e: Event) => p.onChange({ ...v, frequency: pick(e) as Frequency })}>
            ${p.allowed.frequencies.map((q) => html`<option value=${q}>${FREQUENCY[q].label}</option>`)}
          </select>
        </div>
        <div class="field">
          <label for="repeat-count">For</label>
          <select id="repeat-count" value=${String(v.count)}
            onChange=${(e: Event) => p.onChange({ ...v, count: Number(pick(e)) })}>
            ${counts.map((n) => html`<option value=${String(n)}>${n} ${f.unit[1]}</option>`)}
          </select>
        </div>
        <p class="muted repeat-summary">${v.count} bookings, ${f.every} at ${timeLabel(p.slot.start, p.zone)}, the first on ${first}.</p>
      </div>`
    }
  </fieldset>`;
}

const REFUSED: Record<string, string> = {
  taken: 'already booked',
  calendar_busy: 'the host is busy',
  outside_working_hours: 'outside working hours',
  minimum_notice: 'too soon',
  max_days_ahead: 'too far ahead',
  no_host: 'no host is free',
  out_of_office: 'the host is away',
};

/** A series refused: every date that is not free, in the visitor's zone; nothing was booked. */
function Conflicts(p: { conflicts: SeriesConflict[]; zone: string; onBack(): void }): VNode {
  const n = p.conflicts.length;
  return html`<div class="error conflicts" id="form-error" role="alert" tabindex="-1">
    <p>Nothing was booked: ${n === 1 ? 'this date is' : `these ${n} dates are`} not available.</p>
    <ul>${p.conflicts.map(
      (c) =>
        html`<li>${whenLabel(c.start_time, c.end_time, p.zone)} <span class="reason">(${REFUSED[c.reason] ?? c.reason})</span></li>`,
    )}</ul>
    <p>Repeat fewer times, or <button type="button" class="link" onClick=${p.onBack}>choose another time</button>.</p>
  </div>`;
}

function Done(p: {
  booking: PublicBooking;
  series?: PublicSeries | null;
  manageUrl: string | undefined;
  zone: string;
  paid: boolean;
}): VNode {
  const b = p.booking;
  const confirmed = b.status === 'confirmed';
  return html`<section class="done">
    <h2 id="done-h" tabindex="-1">${confirmed ? 'You are booked' : p.paid ? 'Payment received' : 'Booking received'}</h2>
    <p>${
      confirmed
        ? html`A confirmation is on its way to <strong>${b.customer_email}</strong>.`
        : 'Your payment is being confirmed; the confirmation e-mail follows as soon as it is.'
    }</p>
    <${Summary} booking=${b} zone=${p.zone} status=${!confirmed} />
    ${p.series && html`<${Occurrences} series=${p.series} zone=${p.zone} />`}
    <div class="actions">
      <${CalendarLink} booking=${b} manageUrl=${p.manageUrl} series=${p.series} />
      ${p.manageUrl && html`<a class="button secondary" href=${p.manageUrl + embedQuery()}>Reschedule or cancel</a>`}
    </div>
  </section>`;
}

/** Every date of a series just booked, in the visitor's zone. */
function Occurrences(p: { series: PublicSeries; zone: string }): VNode {
  const list = p.series.occurrences;
  return html`<section class="occurrences" aria-labelledby="occ-h">
    <h3 id="occ-h">All ${list.length} dates, ${FREQUENCY[p.series.recurrence.frequency].every}</h3>
    <ol>${list.map((o) => html`<li>${whenLabel(o.start_time, o.end_time, p.zone)}</li>`)}</ol>
    <p class="muted">“Reschedule or cancel” opens the first date; cancelling it there can take the following dates with it.</p>
  </section>`;
}

function Waitlist(p: { link: PublicLink; range: EmptyRange; zone: string; onJoined(): void }): VNode {
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const v = formValues(e.currentTarget as HTMLFormElement);
    setBusy(true);
    const a = await api('POST', linkPath(p.link.slug, '/waitlist'), {
      customer_name: v['wl-name'],
      customer_email: v['wl-email'],
      preferred_from: new Date(p.range.from).toISOString(),
      preferred_to: new Date(p.range.to).toISOString(),
    });
    setBusy(false);
    if (a.ok) return p.onJoined();
    const e2 = fieldErrors(a.problem);
    setErrors({ 'wl-name': e2.customer_name ?? '', 'wl-email': e2.customer_email ?? '' });
    setFailure(a.problem.detail ?? 'Could not join the waitlist.');
  };
  return html`<form class="waitlist" onSubmit=${submit} aria-labelledby="wl-h">
    <h2 id="wl-h">Join the waitlist</h2>
    <p>No free time between ${whenRange(p.range, p.zone)}. Leave your name and e-mail: if time frees up, we will offer it to you.</p>
    ${failure && html`<p class="error" role="alert">${failure}</p>`}
    <${Field} id="wl-name" label="Name" required=${true} autocomplete="name" error=${errors['wl-name'] || undefined} />
    <${Field} id="wl-email" label="E-mail" type="email" required=${true} autocomplete="email" error=${errors['wl-email'] || undefined} />
    <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Joining…' : 'Join the waitlist'}</button></div>
  </form>`;
}

/** Back from Stripe Checkout: what this tab stored before it left, and the booking's state now. */
async function returned(params: URLSearchParams): Promise<{ step: Step | null; notice: string }> {
  const payment = params.get('payment');
  const id = params.get('booking') ?? '';
  if (payment !== 'success' && payment !== 'cancelled') return { step: null, notice: '' };
  let pending: Pending | null = null;
  try {
    pending = JSON.parse(sessionStorage.getItem(STORE + id) ?? 'null') as Pending | null;
  } catch {
    pending = null;
  }
  const token = tokenOf(pending?.manageUrl);
  history.replaceState(null, '', location.pathname);
  if (payment === 'cancelled') {
    // Free the held time at once instead of leaving it held until the hold ends.
    if (token) await api('POST', `/v1/public/bookings/${token}/cancel`, { reason: 'Payment cancelled' });
    sessionStorage.removeItem(STORE + id);
    return {
      step: null,
      notice: 'The payment was cancelled, so nothing was booked. Pick a time to try again.',
    };
  }
  if (!pending || !token) return { step: { kind: 'paid', booking: null, manageUrl: undefined }, notice: '' };
  const a = await api<{ booking: PublicBooking }>('GET', `/v1/public/bookings/${token}`);
  return {
    step: { kind: 'paid', booking: a.ok ? a.data.booking : pending.booking, manageUrl: pending.manageUrl },
    notice: '',
  };
}

async function main(): Promise<void> {
  const root = document.getElementById('app');
  if (!root) return;
  const slug = root.dataset.slug ?? '';
  let link = pageData<{ booking_link: PublicLink }>()?.booking_link;
  if (!link) {
    const a = await api<{ booking_link: PublicLink }>('GET', linkPath(slug));
    if (!a.ok) {
      root.textContent = a.problem.detail ?? 'This booking page is not available.';
      return;
    }
    link = a.data.booking_link;
  }
  const params = new URLSearchParams(location.search);
  if (!params.has('payment')) preloadSlots(link.slug, link.duration_minutes, detectedZone());
  const back = await returned(params);
  root.textContent = '';
  render(html`<${App} link=${link} returned=${back.step} notice=${back.notice} />`, root);
  if (back.step) focusSoon('done-h');
}

void main();
