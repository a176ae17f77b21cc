/**
 * Consents and network: the principals connected to you; invite someone to connect by e-mail, and the
 * invitations you sent with their state; the consents you granted and those granted to you (scopes, state, expiry); grant a consent to a
 * connection; revoke one; remove a connection.
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import { kairos } from '../lib/api.js';
import { textOf, useSubmit } from '../lib/form.js';
import { PagedRows, usePaged } from '../lib/list.js';
import { Confirm, Field, FormError, when } from '../lib/ui.js';

type Connection = Item<Result<'listConnections'>>;
type Consent = Item<Result<'listConsents'>>;
type Invitation = Item<Result<'listInvitations'>>;
const RELATIONSHIPS = [
  ['colleague', 'Colleague'],
  ['client', 'Client'],
  ['vendor', 'Vendor'],
  ['partner', 'Partner'],
  ['friend', 'Friend'],
  ['other', 'Other'],
] as const;
type Relationship = (typeof RELATIONSHIPS)[number][0];

/**
 * Invite someone by e-mail to connect; an invitation already pending to the address is sent again
 * (the API's 200). `onSent` shows it in the list of invitations.
 */
function Invite(p: { onSent: (invitation: Invitation) => void }): VNode {
  const [sent, setSent] = useState<Invitation | null>(null);
  const { fail, busy, submit } = useSubmit(async (f, form) => {
    const text = textOf(f);
    const body: Parameters<typeof kairos.network.invitations.create>[0] = {
      invitee_email: text('invitee_email'),
      relationship_type: text('relationship_type') as Relationship,
      ...(text('invitee_name') ? { invitee_name: text('invitee_name') } : {}),
      ...(text('message') ? { message: text('message') } : {}),
    };
    const r = await kairos.network.invitations.create(body);
    setSent(r.invitation);
    form.reset();
    p.onSent(r.invitation);
  });
  return html`<form onSubmit=${submit} novalidate>
      <${FormError} message=${fail.message} />
      <${Field} id="invitee-email" label="Their e-mail" error=${fail.fields.invitee_email}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="invitee_email" type="email" required maxlength="320" />`}
      <//>
      <${Field} id="invitee-name" label="Their name (optional)" error=${fail.fields.invitee_name}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="invitee_name" maxlength="200" />`}
      <//>
      <${Field} id="invitee-relationship" label="They are your" error=${fail.fields.relationship_type}>
        ${(a: Record<string, unknown>) => html`<select ...${a} name="relationship_type">${RELATIONSHIPS.map(([v, l]) => html`<option value=${v} key=${v}>${l}</option>`)}</select>`}
      <//>
      <${Field} id="invitee-message" label="Message (optional)" error=${fail.fields.message}>
        ${(a: Record<string, unknown>) => html`<textarea ...${a} name="message" rows="2" maxlength="2000"></textarea>`}
      <//>
      <div><button type="submit" disabled=${busy}>${busy ? 'Sending…' : 'Send invitation'}</button></div>
    </form>
    <p role="status">${sent ? `Invitation sent to ${sent.invitee_email}; it expires ${when(sent.expires_at)}.` : ''}</p>`;
}
const SCOPES = ['availability:read:freebusy', 'availability:read:details', 'booking:propose'] as const;

