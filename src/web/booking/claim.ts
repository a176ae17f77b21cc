/**
 * The waitlist claim page, `/w/{token}` (docs/api.md#e-mail-and-pages): the time held for the
 * visitor (in the visitor's zone) and until when it is held; the link's questions, answered as on the
 * booking page; one button claims it through `POST /v1/public/waitlist/{token}/claim`, then the booking is shown as on the booking page (a priced
 * link goes on to its checkout). The page is served with the held offer inline (pages/service.ts).
 */
import { html } from 'htm/preact';
import { render, type VNode } from 'preact';
import { useState } from 'preact/hooks';
import { api, type PublicBooking } from './shared/api.js';
import { detectedZone, money, timeLabel, whenLabel, zoneLabel } from './shared/time.js';
import { CalendarLink, Field, focusSoon, pageData, Summary, ZoneSelect } from './shared/ui.js';
import type { OfferView } from './shared/views.js';

const WHY: Record<string, string> = {
  offer_claimed: 'This time was already claimed with this link. Your confirmation e-mail has the booking.',
  offer_expired: 'This time is no longer held for you: the hold ended and it passed to someone else.',
  start_in_past: 'This time has already begun, so it can no longer be claimed.',
};

function App(p: { token: string; offer: OfferView }): VNode {
  const { offer } = p;
  const [zone, setZone] = useState(detectedZone);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState('');
  const [booking, setBooking] = useState<PublicBooking | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});

  const claim = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const answers: Record<string, string | boolean> = {};
    for (const q of offer.questions) {
      const el = form.elements.namedItem(`q-${q.id}`);
      if (el instanceof HTMLInputElement && el.type === 'checkbox') answers[q.id] = el.checked;
      else if (
        (el instanceof HTMLInputElement ||
          el instanceof HTMLTextAreaElement ||
          el instanceof HTMLSelectElement) &&
        el.value.trim() !== ''
      )
        answers[q.id] = el.value.trim();
    }
    setBusy(true);
    setFailure('');
    setErrors({});
    const a = await api<{ booking: PublicBooking }>(
      'POST',
      `/v1/public/waitlist/${encodeURIComponent(p.token)}/claim`,
      { answers },
    );
    setBusy(false);
    if (!a.ok) {
      if (a.status === 400 && a.problem.errors) {
        const fields: Record<string, string> = {};
        for (const [k, v] of Object.entries(a.problem.errors)) {
          fields[k.startsWith('answers.') ? `q-${k.slice(8)}` : k] = v.charAt(0).toUpperCase() + v.slice(1);
        }
        setErrors(fields);
        return;
      }
      setFailure(
        (a.problem.code && WHY[a.problem.code]) || (a.problem.detail ?? 'The time could not be claimed.'),
      );
      focusSoon('claim-error');
      return;
    }
    const b = a.data.booking;
    if (b.status === 'pending_payment' && b.checkout_url) {
      location.assign(b.checkout_url);
      return;
    }
    setBooking(b);
    focusSoon('done-h');
  };

  let body: VNode;
  if (booking) {
    body = html`<section class="done">
      <h2 id="done-h" tabindex="-1">You are booked</h2>
      <p>A confirmation is on its way to <strong>${booking.customer_email}</strong>.</p>
      <${Summary} booking=${booking} zone=${zone} />
      <div class="actions">
        <${CalendarLink} booking=${booking} manageUrl=${booking.manage_url} />
        ${booking.manage_url && html`<a class="button secondary" href=${booking.manage_url}>Reschedule or cancel</a>`}
      </div>
    </section>`;
  } else {
    body = html`<section aria-labelledby="offer-h">
      <h2 id="offer-h">A time freed up for you, ${offer.customer_name}</h2>
      <dl class="summary">
        <dt>What</dt><dd>${offer.title}</dd>
        <dt>When</dt><dd>${whenLabel(offer.start, offer.end, zone)} <span class="muted">(${zoneLabel(zone)})</span></dd>
        ${offer.price_amount !== null && offer.price_currency && html`<dt>Price</dt><dd>${money(offer.price_amount, offer.price_currency)}</dd>`}
        <dt>Held until</dt><dd>${whenLabel(offer.held_until, offer.held_until, zone).replace(/ – .*$/, '')}</dd>
      </dl>
      <div class="options"><${ZoneSelect} zone=${zone} onChange=${setZone} /></div>
      ${failure && html`<p class="error" id="claim-error" role="alert" tabindex="-1">${failure}</p>`}
      <form onSubmit=${claim}>
        ${offer.questions.map(
          (q) => html`<${Field} id=${`q-${q.id}`} label=${q.label} type=${q.type === 'phone' ? 'tel' : q.type}
            required=${q.required} options=${q.options} error=${errors[`q-${q.id}`]} />`,
        )}
        <div class="actions">
          <button type="submit" disabled=${busy || Boolean(failure)}>
            ${busy ? 'Claiming…' : `Claim ${timeLabel(offer.start, zone)}${offer.price_amount !== null ? ' and pay' : ''}`}
          </button>
        </div>
      </form>
      <p class="muted">If you do not claim it by then, it is offered to the next person waiting.</p>
    </section>`;
  }
  return html`<div class="card">
    <header class="head"><p class="eyebrow">Waitlist</p><h1>${offer.title}</h1></header>
    <main class="body">${body}</main>
  </div>`;
}

function main(): void {
  const root = document.getElementById('app');
  const offer = pageData<OfferView>();
  if (!root || !offer) return;
  const token = location.pathname.split('/').pop() ?? '';
  root.textContent = '';
  render(html`<${App} token=${token} offer=${offer} />`, root);
}

main();
