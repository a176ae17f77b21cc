/**
 * Consents and network: the principals connected to you; the consents you granted and those granted
 * to you (scopes, state, expiry); grant a consent to a connection; revoke one; remove a connection.
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type Failure, failure, kairos } from '../lib/api.js';
import { Confirm, Empty, Field, FormError, Pager, useCursor, when } from '../lib/ui.js';

type Connection = Item<Result<'listConnections'>>;
type Consent = Item<Result<'listConsents'>>;
const SCOPES = ['availability:read:freebusy', 'availability:read:details', 'booking:propose'] as const;
const NO_FAILURE: Failure = { message: '', fields: {} };

function Grant(p: { connections: Connection[]; onGranted: () => void }): VNode {
  const [fail, setFail] = useState<Failure>(NO_FAILURE);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const expires = String(f.get('expires_at') ?? '');
    const body: Record<string, unknown> = {
      grantee_id: String(f.get('grantee_id') ?? ''),
      scopes: f.getAll('scopes').map(String),
      ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
    };
    setBusy(true);
    setFail(NO_FAILURE);
    try {
      await kairos.consents.grant(body as Parameters<typeof kairos.consents.grant>[0]);
      form.reset();
      p.onGranted();
    } catch (err) {
      setFail(failure(err));
    } finally {
      setBusy(false);
    }
  };
  if (p.connections.length === 0) {
    return html`<p class="hint">Consents are granted to connections. Invite someone to your network through the API (POST /v1/network/invitations) first.</p>`;
  }
  return html`<form onSubmit=${submit} novalidate>
    <${FormError} message=${fail.message} />
    <${Field} id="grantee" label="Grant to" error=${fail.fields.grantee_id}>
      ${(a: Record<string, unknown>) => html`<select ...${a} name="grantee_id">${p.connections.map((c) => html`<option value=${c.principal_id} key=${c.principal_id}>${c.display_name}</option>`)}</select>`}
    <//>
    <fieldset>
      <legend>What they may do</legend>
      ${SCOPES.map((s) => html`<label class="choice" key=${s}><input type="checkbox" name="scopes" value=${s} defaultChecked=${s === 'availability:read:freebusy'} /> ${s}</label>`)}
      ${fail.fields.scopes ? html`<p class="error">${fail.fields.scopes}</p>` : null}
    </fieldset>
    <${Field} id="consent-expiry" label="Expires (optional)" error=${fail.fields.expires_at}>
      ${(a: Record<string, unknown>) => html`<input ...${a} name="expires_at" type="datetime-local" />`}
    <//>
    <div><button type="submit" disabled=${busy}>${busy ? 'Granting…' : 'Grant consent'}</button></div>
  </form>`;
}

export function Network(): VNode {
  const conPager = useCursor();
  const consPager = useCursor();
  const [role, setRole] = useState<'grantor' | 'grantee'>('grantor');
  const [connections, setConnections] = useState<Connection[] | null>(null);
  const [conNext, setConNext] = useState<string | null>(null);
  const [consents, setConsents] = useState<Consent[] | null>(null);
  const [consNext, setConsNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const reload = () => setVersion((v) => v + 1);
  useEffect(() => {
    kairos.network
      .list({ limit: 20 })
      .page(conPager.cursor)
      .then((r) => {
        setConnections(r.connections);
        setConNext(r.pagination.has_more ? r.pagination.next_cursor : null);
      })
      .catch((err) => setError(failure(err).message));
  }, [conPager.cursor, version]);
  useEffect(() => {
    kairos.consents
      .list({ role, limit: 20 })
      .page(consPager.cursor)
      .then((r) => {
        setConsents(r.consents);
        setConsNext(r.pagination.has_more ? r.pagination.next_cursor : null);
      })
      .catch((err) => setError(failure(err).message));
  }, [consPager.cursor, role, version]);
  const names = new Map((connections ?? []).map((c) => [c.principal_id, c.display_name]));
  const name = (id: string) => names.get(id) ?? id;
  return html`<${FormError} message=${error} />
    <section class="panel" aria-labelledby="net-title">
      <h2 id="net-title">Your network</h2>
      ${connections === null ? html`<p role="status">Loading the network…</p>` : null}
      ${connections?.length === 0 ? html`<${Empty}><p>No connection yet. Invite colleagues or clients (POST /v1/network/invitations); once they accept, you can grant them consents here.</p><//>` : null}
      <ul class="rows">
        ${(connections ?? []).map(
          (c) => html`<li class="row" key=${c.principal_id}>
            <div class="row-head"><h3>${c.display_name}</h3><span class="hint">${c.relationship_type} · since ${when(c.connected_at)}</span></div>
            <${Confirm} id=${`remove-${c.principal_id}`} label="Remove" labelSuffix=${c.display_name} danger=${true} title=${`Remove ${c.display_name} from your network?`} body="Consents between you stop working." confirmLabel="Remove the connection" onConfirm=${async () => {
              await kairos.network.remove(c.principal_id, {});
              reload();
            }} />
          </li>`,
        )}
      </ul>
      <${Pager} hasPrevious=${conPager.hasPrevious} hasNext=${conNext !== null} onPrevious=${conPager.previous} onNext=${() => conNext && conPager.next(conNext)} />
    </section>
    <section class="panel" aria-labelledby="grant-title">
      <h2 id="grant-title">Grant a consent</h2>
      <${Grant} connections=${connections ?? []} onGranted=${reload} />
    </section>
    <section class="panel" aria-labelledby="consents-title">
      <h2 id="consents-title">Consents</h2>
      <div class="field"><label for="consent-role">Show</label>
        <select id="consent-role" onChange=${(e: Event) => {
          setRole((e.currentTarget as HTMLSelectElement).value as 'grantor' | 'grantee');
          consPager.reset();
        }}>
          <option value="grantor" selected=${role === 'grantor'}>Granted by you</option>
          <option value="grantee" selected=${role === 'grantee'}>Granted to you</option>
        </select></div>
      ${consents === null ? html`<p role="status">Loading the consents…</p>` : null}
      ${consents?.length === 0 ? html`<${Empty}><p>No consent here yet.</p><//>` : null}
      <ul class="rows">
        ${(consents ?? []).map(
          (c) => html`<li class="row" key=${c.id}>
            <div class="row-head"><h3>${role === 'grantor' ? `To ${name(c.grantee_id)}` : `From ${name(c.grantor_id)}`}</h3><span class=${`badge ${c.status}`}>${c.status}</span></div>
            <dl class="facts">
              <div><dt>Scopes</dt><dd>${c.scopes.join(', ')}</dd></div>
              <div><dt>Granted</dt><dd>${when(c.created_at)}</dd></div>
              <div><dt>Expires</dt><dd>${c.expires_at ? when(c.expires_at) : 'never'}</dd></div>
            </dl>
            ${
              c.status === 'active'
                ? html`<${Confirm} id=${`revoke-${c.id}`} label="Revoke" labelSuffix=${`consent ${c.id}`} danger=${true} title="Revoke this consent?" body="It stops working at once." confirmLabel="Revoke the consent" onConfirm=${async () => {
                    await kairos.consents.revoke(c.id);
                    reload();
                  }} />`
                : null
            }
          </li>`,
        )}
      </ul>
      <${Pager} hasPrevious=${consPager.hasPrevious} hasNext=${consNext !== null} onPrevious=${consPager.previous} onNext=${() => consNext && consPager.next(consNext)} />
    </section>`;
}
