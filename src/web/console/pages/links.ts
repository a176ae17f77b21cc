/**
 * Booking links: create and edit (slug, title, description, durations, hosts, assignment, notice,
 * horizon, price, active, the questions asked of the person booking: pages/questions.ts), copy the public URL, delete after confirmation; the embed snippet
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

type Link = Item<Result<'listBookingLinks'>>;
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
    <div class="row-head"><h3>${l.title}</h3><span class=${`badge ${l.active ? 'active' : 'paused'}`}>${l.active ? 'active' : 'inactive'}</span></div>
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
