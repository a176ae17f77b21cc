/** Small pieces both pages use: the time-zone choice, labelled fields, the booking's summary. */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { PublicBooking, PublicSeries } from './api.js';
import { icsHref } from './ics.js';
import { whenLabel, zoneLabel, zones } from './time.js';

/**
 * The visitor's time zone, changeable. The full list (~430 zones) costs a browser tens of
 * milliseconds to lay out, so it is filled in when the control is first used (or two seconds after
 * the page is drawn), not while the page's free times are on their way.
 */
export function ZoneSelect(p: { zone: string; onChange(zone: string): void }): VNode {
  const [full, setFull] = useState(false);
  const list = useMemo(() => (full ? zones(p.zone) : [p.zone]), [full, p.zone]);
  useEffect(() => {
    const id = setTimeout(() => setFull(true), 2000);
    return () => clearTimeout(id);
  }, []);
  const fill = () => setFull(true);
  return html`<div class="zone">
    <label for="zone">Time zone</label>
    <select id="zone" value=${p.zone} onFocus=${fill} onPointerDown=${fill}
      onChange=${(e: Event) => p.onChange((e.target as HTMLSelectElement).value)}>
      ${list.map((z) => html`<option value=${z}>${zoneLabel(z)}</option>`)}
    </select>
  </div>`;
}

export interface FieldProps {
  id: string;
  label: string;
  type?: string;
  required?: boolean;
  error?: string | undefined;
  autocomplete?: string;
  options?: string[] | undefined;
}

/** A labelled input (text, email, tel, textarea, select, checkbox) with its error tied to it. */
export function Field(p: FieldProps): VNode {
  const type = p.type ?? 'text';
  const errId = `${p.id}-error`;
  const common = {
    id: p.id,
    name: p.id,
    required: p.required,
    'aria-invalid': p.error ? 'true' : undefined,
    'aria-describedby': p.error ? errId : undefined,
  };
  const label = html`<label for=${p.id}>${p.label}${p.required ? html`<span aria-hidden="true"> *</span>` : ''}</label>`;
  const error = p.error ? html`<p class="field-error" id=${errId}>${p.error}</p>` : '';
  if (type === 'checkbox') {
    return html`<div class="field check"><input type="checkbox" ...${common} />${label}${error}</div>`;
  }
  let control: VNode;
  if (type === 'textarea') control = html`<textarea rows="3" ...${common}></textarea>`;
  else if (type === 'select')
    control = html`<select ...${common}>
      <option value="">Choose…</option>
      ${(p.options ?? []).map((o) => html`<option value=${o}>${o}</option>`)}
    </select>`;
  else control = html`<input type=${type} autocomplete=${p.autocomplete} ...${common} />`;
  return html`<div class="field">${label}${control}${error}</div>`;
}

const STATUS: Record<PublicBooking['status'], string> = {
  confirmed: 'Confirmed',
  pending_payment: 'Awaiting payment',
  cancelled: 'Cancelled',
  expired: 'Expired (not paid in time)',
};

/** What, when (in the visitor's zone), with whom, and the status of a booking. */
export function Summary(p: { booking: PublicBooking; zone: string; status?: boolean }): VNode {
  const b = p.booking;
  const hosts = b.hosts.map((h) => h.display_name).filter(Boolean);
  return html`<dl class="summary">
    <dt>What</dt><dd>${b.title}</dd>
    <dt>When</dt><dd>${whenLabel(b.start_time, b.end_time, p.zone)} <span class="muted">(${zoneLabel(p.zone)})</span></dd>
    ${hosts.length > 0 && html`<dt>With</dt><dd>${hosts.join(', ')}</dd>`}
    ${p.status && html`<dt>Status</dt><dd class=${`status status-${b.status}`}>${STATUS[b.status]}</dd>`}
    ${b.status === 'cancelled' && b.cancellation_reason && html`<dt>Reason</dt><dd>${b.cancellation_reason}</dd>`}
  </dl>`;
}

/** "Add to calendar": downloads the booking (a series just booked: the series) as an .ics file. */
export function CalendarLink(p: {
  booking: PublicBooking;
  manageUrl: string | undefined;
  series?: PublicSeries | null | undefined;
}): VNode {
  const href = useMemo(() => icsHref(p.booking, p.manageUrl, p.series), [p.booking, p.manageUrl, p.series]);
  useEffect(() => () => URL.revokeObjectURL(href), [href]);
  return html`<a class="button secondary" href=${href} download="booking.ics">Add to calendar (.ics)</a>`;
}

/** Moves focus to the element with this id once it is rendered (headings of a new step). */
export function focusSoon(id: string): void {
  requestAnimationFrame(() => document.getElementById(id)?.focus());
}

/** The JSON a page was served with (`<script type="application/json" id="kairos-data">`). */
export function pageData<T>(): T | null {
  const el = document.getElementById('kairos-data');
  if (!el?.textContent) return null;
  try {
    return JSON.parse(el.textContent) as T;
  } catch {
    return null;
  }
}
