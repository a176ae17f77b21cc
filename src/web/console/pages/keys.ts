/**
 * API keys: create a secret or publishable key (scopes, rate limit, allowed domains, expiry), live or
 * test (docs/api.md#test-mode), shown once with a copy button; the list of one mode at a time (the
 * Live | Test switch, kept in `?mode=`), each test key with a visible "Test" badge, with prefix,
 * last 4, last use and requests; revoke after a confirmation.
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { kairos } from '../lib/api.js';
import { textOf, useSubmit } from '../lib/form.js';
import { CreatePanel, type PageOf, PagedRows, usePaged } from '../lib/list.js';
import { Confirm, Field, FormError, ShownOnce, when } from '../lib/ui.js';

type ApiKey = Item<Result<'listApiKeys'>>;
type Mode = ApiKey['environment'];

const PAGE = 20;

/** The mode the page opens in: `?mode=test`, else live. */
function initialMode(): Mode {
  return new URLSearchParams(location.search).get('mode') === 'test' ? 'test' : 'live';
}

/**
 * One page of the keys of `mode`, from the server's pages at `cursor` on: the keys are listed
 * newest first for both modes together, so pages are read until one holds a page's worth of the
 * mode's keys (or the list ends); the cursor after the last page read is the next one.
 */
async function keysOf(mode: Mode, cursor: string | undefined): Promise<PageOf<ApiKey>> {
  const items: ApiKey[] = [];
  let at = cursor;
  for (let read = 0; ; read++) {
    const r = await kairos.apiKeys.list({ limit: PAGE }).page(at);
    items.push(...r.api_keys.filter((k) => k.environment === mode));
    if (!r.pagination.has_more || items.length >= PAGE || read >= 9) {
      return { items, pagination: r.pagination };
    }
    at = r.pagination.next_cursor ?? undefined;
  }
}

/** Which mode's keys the list shows: two radio buttons (arrow keys move between them). */
function ModeSwitch(p: { mode: Mode; onChange: (m: Mode) => void }): VNode {
  return html`<fieldset class="switch" aria-describedby="mode-hint">
    <legend>Show keys of</legend>
    <label class="choice"><input type="radio" id="mode-live" name="mode" value="live" checked=${p.mode === 'live'} onChange=${() => p.onChange('live')} /> Live</label>
    <label class="choice"><input type="radio" id="mode-test" name="mode" value="test" checked=${p.mode === 'test'} onChange=${() => p.onChange('test')} /> Test</label>
  </fieldset>
  <p class="hint" id="mode-hint">${
    p.mode === 'test'
      ? 'Test keys act in test mode: their hosts, links and bookings are apart from live ones, no mail or calendar event leaves the server, and time runs on the account’s test clock.'
      : 'Live keys act on your real hosts, links and bookings.'
  }</p>`;
}
interface Usage {
  requests: number;
  last_used_at: string | null;
}

const SCOPES = {
  secret: ['read', 'write'],
  publishable: ['read:availability', 'create:booking'],
} as const;

function CreateKey(p: { mode: Mode; onCreated: (mode: Mode) => void }): VNode {
  const [type, setType] = useState<'secret' | 'publishable'>('secret');
  const [environment, setEnvironment] = useState<Mode>(p.mode);
  // The form follows the list's switch until the user picks the mode here.
  useEffect(() => setEnvironment(p.mode), [p.mode]);
  const [created, setCreated] = useState<{ key: string; name: string } | null>(null);
  const { fail, busy, submit } = useSubmit(async (f, form) => {
    const text = textOf(f);
    const body: Record<string, unknown> = {
      name: text('name'),
      key_type: type,
      environment,
      scopes: f.getAll('scopes').map(String),
    };
    if (text('rate_limit_per_hour')) body.rate_limit_per_hour = Number(text('rate_limit_per_hour'));
    if (type === 'publishable' && text('allowed_domains')) {
      body.allowed_domains = text('allowed_domains')
        .split(/[\s,]+/)
        .filter(Boolean);
    }
    if (text('expires_at')) body.expires_at = new Date(text('expires_at')).toISOString();
    const r = await kairos.apiKeys.create(body as Parameters<typeof kairos.apiKeys.create>[0]);
    setCreated({ key: r.api_key.key, name: r.api_key.name });
    form.reset();
    p.onCreated(r.api_key.environment);
  });
  return html`<${CreatePanel} title="Create a key">
    ${created ? html`<${ShownOnce} id="new-key" label=${`The key “${created.name}”`} value=${created.key} />` : null}
    <form onSubmit=${submit} novalidate>
      <${FormError} message=${fail.message} />
      <${Field} id="key-name" label="Name" error=${fail.fields.name}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="name" required maxlength="200" />`}
      <//>
      <fieldset>
        <legend>Type</legend>
        <label class="choice"><input type="radio" name="key_type" value="secret" checked=${type === 'secret'} onChange=${() => setType('secret')} /> Secret (server-side code)</label>
        <label class="choice"><input type="radio" name="key_type" value="publishable" checked=${type === 'publishable'} onChange=${() => setType('publishable')} /> Publishable (web pages)</label>
      </fieldset>
      <fieldset aria-describedby="key-environment-hint">
        <legend>Mode</legend>
        <label class="choice"><input type="radio" id="key-live" name="environment" value="live" checked=${environment === 'live'} onChange=${() => setEnvironment('live')} /> Live</label>
        <label class="choice"><input type="radio" id="key-test" name="environment" value="test" checked=${environment === 'test'} onChange=${() => setEnvironment('test')} /> Test (svc_…_test_: test mode, nothing real)</label>
        <p class="hint" id="key-environment-hint">A test key’s requests never touch live data, send no mail and write no calendar event.</p>
      </fieldset>
      <fieldset aria-describedby=${fail.fields.scopes ? 'scopes-error' : undefined}>
        <legend>Scopes</legend>
        ${SCOPES[type].map(
          (s) =>
            html`<label class="choice" key=${s}><input type="checkbox" name="scopes" value=${s} defaultChecked /> ${s}</label>`,
        )}
        ${fail.fields.scopes ? html`<p class="error" id="scopes-error">${fail.fields.scopes}</p>` : null}
      </fieldset>
      ${
        type === 'publishable'
          ? html`<${Field} id="key-domains" label="Allowed domains" hint="Hostnames of the sites that may use the key, separated by spaces or commas (e.g. example.com)." error=${fail.fields.allowed_domains}>
              ${(a: Record<string, unknown>) => html`<input ...${a} name="allowed_domains" />`}
            <//>`
          : null
      }
      <${Field} id="key-limit" label="Requests per hour (optional)" hint="At most the account’s hourly limit." error=${fail.fields.rate_limit_per_hour}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="rate_limit_per_hour" type="number" min="1" inputmode="numeric" />`}
      <//>
      <${Field} id="key-expiry" label="Expires (optional)" error=${fail.fields.expires_at}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="expires_at" type="datetime-local" />`}
      <//>
      <button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create key'}</button>
    </form>
  <//>`;
}

