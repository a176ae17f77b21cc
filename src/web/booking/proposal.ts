/**
 * The proposal or poll recipient's page, `/p/{token}` (docs/api.md#e-mail-and-pages): the proposed
 * times in the visitor's zone; a standard proposal is accepted (one time), countered (new times) or
 * declined with a message; a poll takes one vote (an open poll asks for a name and an e-mail) and
 * shows the votes and, once resolved, the result. Talks to `GET /v1/proposals/by-token` and
 * `POST /v1/proposals/{id}/response` with the link's token; a used link shows what was answered.
 */
import { html } from 'htm/preact';
import { render, type VNode } from 'preact';
import { useState } from 'preact/hooks';
import { api, type Problem } from './shared/api.js';
import { dayKey, detectedZone, whenLabel, zonedInstant, zoneLabel } from './shared/time.js';
import { Field, focusSoon, ZoneSelect } from './shared/ui.js';

type Answer = 'pending' | 'accepted' | 'rejected' | 'countered' | 'voted';

interface PSlot {
  id: string;
  start: string;
  end: string;
  is_selected: boolean;
  votes: number;
}

interface Proposal {
  id: string;
  mode: 'standard' | 'poll';
  poll_variant: 'named' | 'open' | null;
  status: string;
  requester_name: string;
  title: string | null;
  message: string | null;
  slots: PSlot[];
  participants: { name: string | null; response: Answer }[];
  resolution: {
    winning_slot: { id: string; start: string; end: string };
    vote_count: number;
    total_votes: number;
    tie_count: number;
  } | null;
  expires_at: string;
  viewer: {
    name: string | null;
    response: Answer | null;
    voted_slot_id: string | null;
    can_respond: boolean;
  } | null;
}

type Action = 'accept' | 'counter' | 'reject';

const WHY: Record<string, string> = {
  slot_unavailable: 'That time is no longer free for everyone. Pick another time or propose other times.',
  slot_passed: 'That time has already begun. Pick another time or propose other times.',
  slot_mismatch: 'Someone has already accepted a different time: accept that one, or propose other times.',
  already_responded: 'You have already answered this proposal.',
  already_voted: 'This e-mail address has already voted in this poll.',
  proposal_not_open: 'This proposal is no longer open for answers.',
  consent_revoked:
    'This proposal can no longer be accepted: the permission to propose meetings to you was withdrawn, so it has expired.',
  token_expired: 'This link has expired.',
  invalid_token: 'This link has already been used to answer.',
};

function why(p: Problem): string {
  if (p.code && WHY[p.code]) return WHY[p.code] as string;
  const fields = Object.entries(p.errors ?? {}).map(([k, v]) => `${k.replace(/_/g, ' ')}: ${v}`);
  return fields.length ? fields.join('; ') : (p.detail ?? 'The answer could not be sent.');
}

const ANSWERED: Record<Answer, string> = {
  pending: '',
  accepted: 'You accepted this proposal.',
  rejected: 'You declined this proposal.',
  countered: 'You proposed other times.',
  voted: 'You voted in this poll.',
};

function minutesOf(s: { start: string; end: string }): number {
  return Math.round((Date.parse(s.end) - Date.parse(s.start)) / 60_000);
}

function durationLabel(minutes: number): string {
  if (minutes < 60 || minutes % 60) return `${minutes} min`;
  return minutes === 60 ? '1 hour' : `${minutes / 60} hours`;
}

function votesLabel(n: number): string {
  return `${n} ${n === 1 ? 'vote' : 'votes'}`;
}

