/**
 * Proposals and polls: create one (a poll — open, or named by invitees' e-mails — or a standard
 * proposal to principals), its links shown once; the list by status; each one's slots with their
 * votes and its participants' answers; close a poll (the most-voted time wins); cancel.
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import { failure, kairos } from '../lib/api.js';
import { textOf, useSubmit } from '../lib/form.js';
import { CreatePanel, ListPanel, usePaged } from '../lib/list.js';
import { Confirm, Copyable, Field, FormError, when } from '../lib/ui.js';

type Proposal = Item<Result<'listProposals'>>;
interface SlotRow {
  start: string;
  minutes: number;
}

/**
 * The first weekday (Monday to Friday) at `hour`, local time, at least 26 hours from now: a proposal's
 * times must be in everyone's working hours, which are weekdays by default, so a poll started on a
 * Friday or at the weekend is offered Monday rather than a day nobody works.
 */
function nextWeekdayAt(hour: number): string {
  // Poll times must start at least 25 hours ahead (else `earliest_slot_too_soon`): an hour more leaves
  // time to fill in the form. Days are added in local time, so `hour` stays the hour across DST.
  const earliest = Date.now() + 26 * 3_600_000;
  const d = new Date();
  d.setHours(hour, 0, 0, 0);
  while (d.getTime() < earliest || d.getDay() === 0 || d.getDay() === 6) d.setDate(d.getDate() + 1);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(hour)}:00`;
}

function CreatePoll(p: { onCreated: () => void }): VNode {
  const [slots, setSlots] = useState<SlotRow[]>([{ start: nextWeekdayAt(10), minutes: 30 }]);
  const [links, setLinks] = useState<{ label: string; url: string }[]>([]);
  const { fail, busy, submit } = useSubmit(async (f, form) => {
    const text = textOf(f);
    const emails = text('emails')
      .split(/[\s,]+/)
      .filter(Boolean);
    const body: Record<string, unknown> = {
      mode: 'poll',
      title: text('title'),
      slots: slots.map((s) => {
        const start = new Date(s.start);
        return {
          start: start.toISOString(),
          end: new Date(start.getTime() + s.minutes * 60_000).toISOString(),
        };
      }),
    };
    if (text('message')) body.message = text('message');
    if (emails.length) body.participant_emails = emails;
    const r = await kairos.proposals.create(body as Parameters<typeof kairos.proposals.create>[0]);
    const made = [
      ...(r.magic_link_url ? [{ label: 'The poll’s shared link', url: r.magic_link_url }] : []),
      ...(r.invitations ?? []).map((i) => ({ label: `Link for ${i.email}`, url: i.magic_link_url })),
    ];
    setLinks(made);
    form.reset();
    p.onCreated();
  });
  const setSlot = (i: number, change: Partial<SlotRow>) =>
    setSlots(slots.map((s, j) => (j === i ? { ...s, ...change } : s)));
  return html`<${CreatePanel} title="Create a poll">
    ${
      links.length > 0
        ? html`<div class="once"><p class="once-title">Send these links: they are shown only once.</p>
            ${links.map((l, i) => html`<${Copyable} key=${l.url} id=${`poll-link-${i}`} label=${l.label} value=${l.url} />`)}</div>`
        : null
    }
    <form onSubmit=${submit} novalidate>
      <${FormError} message=${fail.message} />
      <${Field} id="poll-title" label="Title" error=${fail.fields.title}>${(a: Record<string, unknown>) => html`<input ...${a} name="title" required />`}<//>
      <${Field} id="poll-message" label="Message (optional)" error=${fail.fields.message}>${(a: Record<string, unknown>) => html`<input ...${a} name="message" />`}<//>
      <${Field} id="poll-emails" label="Invitees’ e-mails (optional)" hint="Each gets their own link. Leave empty for an open poll with one shared link." error=${fail.fields.participant_emails}>${(a: Record<string, unknown>) => html`<input ...${a} name="emails" />`}<//>
      <fieldset>
        <legend>Times to vote on</legend>
        ${slots.map(
          (s, i) => html`<div class="rule" key=${i}>
            <span class="time"><label for=${`slot-start-${i}`}>Starts</label><input id=${`slot-start-${i}`} type="datetime-local" value=${s.start} onChange=${(e: Event) => setSlot(i, { start: (e.currentTarget as HTMLInputElement).value })} /></span>
            <span class="time"><label for=${`slot-min-${i}`}>Minutes</label><input id=${`slot-min-${i}`} type="number" min="5" value=${s.minutes} onChange=${(e: Event) => setSlot(i, { minutes: Number((e.currentTarget as HTMLInputElement).value) })} /></span>
            ${slots.length > 1 ? html`<button type="button" class="secondary" onClick=${() => setSlots(slots.filter((_, j) => j !== i))}>Remove<span class="sr"> time ${i + 1}</span></button>` : null}
          </div>`,
        )}
        ${fail.fields.slots ? html`<p class="error">${fail.fields.slots}</p>` : null}
        <button type="button" class="secondary" onClick=${() => setSlots([...slots, { start: nextWeekdayAt(11 + slots.length), minutes: 30 }])}>Add a time</button>
      </fieldset>
      <div><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create poll'}</button></div>
    </form>
  <//>`;
}