export function Keys(): VNode {
  const [mode, setMode] = useState<Mode>(initialMode);
  const list = usePaged((cursor) => keysOf(mode, cursor), [mode]);
  const show = (m: Mode) => {
    if (m === mode) return;
    const url = new URL(location.href);
    if (m === 'test') url.searchParams.set('mode', 'test');
    else url.searchParams.delete('mode');
    history.replaceState(null, '', url);
    setMode(m);
    list.reset();
  };
  const [usage, setUsage] = useState<Record<string, Usage>>({});
  useEffect(() => {
    let live = true;
    const active = (list.items ?? []).filter((k) => k.status === 'active');
    Promise.all(active.map((k) => kairos.apiKeys.stats(k.id, { window: 'week' }).catch(() => null))).then(
      (stats) => {
        if (!live) return;
        const u: Record<string, Usage> = {};
        for (const r of stats)
          if (r) u[r.stats.key_id] = { requests: r.stats.requests, last_used_at: r.stats.last_used_at };
        setUsage(u);
      },
    );
    return () => {
      live = false;
    };
  }, [list.items]);
  const reload = list.reload;
  return html`<section class="panel" aria-labelledby="list-title">
    <div class="panel-head">
      <h2 id="list-title">Keys</h2>
      <a class="button secondary" href="#create">Create a key</a>
    </div>
    <${ModeSwitch} mode=${mode} onChange=${show} />
    <${PagedRows}
      list=${list}
      loading="Loading the keys…"
      empty=${
        mode === 'test'
          ? html`<p>No test keys yet. Create one below (Mode: Test) to try your integration without touching real bookings.</p>`
          : html`<p>No keys yet. Create a secret key below for your server, or a publishable key for a booking widget on your site.</p>`
      }
      row=${(k: ApiKey) => html`<li key=${k.id} class="row">
                <div class="row-head"><h3>${k.name}</h3>${k.environment === 'test' ? html`<span class="badge test">Test</span>` : null}<span class=${`badge ${k.status}`}>${k.status}</span></div>
                <dl class="facts">
                  <div><dt>Mode</dt><dd>${k.environment}</dd></div>
                  <div><dt>Type</dt><dd>${k.key_type}</dd></div>
                  <div><dt>Key</dt><dd><code>${k.prefix}…${k.last4}</code></dd></div>
                  <div><dt>Scopes</dt><dd>${k.scopes.join(', ')}</dd></div>
                  <div><dt>Limit</dt><dd>${k.rate_limit_per_hour} / hour</dd></div>
                  ${k.allowed_domains.length ? html`<div><dt>Domains</dt><dd>${k.allowed_domains.join(', ')}</dd></div>` : null}
                  <div><dt>Last used</dt><dd>${when(usage[k.id]?.last_used_at)}</dd></div>
                  <div><dt>Requests (7 days)</dt><dd>${usage[k.id]?.requests ?? '—'}</dd></div>
                  <div><dt>Expires</dt><dd>${k.expires_at ? when(k.expires_at) : 'never'}</dd></div>
                </dl>
                ${
                  k.status === 'active'
                    ? html`<${Confirm}
                        id=${`revoke-${k.id}`}
                        label="Revoke"
                        labelSuffix=${k.name}
                        danger=${true}
                        title=${`Revoke “${k.name}”?`}
                        body="Requests with this key are refused from now on. This cannot be undone."
                        confirmLabel="Revoke the key"
                        onConfirm=${async () => {
                          await kairos.apiKeys.revoke(k.id);
                          reload();
                        }}
    />`
                    : null
                }
                </li>`}
    />
  </section>
    <${CreateKey}
      mode=${mode}
      onCreated=${(m: Mode) => {
        if (m !== mode) show(m);
        else if (list.hasPrevious) list.reset();
        else reload();
      }}
    />`;
}