/** Where the proposal stands, and what this visitor answered (a used link shows it). */
function Standing(p: { proposal: Proposal; zone: string; votedLocally: string | null }): VNode | null {
  const pr = p.proposal;
  const when = (s: { start: string; end: string }) => whenLabel(s.start, s.end, p.zone);
  const lines: (VNode | string)[] = [];
  const mine = pr.viewer?.response;
  const votedId = pr.viewer?.voted_slot_id ?? p.votedLocally;
  const voted = votedId ? pr.slots.find((s) => s.id === votedId) : undefined;
  if (pr.mode === 'poll' && voted) lines.push(`You voted for ${when(voted)}.`);
  else if (mine && mine !== 'pending') lines.push(ANSWERED[mine]);
  const selected = pr.slots.find((s) => s.is_selected);
  if (pr.status === 'accepted' && pr.mode === 'poll' && pr.resolution) {
    const r = pr.resolution;
    lines.push(
      html`<strong>Result: ${when(r.winning_slot)}</strong>, with ${r.vote_count} of ${votesLabel(r.total_votes)}${
        r.tie_count > 1
          ? ` (tied with ${r.tie_count - 1} other ${r.tie_count === 2 ? 'time' : 'times'}: the earliest wins)`
          : ''
      }.`,
    );
  } else if (pr.status === 'accepted' && selected) {
    lines.push(html`<strong>Everyone accepted: ${when(selected)}.</strong> The meeting is booked.`);
  } else if (pr.status === 'proposed' && pr.mode === 'poll' && voted) {
    lines.push('The result comes once everyone has voted or the poll is closed.');
  } else if (pr.status === 'proposed' && selected && mine === 'accepted') {
    lines.push(`Waiting for the others to accept ${when(selected)}.`);
  } else if (pr.status === 'rejected') lines.push('This proposal was declined.');
  else if (pr.status === 'countered') lines.push('Other times were proposed in answer to this one.');
  else if (pr.status === 'expired') lines.push('This proposal expired before it was settled.');
  else if (pr.status === 'cancelled') {
    // Cancelled once settled (a booked meeting), or withdrawn by the organiser while still open.
    const settled =
      pr.mode === 'poll' ? pr.resolution !== null : pr.participants.every((x) => x.response === 'accepted');
    lines.push(settled ? 'This meeting was cancelled.' : `${pr.requester_name} withdrew this proposal.`);
  }
  if (lines.length === 0) return null;
  return html`<section class="panel" aria-labelledby="standing-h">
    <h2 id="standing-h">Status</h2>
    ${lines.map((l) => html`<p>${l}</p>`)}
  </section>`;
}

function SlotChoices(p: {
  slots: PSlot[];
  zone: string;
  votes: boolean;
  name: string;
  checked?: string | null;
}): VNode {
  return html`<fieldset>
    <legend>Times (${zoneLabel(p.zone)})</legend>
    <ul class="choices">
      ${p.slots.map(
        (s) => html`<li><label class=${`choice${s.is_selected ? ' selected' : ''}`}>
          <input type="radio" name=${p.name} value=${s.id} required checked=${p.checked === s.id} />
          <span class="when">${whenLabel(s.start, s.end, p.zone)}</span>
          ${p.votes && html`<span class="votes">${votesLabel(s.votes)}</span>`}
        </label></li>`,
      )}
    </ul>
  </fieldset>`;
}

interface CounterRow {
  day: string;
  time: string;
  minutes: number;
}

