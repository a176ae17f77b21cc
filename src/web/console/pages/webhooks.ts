/**
 * Webhooks: create one (event types picked from the catalogue; the signing secret shown once), the
 * list with pause/resume, rotate the secret (shown once), send a test event, delete; each webhook's
 * deliveries with every attempt (time, status, duration, error) and a retry.
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { data, failure, kairos } from '../lib/api.js';
import { useSubmit } from '../lib/form.js';
import { CreatePanel, ListPanel, PagedRows, usePaged } from '../lib/list.js';
import { Confirm, Field, FormError, ShownOnce, when } from '../lib/ui.js';

type Webhook = Item<Result<'listWebhooks'>>;
type Delivery = Item<Result<'listWebhookDeliveries'>>;

function CreateWebhook(p: { onCreated: () => void }): VNode {
  const [secret, setSecret] = useState<string | null>(null);
  const events = data.events ?? [];
  const { fail, busy, submit } = useSubmit(async (f, form) => {
    const description = String(f.get('description') ?? '').trim();
    const body = {
      url: String(f.get('url') ?? '').trim(),
      events: f.getAll('events').map(String),
      ...(description ? { description } : {}),
    };
    const r = await kairos.webhooks.create(body as Parameters<typeof kairos.webhooks.create>[0]);
    setSecret(r.secret);
    form.reset();
    p.onCreated();
  });
  return html`<${CreatePanel} title="Add a webhook">
    ${secret ? html`<${ShownOnce} id="new-secret" label="The webhook’s signing secret" value=${secret} />` : null}
    <form onSubmit=${submit} novalidate>
      <${FormError} message=${fail.message} />
      <${Field} id="hook-url" label="Receiver URL" hint="Where Kairos POSTs the events (https)." error=${fail.fields.url}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="url" type="url" required />`}
      <//>
      <fieldset aria-describedby=${fail.fields.events ? 'events-error' : undefined}>
        <legend>Events</legend>
        <div class="choices">
          ${events.map(
            (t) =>
              html`<label class="choice" key=${t}><input type="checkbox" name="events" value=${t} /> ${t}</label>`,
          )}
        </div>
        ${fail.fields.events ? html`<p class="error" id="events-error">${fail.fields.events}</p>` : null}
      </fieldset>
      <${Field} id="hook-description" label="Description (optional)" error=${fail.fields.description}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="description" maxlength="2000" />`}
      <//>
      <button type="submit" disabled=${busy}>${busy ? 'Adding…' : 'Add webhook'}</button>
    </form>
  <//>`;
}

function Attempts(p: { delivery: Delivery }): VNode {
  if (p.delivery.attempts.length === 0) return html`<p class="hint">No attempt yet.</p>`;
  return html`<table class="attempts">
    <caption class="sr">Attempts of delivery ${p.delivery.id}</caption>
    <thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Status</th><th scope="col">Duration</th><th scope="col">Error</th></tr></thead>
    <tbody>
      ${p.delivery.attempts.map(
        (a) => html`<tr key=${a.number}>
          <td>${a.number}${a.manual ? ' (retry)' : ''}</td>
          <td>${when(a.at)}</td>
          <td>${a.response_status ?? '—'}</td>
          <td>${a.duration_ms} ms</td>
          <td>${a.error ?? '—'}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function Deliveries(p: { webhook: Webhook; version: number }): VNode {
  const list = usePaged(
    (cursor) =>
      kairos.webhooks
        .deliveries(p.webhook.id, { limit: 10 })
        .page(cursor)
        .then((r) => ({ items: r.deliveries, pagination: r.pagination })),
    [p.version],
  );
  const [error, setError] = useState<string | null>(null);
  // Long work shows progress: while a delivery is still pending, look again every second (a minute at most).
  const [polls, setPolls] = useState(0);
  const pending = (list.items ?? []).some((d) => d.status === 'pending');
  useEffect(() => {
    if (!pending || polls >= 60) return;
    const timer = setTimeout(() => {
      setPolls((n) => n + 1);
      list.reload();
    }, 1000);
    return () => clearTimeout(timer);
  }, [list.items]);
  const retry = async (d: Delivery) => {
    setError(null);
    try {
      await kairos.webhooks.retryDelivery(p.webhook.id, d.id);
      setPolls(0);
      list.reload();
    } catch (err) {
      setError(failure(err).message);
    }
  };
  return html`<section class="deliveries" aria-label=${`Deliveries to ${p.webhook.url}`}>
    <h4>Deliveries</h4>
    ${pending ? html`<p class="hint" role="status">Delivering… this list updates by itself.</p>` : null}
    <${FormError} message=${error} />
    <${PagedRows}
      list=${list}
      loading="Loading the deliveries…"
      empty=${html`<p class="hint">No delivery yet. Send a test event to see one here.</p>`}
      row=${(d: Delivery) => html`<li key=${d.id} class="row delivery">
        <div class="row-head"><strong>${d.event_type}</strong><span class=${`badge ${d.status}`}>${d.status}</span><span class="hint">${when(d.created_at)}</span></div>
        <${Attempts} delivery=${d} />
        ${d.status === 'failed' ? html`<button type="button" onClick=${() => retry(d)}>Retry<span class="sr"> delivery ${d.id}</span></button>` : null}
      </li>`}
    />
  </section>`;
}

function WebhookRow(p: { webhook: Webhook; onChanged: () => void }): VNode {
  const w = p.webhook;
  const [open, setOpen] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const act = async (what: () => Promise<unknown>, done: string) => {
    setError(null);
    try {
      await what();
      setNotice(done);
      setVersion((v) => v + 1);
    } catch (err) {
      setError(failure(err).message);
    }
  };
  return html`<li class="row">
    <div class="row-head"><h3>${w.url}</h3><span class=${`badge ${w.active ? 'active' : 'paused'}`}>${w.active ? 'active' : 'paused'}</span></div>
    <dl class="facts">
      <div><dt>Events</dt><dd>${w.events.join(', ')}</dd></div>
      ${w.description ? html`<div><dt>Description</dt><dd>${w.description}</dd></div>` : null}
      <div><dt>Created</dt><dd>${when(w.created_at)}</dd></div>
    </dl>
    ${secret ? html`<${ShownOnce} id=${`secret-${w.id}`} label="The new signing secret" value=${secret} />` : null}
    <${FormError} message=${error} />
    <p class="status" role="status">${notice}</p>
    <div class="actions start">
      <button type="button" onClick=${() => act(() => kairos.webhooks.test(w.id), 'Test event sent.').then(() => setOpen(true))}>Send test event</button>
      <button type="button" aria-expanded=${open} onClick=${() => setOpen(!open)}>${open ? 'Hide deliveries' : 'Show deliveries'}</button>
      <button type="button" onClick=${() =>
        act(
          () => kairos.webhooks.update(w.id, { active: !w.active }),
          w.active ? 'Paused.' : 'Resumed.',
        ).then(p.onChanged)}>${w.active ? 'Pause' : 'Resume'}</button>
      <${Confirm}
        id=${`rotate-${w.id}`}
        label="Rotate secret"
        title="Rotate the signing secret?"
        body="A new secret signs deliveries from now on; the previous one keeps signing them beside it for a while, so your receiver can switch over."
        confirmLabel="Rotate the secret"
        onConfirm=${async () => {
          const r = await kairos.webhooks.rotateSecret(w.id);
          setSecret(r.webhook.secret);
        }}
      />
      <${Confirm}
        id=${`delete-${w.id}`}
        label="Delete"
        labelSuffix=${w.url}
        danger=${true}
        title="Delete this webhook?"
        body="No more events are sent to this URL. This cannot be undone."
        confirmLabel="Delete the webhook"
        onConfirm=${async () => {
          await kairos.webhooks.delete(w.id);
          p.onChanged();
        }}
      />
    </div>
    ${open ? html`<${Deliveries} webhook=${w} version=${version} />` : null}
  </li>`;
}

export function Webhooks(): VNode {
  const list = usePaged((cursor) =>
    kairos.webhooks
      .list({ limit: 20 })
      .page(cursor)
      .then((r) => ({ items: r.webhooks, pagination: r.pagination })),
  );
  return html`<${ListPanel}
      title="Webhooks"
      create="Add a webhook"
      list=${list}
      loading="Loading the webhooks…"
      empty=${html`<p>No webhooks yet. Add one below to hear about bookings as they happen.</p>`}
      row=${(w: Webhook) => html`<${WebhookRow} key=${`${w.id}-${w.active}`} webhook=${w} onChanged=${list.reload} />`}
    />
    <${CreateWebhook} onCreated=${list.reload} />`;
}