function Grant(p: { connections: Connection[]; onGranted: () => void }): VNode {
  const { fail, busy, submit } = useSubmit(async (f, form) => {
    const expires = String(f.get('expires_at') ?? '');
    const body: Record<string, unknown> = {
      grantee_id: String(f.get('grantee_id') ?? ''),
      scopes: f.getAll('scopes').map(String),
      ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
    };
    await kairos.consents.grant(body as Parameters<typeof kairos.consents.grant>[0]);
    form.reset();
    p.onGranted();
  });
  if (p.connections.length === 0) {
    return html`<p class="hint">Consents are granted to connections. Invite someone to your network above first.</p>`;
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
  const [role, setRole] = useState<'grantor' | 'grantee'>('grantor');
  const [invitationState, setInvitationState] = useState<Invitation['status'] | ''>('pending');
  const connections = usePaged((cursor) =>
    kairos.network
      .list({ limit: 20 })
      .page(cursor)
      .then((r) => ({ items: r.connections, pagination: r.pagination })),
  );
  const consents = usePaged(
    (cursor) =>
      kairos.consents
        .list({ role, limit: 20 })
        .page(cursor)
        .then((r) => ({ items: r.consents, pagination: r.pagination })),
    [role],
  );
  const invitations = usePaged(
    (cursor) =>
      kairos.network.invitations
        .list({ limit: 20, ...(invitationState ? { status: invitationState } : {}) })
        .page(cursor)
        .then((r) => ({ items: r.invitations, pagination: r.pagination })),
    [invitationState],
  );
  const reload = () => {
    connections.reload();
    consents.reload();
  };
  const names = new Map((connections.items ?? []).map((c) => [c.principal_id, c.display_name]));
  const name = (id: string) => names.get(id) ?? id;
  return html`<section class="panel" aria-labelledby="net-title">
      <h2 id="net-title">Your network</h2>
      <${PagedRows}
        list=${connections}
        loading="Loading the network…"
        empty=${html`<p>No connection yet. Invite colleagues or clients below; once they accept, you can grant them consents here.</p>`}
        row=${(c: Connection) => html`<li class="row" key=${c.principal_id}>
          <div class="row-head"><h3>${c.display_name}</h3><span class="hint">${c.relationship_type} · since ${when(c.connected_at)}</span></div>
          <${Confirm} id=${`remove-${c.principal_id}`} label="Remove" labelSuffix=${c.display_name} danger=${true} title=${`Remove ${c.display_name} from your network?`} body="Consents between you stop working." confirmLabel="Remove the connection" onConfirm=${async () => {
            await kairos.network.remove(c.principal_id, {});
            reload();
          }} />
        </li>`}
      />
    </section>
    <section class="panel" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone to connect</h2>
      <p class="hint">They get an e-mail with a link to accept; once they do, they appear in your network.</p>
      <${Invite}
        onSent=${() => {
          invitations.reset();
          invitations.reload();
        }}
      />
      <h3 id="invitations-title">Invitations you sent</h3>
      <div class="field"><label for="invitation-state">Invitations to show</label>
        <select id="invitation-state" onChange=${(e: Event) => {
          setInvitationState((e.currentTarget as HTMLSelectElement).value as Invitation['status'] | '');
          invitations.reset();
        }}>
          ${[
            ['pending', 'Waiting for an answer'],
            ['accepted', 'Accepted'],
            ['declined', 'Declined'],
            ['expired', 'Expired'],
            ['', 'All'],
          ].map(
            ([v, l]) => html`<option value=${v} key=${v} selected=${invitationState === v}>${l}</option>`,
          )}
        </select></div>
      <${PagedRows}
        list=${invitations}
        loading="Loading the invitations…"
        empty=${html`<p>No invitation here. Invite someone with the form above.</p>`}
        row=${(x: Invitation) => html`<li class="row" key=${x.id}>
          <div class="row-head"><h3>${x.invitee_name ? `${x.invitee_name} · ` : ''}${x.invitee_email}</h3><span class=${`badge ${x.status}`}>${x.status}</span></div>
          <dl class="facts">
            <div><dt>As your</dt><dd>${x.relationship_type}</dd></div>
            <div><dt>Sent</dt><dd>${when(x.created_at)}</dd></div>
            <div><dt>${x.status === 'pending' ? 'Expires' : 'Expiry'}</dt><dd>${when(x.expires_at)}</dd></div>
          </dl>
        </li>`}
      />
    </section>
    <section class="panel" aria-labelledby="consents-title">
      <h2 id="consents-title">Consents</h2>
      <div class="field"><label for="consent-role">Show</label>
        <select id="consent-role" onChange=${(e: Event) => {
          setRole((e.currentTarget as HTMLSelectElement).value as 'grantor' | 'grantee');
          consents.reset();
        }}>
          <option value="grantor" selected=${role === 'grantor'}>Granted by you</option>
          <option value="grantee" selected=${role === 'grantee'}>Granted to you</option>
        </select></div>
      <${PagedRows}
        list=${consents}
        loading="Loading the consents…"
        empty=${html`<p>No consent here yet. Grant one to a connection with the form below.</p>`}
        row=${(c: Consent) => html`<li class="row" key=${c.id}>
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
        </li>`}
      />
    </section>
    <section class="panel" aria-labelledby="grant-title">
      <h2 id="grant-title">Grant a consent</h2>
      <${Grant} connections=${connections.items ?? []} onGranted=${reload} />
    </section>`;
}