function CounterForm(p: {
  proposal: Proposal;
  zone: string;
  busy: boolean;
  onSend(slots: { start: string; end: string }[], message: string): void;
}): VNode {
  const base = p.proposal.slots[0];
  const minutes = base ? minutesOf(base) : 30;
  const firstDay = dayKey(Date.now() + 86_400_000, p.zone);
  const [rows, setRows] = useState<CounterRow[]>([{ day: firstDay, time: '10:00', minutes }]);
  const [error, setError] = useState('');
  const durations = [...new Set([15, 30, 45, 60, 90, 120, minutes])].sort((a, b) => a - b);
  const update = (i: number, patch: Partial<CounterRow>) =>
    setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const submit = (e: Event) => {
    e.preventDefault();
    const slots: { start: string; end: string }[] = [];
    for (const r of rows) {
      const start = zonedInstant(r.day, r.time, p.zone);
      if (!Number.isFinite(start)) {
        setError('Give every proposed time a day and a time.');
        return;
      }
      if (start <= Date.now()) {
        setError('Proposed times must be in the future.');
        return;
      }
      slots.push({
        start: new Date(start).toISOString(),
        end: new Date(start + r.minutes * 60_000).toISOString(),
      });
    }
    setError('');
    const message = (
      (e.currentTarget as HTMLFormElement).elements.namedItem('counter-message') as HTMLTextAreaElement
    ).value.trim();
    p.onSend(slots, message);
  };
  return html`<form onSubmit=${submit} aria-labelledby="counter-h">
    <h2 id="counter-h" tabindex="-1">Propose other times</h2>
    <p class="muted">Up to 10 times, in ${zoneLabel(p.zone)}. ${p.proposal.requester_name} can accept one of them.</p>
    ${rows.map(
      (r, i) => html`<fieldset class="counter-row">
        <legend class="sr-only">Time ${i + 1}</legend>
        <div class="field"><label for=${`c-day-${i}`}>Day</label>
          <input id=${`c-day-${i}`} type="date" required value=${r.day} min=${dayKey(Date.now(), p.zone)}
            onInput=${(e: Event) => update(i, { day: (e.target as HTMLInputElement).value })} /></div>
        <div class="field"><label for=${`c-time-${i}`}>Start</label>
          <input id=${`c-time-${i}`} type="time" required step="300" value=${r.time}
            onInput=${(e: Event) => update(i, { time: (e.target as HTMLInputElement).value })} /></div>
        <div class="field"><label for=${`c-len-${i}`}>Length</label>
          <select id=${`c-len-${i}`} value=${String(r.minutes)}
            onChange=${(e: Event) => update(i, { minutes: Number((e.target as HTMLSelectElement).value) })}>
            ${durations.map((d) => html`<option value=${String(d)}>${durationLabel(d)}</option>`)}
          </select></div>
        ${
          rows.length > 1 &&
          html`<button type="button" class="secondary" aria-label=${`Remove time ${i + 1}`}
            onClick=${() => setRows(rows.filter((_, j) => j !== i))}>Remove</button>`
        }
      </fieldset>`,
    )}
    ${
      rows.length < 10 &&
      html`<p><button type="button" class="link" onClick=${() => setRows([...rows, { ...(rows.at(-1) as CounterRow) }])}>
        Add another time</button></p>`
    }
    <${Field} id="counter-message" label="Message (optional)" type="textarea" />
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <div class="actions"><button type="submit" disabled=${p.busy}>${p.busy ? 'Sending…' : 'Send these times'}</button></div>
  </form>`;
}