function ProposalRow(p: { proposal: Proposal; onChanged: () => void }): VNode {
  const x = p.proposal;
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const close = async () => {
    setError(null);
    try {
      await kairos.proposals.close(x.id, {});
      p.onChanged();
    } catch (err) {
      setError(failure(err).message);
    }
  };
  const live = x.status === 'proposed';
  return html`<li class="row">
    <div class="row-head"><h3>${x.title ?? (x.mode === 'poll' ? 'Poll' : 'Proposal')}</h3><span class=${`badge ${x.status}`}>${x.status}</span></div>
    <p class="hint">${x.mode === 'poll' ? `${x.poll_variant ?? ''} poll` : 'proposal'} · created ${when(x.created_at)} · expires ${when(x.expires_at)}</p>
    <${FormError} message=${error} />
    <div class="actions start">
      <button type="button" aria-expanded=${open} onClick=${() => setOpen(!open)}>${open ? 'Hide details' : 'Details'}<span class="sr"> of ${x.title ?? x.id}</span></button>
      ${live && x.mode === 'poll' ? html`<button type="button" onClick=${close}>Close poll<span class="sr"> ${x.title ?? ''}</span></button>` : null}
      ${
        live
          ? html`<${Confirm} id=${`cancel-${x.id}`} label="Cancel" labelSuffix=${x.title ?? x.id} danger=${true} title="Cancel this?" body="Participants can no longer answer; nothing is booked." confirmLabel="Cancel it" onConfirm=${async () => {
              await kairos.proposals.cancel(x.id, {});
              p.onChanged();
            }} />`
          : null
      }
    </div>
    ${
      open
        ? html`<table class="attempts">
            <caption class="sr">Times and votes</caption>
            <thead><tr><th scope="col">Time</th><th scope="col">Votes</th><th scope="col">Chosen</th></tr></thead>
            <tbody>${x.slots.map((s) => html`<tr key=${s.id}><td>${when(s.start)} – ${new Date(s.end).toLocaleTimeString(undefined, { timeStyle: 'short' })}</td><td>${s.votes}</td><td>${s.is_selected || x.resolution?.winning_slot.id === s.id ? 'yes' : ''}</td></tr>`)}</tbody>
          </table>
          <p class="hint">Participants: ${x.participants.length === 0 ? 'none named (open poll)' : x.participants.map((q) => `${q.name || q.email} (${q.response})`).join(', ')}</p>
          ${x.booking_error ? html`<p class="error">${x.booking_error}</p>` : null}`
        : null
    }
  </li>`;
}

export function Polls(): VNode {
  const list = usePaged((cursor) =>
    kairos.proposals
      .list({ limit: 20 })
      .page(cursor)
      .then((r) => ({ items: r.proposals, pagination: r.pagination })),
  );
  return html`<${ListPanel}
      title="Proposals and polls"
      create="Create a poll"
      list=${list}
      loading="Loading…"
      empty=${html`<p>No proposal or poll yet. Create a poll below to find a time that suits everyone.</p>`}
      row=${(x: Proposal) => html`<${ProposalRow} key=${`${x.id}-${x.status}`} proposal=${x} onChanged=${list.reload} />`}
    />
    <${CreatePoll} onCreated=${list.reload} />`;
}
