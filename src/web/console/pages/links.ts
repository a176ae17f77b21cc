/**
 * Booking links: create and edit (slug, title, description, durations, hosts, assignment, notice,
 * horizon, price, recurring series and seats, active, the questions asked of the person booking:
 * pages/questions.ts), copy the public URL, delete after confirmation; the embed snippet
 * generator (inline, popup, floating button; theme) with a live preview of the page it embeds.
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { kairos } from '../lib/api.js';
import { textOf, useSubmit } from '../lib/form.js';
import { CreatePanel, ListPanel, usePaged } from '../lib/list.js';
import { Confirm, Copyable, Field, FormError } from '../lib/ui.js';
import { type Draft, drafts, Questions, questionsBody } from './questions.js';
import type { Frequency } from './series.js';

/** A listed link; `recurrence` and `seats` written out for an SDK made before them. */
type Link = Item<Result<'listBookingLinks'>> & {
  recurrence?: { frequencies: Frequency[]; max_count: number } | null;
  seats?: { capacity: number; show_remaining: boolean } | null;
};
type Host = Item<Result<'listHosts'>>;
type Kind = 'inline' | 'popup' | 'button';

function publicUrl(slug: string): string {
  return `${location.origin}/book/${slug}`;
}

/** The snippet a site pastes: the embed script and the call that places the page. */
export function snippet(kind: Kind, slug: string, theme: string): string {
  const src = `${location.origin}/embed.js`;
  if (kind === 'inline') {
    return `<div data-kairos-inline="${slug}" data-kairos-theme="${theme}"></div>\n<script src="${src}" async></script>`;
  }
  if (kind === 'popup') {
    return `<button type="button" data-kairos-link="${slug}">Book a time</button>\n<script src="${src}" data-theme="${theme}" async></script>`;
  }
  return `<script src="${src}" data-button="${slug}" data-theme="${theme}" async></script>`;
}

function Embed(p: { link: Link }): VNode {
  const [kind, setKind] = useState<Kind>('inline');
  const [theme, setTheme] = useState('light');
  const id = `embed-${p.link.id}`;
  const code = snippet(kind, p.link.slug, theme);
  return html`<section class="embed" aria-label=${`Embed ${p.link.title}`}>
    <h4>Embed on your site</h4>
    <fieldset>
      <legend>How</legend>
      ${(['inline', 'popup', 'button'] as const).map(
        (k) =>
          html`<label class="choice" key=${k}><input type="radio" name=${`${id}-kind`} checked=${kind === k} onChange=${() => setKind(k)} /> ${k === 'inline' ? 'Inline' : k === 'popup' ? 'Popup' : 'Floating button'}</label>`,
      )}
    </fieldset>
    <label for=${`${id}-theme`}>Theme</label>
    <select id=${`${id}-theme`} value=${theme} onChange=${(e: Event) => setTheme((e.currentTarget as HTMLSelectElement).value)}>
      <option value="light">Light</option><option value="dark">Dark</option><option value="auto">Follow the visitor</option>
    </select>
    <${Copyable} id=${`${id}-code`} label="Snippet" value=${code} />
    <p class="hint">Preview of the page the snippet shows:</p>
    <iframe class="preview" title=${`Preview of ${p.link.title}`} src=${`/book/${encodeURIComponent(p.link.slug)}?embed=1&theme=${theme}`}></iframe>
  </section>`;
}

const FREQUENCIES: readonly (readonly [Frequency, string])[] = [
  ['daily', 'Daily'],
  ['weekly', 'Weekly'],
  ['monthly', 'Monthly'],
];

/** A link's recurrence out of the form: null when no frequency is ticked. */
function recurrenceBody(f: FormData): unknown {
  const frequencies = f.getAll('recurrence_frequencies').map(String);
  if (frequencies.length === 0) return null;
  const max = String(f.get('recurrence_max_count') ?? '').trim();
  // An empty or odd count is sent as it is: the API's 400 names it beside the field.
  return { frequencies, max_count: max === '' ? 0 : Number(max) };
}

/** A link's seats out of the form: null when no capacity is given (one customer per slot). */
function seatsBody(f: FormData): unknown {
  const capacity = String(f.get('seats_capacity') ?? '').trim();
  if (capacity === '') return null;
  return { capacity: Number(capacity), show_remaining: f.get('seats_show_remaining') === 'on' };
}