function App(p: { token: string; initial: Proposal }): VNode {
  const [proposal, setProposal] = useState(p.initial);
  const [zone, setZone] = useState(detectedZone);
  const [action, setAction] = useState<Action>('accept');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState('');
  const [outcome, setOutcome] = useState('');
  const [votedLocally, setVotedLocally] = useState<string | null>(null);
  const pr = proposal;
  const poll = pr.mode === 'poll';
  const when = (s: { start: string; end: string }) => whenLabel(s.start, s.end, zone);
  const canRespond =
    pr.status === 'proposed' &&
    (pr.viewer ? pr.viewer.can_respond : true) &&
    votedLocally === null &&
    !outcome;

  const reload = async () => {
    const a = await api<{ proposal: Proposal }>('GET', byToken(p.token));
    if (a.ok) setProposal(a.data.proposal);
  };

  const send = async (body: Record<string, unknown>, done: (status: string) => string) => {
    setBusy(true);
    setFailure('');
    const a = await api<{ proposal: { status: string } }>('POST', `/v1/proposals/${pr.id}/response`, {
      token: p.token,
      ...body,
    });
    setBusy(false);
    if (!a.ok) {
      setFailure(why(a.problem));
      focusSoon('answer-error');
      await reload();
      return false;
    }
    setOutcome(done(a.data.proposal.status));
    await reload();
    focusSoon('outcome');
    return true;
  };

  const chosen = (form: HTMLFormElement, name: string): PSlot | undefined => {
    const id = (form.elements.namedItem(name) as RadioNodeList | null)?.value;
    return pr.slots.find((s) => s.id === id);
  };

  const vote = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const slot = chosen(form, 'vote');
    if (!slot) return;
    const field = (n: string) => (form.elements.namedItem(n) as HTMLInputElement | null)?.value.trim();
    const ok = await send(
      {
        action: 'accept',
        selected_slot_id: slot.id,
        ...(pr.poll_variant === 'open'
          ? { voter_name: field('voter_name'), voter_email: field('voter_email') }
          : {}),
      },
      () => `Thank you: your vote for ${when(slot)} is counted.`,
    );
    if (ok) setVotedLocally(slot.id);
  };

  const selected = pr.slots.find((s) => s.is_selected);
  const only = selected ?? (pr.slots.length === 1 ? pr.slots[0] : undefined);
  const accept = async (e: Event) => {
    e.preventDefault();
    const slot = only ?? chosen(e.currentTarget as HTMLFormElement, 'accept');
    if (!slot) return;
    await send({ action: 'accept', selected_slot_id: slot.id }, (status) =>
      status === 'accepted'
        ? `You accepted ${when(slot)}. Everyone has accepted: the meeting is booked and an invitation is on its way.`
        : `You accepted ${when(slot)}. ${pr.requester_name} is told; the meeting is booked once everyone has accepted.`,
    );
  };
  const reject = async (e: Event) => {
    e.preventDefault();
    const message = (
      (e.currentTarget as HTMLFormElement).elements.namedItem('reject-message') as HTMLTextAreaElement
    ).value.trim();
    await send(
      { action: 'reject', ...(message ? { message } : {}) },
      () => `You declined. ${pr.requester_name} is told.`,
    );
  };
  const counter = async (slots: { start: string; end: string }[], message: string) => {
    await send(
      { action: 'counter', counter_slots: slots, ...(message ? { message } : {}) },
      () =>
        `Your ${slots.length === 1 ? 'time was' : 'times were'} sent to ${pr.requester_name}, who can accept one of them.`,
    );
  };

  const error = failure && html`<p class="error" id="answer-error" role="alert" tabindex="-1">${failure}</p>`;
  let respond: VNode | string = '';
  if (canRespond && poll) {
    respond = html`<form class="panel" onSubmit=${vote} aria-labelledby="vote-h">
      <h2 id="vote-h">Vote for the time that suits you</h2>
      <${SlotChoices} slots=${pr.slots} zone=${zone} votes=${true} name="vote" />
      ${
        pr.poll_variant === 'open' &&
        html`<${Field} id="voter_name" label="Your name" required=${true} autocomplete="name" />
        <${Field} id="voter_email" label="Your e-mail" type="email" required=${true} autocomplete="email" />`
      }
      ${error}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Voting…' : 'Vote'}</button></div>
    </form>`;
  } else if (canRespond) {
    const tab = (a: Action, label: string) =>
      html`<button type="button" class=${action === a ? '' : 'secondary'} aria-pressed=${action === a}
        onClick=${() => {
          setAction(a);
          setFailure('');
        }}>${label}</button>`;
    let panel: VNode;
    if (action === 'accept') {
      panel = html`<form onSubmit=${accept} aria-labelledby="accept-h">
        <h2 id="accept-h">Accept a time</h2>
        ${
          only
            ? html`<p>${selected ? 'The time already accepted by others: ' : ''}<strong>${when(only)}</strong>
                <span class="muted"> (${zoneLabel(zone)})</span></p>`
            : html`<${SlotChoices} slots=${pr.slots} zone=${zone} votes=${false} name="accept" />`
        }
        ${error}
        <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Accepting…' : only ? `Accept ${when(only)}` : 'Accept this time'}</button></div>
      </form>`;
    } else if (action === 'counter') {
      panel = html`<div>${error}<${CounterForm} proposal=${pr} zone=${zone} busy=${busy} onSend=${counter} /></div>`;
    } else {
      panel = html`<form onSubmit=${reject} aria-labelledby="reject-h">
        <h2 id="reject-h">Decline</h2>
        <${Field} id="reject-message" label=${`Message to ${pr.requester_name} (optional)`} type="textarea" />
        ${error}
        <div class="actions"><button type="submit" class="danger" disabled=${busy}>${busy ? 'Declining…' : 'Decline'}</button></div>
      </form>`;
    }
    respond = html`<section class="panel" aria-label="Your answer">
      <div class="tabs">${tab('accept', 'Accept')}${tab('counter', 'Propose other times')}${tab('reject', 'Decline')}</div>
      ${panel}
    </section>`;
  }

  const showVotes = poll && !canRespond;
  const others = pr.participants.filter((x) => x.name);
  return html`<div class="card">
    <header class="head">
      <p class="eyebrow">${poll ? 'A poll' : 'A meeting proposal'} from ${pr.requester_name}</p>
      <h1 id="title">${pr.title ?? (poll ? 'When can you meet?' : 'Meeting proposal')}</h1>
      ${pr.message && html`<p class="description message">${pr.message}</p>`}
      <p class="facts">
        ${pr.slots[0] && html`<span>${durationLabel(minutesOf(pr.slots[0]))}</span>`}
        ${pr.status === 'proposed' && html`<span>Answer by ${new Date(pr.expires_at).toLocaleString(undefined, { timeZone: zone, dateStyle: 'medium', timeStyle: 'short' })}</span>`}
      </p>
    </header>
    <main class="body">
      ${outcome && html`<p class="success" id="outcome" role="status" tabindex="-1">${outcome}</p>`}
      <div class="options"><${ZoneSelect} zone=${zone} onChange=${setZone} /></div>
      <${Standing} proposal=${pr} zone=${zone} votedLocally=${votedLocally} />
      ${
        !canRespond &&
        html`<section aria-labelledby="times-h">
        <h2 id="times-h">${poll ? 'Votes' : 'Proposed times'}</h2>
        <ul class="choices">
          ${pr.slots.map(
            (
              s,
            ) => html`<li class=${`choice${s.is_selected || pr.resolution?.winning_slot.id === s.id ? ' selected' : ''}`}>
              <span class="when">${when(s)}</span>${showVotes && html`<span class="votes">${votesLabel(s.votes)}</span>`}</li>`,
          )}
        </ul></section>`
      }
      ${respond}
      ${
        others.length > 0 &&
        html`<section class="who" aria-labelledby="who-h"><h2 id="who-h">${poll ? 'Voters' : 'Invited'}</h2>
        <ul>${others.map((x) => html`<li>${x.name} <span class="muted">(${x.response})</span></li>`)}</ul></section>`
      }
      <p class="muted">Times are shown in ${zoneLabel(zone)}.</p>
    </main>
  </div>`;
}

function byToken(token: string): string {
  return `/v1/proposals/by-token?token=${encodeURIComponent(token)}`;
}

async function main(): Promise<void> {
  const root = document.getElementById('app');
  if (!root) return;
  const token = location.pathname.split('/').pop() ?? '';
  const a = await api<{ proposal: Proposal }>('GET', byToken(token));
  if (!a.ok) {
    root.textContent = a.problem.detail ?? 'This proposal link is not valid.';
    return;
  }
  root.textContent = '';
  render(html`<${App} token=${token} initial=${a.data.proposal} />`, root);
}

void main();