/** An error of a fieldset (the API's whole-object rule): an id for `aria-describedby`, and the text. */
function GroupError(p: { id: string; message: string | undefined }): VNode | null {
  return p.message ? html`<p class="error" id=${p.id}>${p.message}</p>` : null;
}

/**
 * The recurring series a public booker may ask for (frequencies ticked, at most so many) and the
 * seats of a group link, with the API's errors at their fields (`recurrence.max_count`, …) and its
 * rules between them and the rest of the link (`recurrence`, `seats`) under their group.
 */
function SeriesAndSeats(p: { pre: string; link: Link | undefined; paths: Record<string, string> }): VNode {
  const r = p.link?.recurrence ?? null;
  const seats = p.link?.seats ?? null;
  const e = p.paths;
  const freqError = e['recurrence.frequencies'] ?? e['recurrence.frequencies.0'];
  // The ids of a group's hint and of those of its errors that are shown.
  const described = (...ids: [string, unknown][]) =>
    ids
      .filter(([, shown]) => shown)
      .map(([id]) => id)
      .join(' ');
  return html`<fieldset class="group" aria-describedby=${described([`${p.pre}-recurrence-hint`, true], [`${p.pre}-recurrence-error`, e.recurrence], [`${p.pre}-frequencies-error`, freqError])}>
      <legend>Recurring series</legend>
      <p class="hint" id=${`${p.pre}-recurrence-hint`}>Let the person booking repeat the meeting at the frequencies ticked. None ticked: single bookings only. Not on a priced or seated link.</p>
      <${GroupError} id=${`${p.pre}-recurrence-error`} message=${e.recurrence} />
      <div class="choices">
        ${FREQUENCIES.map(
          ([v, label]) =>
            html`<label class="choice" key=${v}><input type="checkbox" name="recurrence_frequencies" value=${v} defaultChecked=${r?.frequencies.includes(v) ?? false} /> ${label}</label>`,
        )}
      </div>
      <${GroupError} id=${`${p.pre}-frequencies-error`} message=${freqError} />
      <${Field} id=${`${p.pre}-recurrence-max`} label="Most occurrences" hint="2–52, the first included." error=${e['recurrence.max_count']}>${(
        a: Record<string, unknown>,
      ) =>
        html`<input ...${a} name="recurrence_max_count" type="number" min="2" max="52" defaultValue=${r?.max_count ?? 12} />`}<//>
    </fieldset>
    <fieldset class="group" aria-describedby=${described([`${p.pre}-seats-hint`, true], [`${p.pre}-seats-error`, e.seats])}>
      <legend>Seats (group bookings)</legend>
      <p class="hint" id=${`${p.pre}-seats-hint`}>Empty: one person per slot. 2–500: that many people may book the same slot. One duration only; not with round robin or a series.</p>
      <${GroupError} id=${`${p.pre}-seats-error`} message=${e.seats} />
      <${Field} id=${`${p.pre}-seats`} label="Seats per slot (optional)" error=${e['seats.capacity']}>${(
        a: Record<string, unknown>,
      ) =>
        html`<input ...${a} name="seats_capacity" type="number" min="2" max="500" defaultValue=${seats?.capacity ?? ''} />`}<//>
      <label class="choice"><input type="checkbox" name="seats_show_remaining" defaultChecked=${seats?.show_remaining ?? false} /> Show the seats left on the booking page</label>
    </fieldset>`;
}

function LinkForm(p: { hosts: Host[]; link?: Link; onSaved: () => void; onCancel?: () => void }): VNode {
  const l = p.link;
  const [questions, setQuestions] = useState<Draft[]>(() => drafts(l?.questions));
  const pre = l ? `edit-${l.id}` : 'new';
  const { fail, busy, submit } = useSubmit(async (f, form) => {
    const text = textOf(f);
    const body: Record<string, unknown> = {
      title: text('title'),
      description: text('description'),
      durations: text('durations')
        .split(/[\s,]+/)
        .filter(Boolean)
        .map(Number),
      host_ids: f.getAll('host_ids').map(String),
      assignment: text('assignment'),
      minimum_notice_minutes: text('minimum_notice_minutes') ? Number(text('minimum_notice_minutes')) : null,
      max_days_ahead: text('max_days_ahead') ? Number(text('max_days_ahead')) : null,
      price_amount: text('price') ? Math.round(Number(text('price')) * 100) : null,
      price_currency: text('price') ? text('price_currency').toLowerCase() : null,
      active: f.get('active') === 'on',
      questions: questionsBody(questions),
      recurrence: recurrenceBody(f),
      seats: seatsBody(f),
    };
    if (!l) body.slug = text('slug');
    // No host picked (or none to pick): the API's default, the caller itself.
    if ((body.host_ids as string[]).length === 0) delete body.host_ids;
    if (l) await kairos.bookingLinks.update(l.id, body as Parameters<typeof kairos.bookingLinks.update>[1]);
    else await kairos.bookingLinks.create(body as Parameters<typeof kairos.bookingLinks.create>[0]);
    if (!l) {
      form.reset();
      setQuestions([]);
    }
    p.onSaved();
  });
  const input =
    (name: string, extra: Record<string, unknown> = {}) =>
    (a: Record<string, unknown>) =>
      html`<input ...${a} name=${name} ...${extra} />`;
  return html`<form onSubmit=${submit} novalidate>
    <${FormError} message=${fail.message} />
    ${l ? null : html`<${Field} id=${`${pre}-slug`} label="Slug" hint="3–64 of a–z, 0–9 and -: the page is /book/<slug>." error=${fail.fields.slug}>${input('slug', { required: true })}<//>`}
    <${Field} id=${`${pre}-title`} label="Title" error=${fail.fields.title}>${input('title', { required: true, defaultValue: l?.title ?? '' })}<//>
    <${Field} id=${`${pre}-description`} label="Description (optional)" error=${fail.fields.description}>${input('description', { defaultValue: l?.description ?? '' })}<//>
    <${Field} id=${`${pre}-durations`} label="Durations in minutes" hint="One or more, e.g. 30 or 30, 60." error=${fail.fields.durations ?? fail.fields.duration_minutes}>${input('durations', { defaultValue: (l?.durations ?? [30]).join(', ') })}<//>
    <fieldset aria-describedby=${fail.fields.host_ids ? `${pre}-hosts-error` : undefined}>
      <legend>Hosts</legend>
      ${p.hosts.length === 0 ? html`<p class="hint">No host yet: the link books you. Add the people (or rooms) to book on the <a href="/console/hosts">Hosts page</a>.</p>` : null}
      ${p.hosts.map(
        (h) =>
          html`<label class="choice" key=${h.principal_id}><input type="checkbox" name="host_ids" value=${h.principal_id} defaultChecked=${l ? l.host_ids.includes(h.principal_id) : p.hosts.length === 1} /> ${h.display_name}</label>`,
      )}
      ${fail.fields.host_ids ? html`<p class="error" id=${`${pre}-hosts-error`}>${fail.fields.host_ids}</p>` : null}
    </fieldset>
    <div class="field"><label for=${`${pre}-assignment`}>With several hosts</label>
      <select id=${`${pre}-assignment`} name="assignment">
        ${(
          [
            ['single', 'One host'],
            ['round_robin', 'Round robin: the free host with the fewest bookings'],
            ['collective', 'Collective: every host'],
          ] as const
        ).map(
          ([v, label]) =>
            html`<option value=${v} key=${v} selected=${(l?.assignment ?? 'single') === v}>${label}</option>`,
        )}
      </select></div>
    <${Field} id=${`${pre}-notice`} label="Minimum notice in minutes (optional)" error=${fail.fields.minimum_notice_minutes}>${input('minimum_notice_minutes', { type: 'number', min: 0, defaultValue: l?.minimum_notice_minutes ?? '' })}<//>
    <${Field} id=${`${pre}-ahead`} label="Bookable days ahead (optional)" error=${fail.fields.max_days_ahead}>${input('max_days_ahead', { type: 'number', min: 1, defaultValue: l?.max_days_ahead ?? '' })}<//>
    <${Field} id=${`${pre}-price`} label="Price (optional)" hint="Empty: free. Paid links need Stripe connected." error=${fail.fields.price_amount}>${input('price', { inputmode: 'decimal', defaultValue: l?.price_amount != null ? String(l.price_amount / 100) : '' })}<//>
    <${Field} id=${`${pre}-currency`} label="Currency" error=${fail.fields.price_currency}>${input('price_currency', { defaultValue: l?.price_currency ?? 'usd', maxlength: 3 })}<//>
    <${Questions} pre=${pre} list=${questions} onChange=${setQuestions} errors=${fail.paths ?? {}} error=${fail.fields.questions && !Object.keys(fail.paths ?? {}).some((k) => /^questions\.\d/.test(k)) ? fail.fields.questions : undefined} />
    <${SeriesAndSeats} pre=${pre} link=${l} paths=${fail.paths ?? {}} />
    <label class="choice"><input type="checkbox" name="active" defaultChecked=${l ? l.active : true} /> Active (the public page answers)</label>
    <div class="actions start">
      <button type="submit" disabled=${busy}>${busy ? 'Saving…' : l ? 'Save changes' : 'Create link'}</button>
      ${p.onCancel ? html`<button type="button" class="secondary" onClick=${p.onCancel}>Cancel</button>` : null}
    </div>
  </form>`;
}

function LinkRow(p: { link: Link; hosts: Host[]; onChanged: () => void }): VNode {
  const l = p.link;
  const [editing, setEditing] = useState(false);
  const [embed, setEmbed] = useState(false);
  const [copied, setCopied] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(publicUrl(l.slug));
      setCopied('Link copied.');
    } catch {
      setCopied(`Copy this address: ${publicUrl(l.slug)}`);
    }
  };
  return html`<li class="row">
    <div class="row-head"><h3>${l.title}</h3><span class=${`badge ${l.active ? 'active' : 'paused'}`}>${l.active ? 'active' : 'inactive'}</span>${
      l.seats ? html`<span class="badge seat">Seats: ${l.seats.capacity}</span>` : null
    }${l.recurrence ? html`<span class="badge series">Repeats</span>` : null}</div>
    ${l.recurrence ? html`<p class="hint">Repeats ${l.recurrence.frequencies.join(', ')} · up to ${l.recurrence.max_count} occurrences</p>` : null}
    <p><a href=${`/book/${l.slug}`}>${publicUrl(l.slug)}</a></p>
    <p class="status" role="status">${copied}</p>
    <div class="actions start">
      <button type="button" onClick=${copy}>Copy link<span class="sr"> to ${l.title}</span></button>
      <button type="button" aria-expanded=${editing} onClick=${() => setEditing(!editing)}>Edit<span class="sr"> ${l.title}</span></button>
      <button type="button" aria-expanded=${embed} onClick=${() => setEmbed(!embed)}>Embed<span class="sr"> ${l.title}</span></button>
      <a class="button secondary" href=${`/console/bookings?link=${encodeURIComponent(l.id)}`}>Bookings<span class="sr"> made through ${l.title}</span></a>
      <${Confirm} id=${`delete-${l.id}`} label="Delete" labelSuffix=${l.title} danger=${true} title="Delete this booking link?" body="Its public page stops answering; bookings already made stay." confirmLabel="Delete the link" onConfirm=${async () => {
        await kairos.bookingLinks.delete(l.id);
        p.onChanged();
      }} />
    </div>
    ${
      editing
        ? html`<${LinkForm} hosts=${p.hosts} link=${l} onSaved=${() => {
            setEditing(false);
            p.onChanged();
          }} onCancel=${() => setEditing(false)} />`
        : null
    }
    ${embed ? html`<${Embed} link=${l} />` : null}
  </li>`;
}

export function Links(): VNode {
  const [hosts, setHosts] = useState<Host[]>([]);
  useEffect(() => {
    kairos.hosts
      .list({ limit: 100 })
      .page()
      .then((r) => setHosts(r.hosts.filter((h) => h.status === 'active')))
      .catch(() => {});
  }, []);
  const list = usePaged((cursor) =>
    kairos.bookingLinks
      .list({ limit: 20 })
      .page(cursor)
      .then((r) => ({ items: r.booking_links, pagination: r.pagination })),
  );
  return html`<${ListPanel}
      title="Booking links"
      create="Create a booking link"
      list=${list}
      loading="Loading the links…"
      empty=${html`<p>No booking link yet. Create one below, then copy its address or embed it on your site.</p>`}
      row=${(l: Link) => html`<${LinkRow} key=${`${l.id}-${l.updated_at}`} link=${l} hosts=${hosts} onChanged=${list.reload} />`}
    />
    <${CreatePanel} title="Create a booking link">
      <${LinkForm} hosts=${hosts} onSaved=${list.reload} />
    <//>`;
}
