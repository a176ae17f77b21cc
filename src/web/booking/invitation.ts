/**
 * The network invitation page, `/invitations/{token}` (docs/api.md#e-mail-and-pages): who invites
 * whom, a sign-in form (`POST /v1/sessions`), then accept or decline
 * (`POST /v1/network/invitations/{token}/accept|decline` with the session). The session token lives in
 * this page's memory only: never stored, never in the address, gone when the page is closed.
 */
import { html } from 'htm/preact';
import { render, type VNode } from 'preact';
import { useState } from 'preact/hooks';
import { api, type Problem } from './shared/api.js';
import { Field, focusSoon, pageData } from './shared/ui.js';
import type { InvitationView } from './shared/views.js';

interface Session {
  token: string;
  user: { email: string; display_name?: string | null };
}

const WHY: Record<string, string> = {
  invitation_invalid: 'This invitation link is not valid any more: it was already answered.',
  invitation_expired: 'This invitation has expired. Ask for a new one.',
  auth_email_mismatch:
    'This invitation was sent to another e-mail address. Sign in with the address it was sent to.',
  auth_method_invalid: 'Sign in as a user to answer an invitation.',
};

function why(p: Problem, fallback: string): string {
  return (p.code && WHY[p.code]) || p.detail || fallback;
}

function App(p: { token: string; inv: InvitationView }): VNode {
  const { inv } = p;
  const [session, setSession] = useState<Session | null>(null);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState('');
  const [done, setDone] = useState<'accepted' | 'declined' | null>(null);

  const signIn = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const value = (n: string) => (form.elements.namedItem(n) as HTMLInputElement).value;
    setBusy(true);
    setFailure('');
    const a = await api<{ session: Session }>('POST', '/v1/sessions', {
      email: value('email').trim(),
      password: value('password'),
    });
    setBusy(false);
    if (!a.ok) {
      setFailure(
        a.status === 401
          ? 'That e-mail and password do not match an account.'
          : why(a.problem, 'Signing in failed.'),
      );
      focusSoon('invite-error');
      return;
    }
    setSession(a.data.session);
    focusSoon('answer-h');
  };

  const answer = async (action: 'accept' | 'decline') => {
    if (!session) return;
    setBusy(true);
    setFailure('');
    const a = await api(
      'POST',
      `/v1/network/invitations/${encodeURIComponent(p.token)}/${action}`,
      {},
      session.token,
    );
    setBusy(false);
    if (!a.ok) {
      setFailure(why(a.problem, 'The invitation could not be answered.'));
      if (a.problem.code === 'auth_email_mismatch') setSession(null);
      focusSoon('invite-error');
      return;
    }
    setSession(null); // the page has no more use for it
    setDone(action === 'accept' ? 'accepted' : 'declined');
    focusSoon('done-h');
  };

  const error = failure && html`<p class="error" id="invite-error" role="alert" tabindex="-1">${failure}</p>`;
  let body: VNode;
  if (done) {
    body = html`<section class="done">
      <h2 id="done-h" tabindex="-1">${done === 'accepted' ? `You are connected with ${inv.inviter_name}` : 'Invitation declined'}</h2>
      <p>${
        done === 'accepted'
          ? 'You can now see each other’s free time and propose meetings to each other.'
          : `${inv.inviter_name} is not connected with you. You can close this page.`
      }</p>
    </section>`;
  } else if (session) {
    body = html`<section aria-labelledby="answer-h">
      <h2 id="answer-h" tabindex="-1">Signed in as ${session.user.email}</h2>
      ${error}
      <div class="actions">
        <button type="button" disabled=${busy} onClick=${() => answer('accept')}>Accept invitation</button>
        <button type="button" class="secondary" disabled=${busy} onClick=${() => answer('decline')}>Decline</button>
      </div>
    </section>`;
  } else {
    body = html`<form onSubmit=${signIn} aria-labelledby="signin-h">
      <h2 id="signin-h">Sign in to answer</h2>
      <p class="muted">Use the account of the address this invitation was sent to.</p>
      ${error}
      <${Field} id="email" label="E-mail" type="email" required=${true} autocomplete="username" />
      <${Field} id="password" label="Password" type="password" required=${true} autocomplete="current-password" />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button></div>
    </form>`;
  }
  return html`<div class="card">
    <header class="head">
      <p class="eyebrow">Invitation to connect on Kairos</p>
      <h1>${inv.inviter_name} invites you${inv.invitee_name ? `, ${inv.invitee_name},` : ''} to connect</h1>
      <p class="facts"><span>As: ${inv.relationship_type}</span>
        <span>Until ${new Date(inv.expires_at).toLocaleDateString(undefined, { dateStyle: 'medium' })}</span></p>
      ${inv.message && html`<p class="description message">${inv.message}</p>`}
    </header>
    <main class="body">${body}</main>
  </div>`;
}

function main(): void {
  const root = document.getElementById('app');
  const inv = pageData<InvitationView>();
  if (!root || !inv) return;
  const token = location.pathname.split('/').pop() ?? '';
  root.textContent = '';
  render(html`<${App} token=${token} inv=${inv} />`, root);
  // The e-mail the invitation went to, as a start (the visitor may sign in with another).
  const email = document.getElementById('email') as HTMLInputElement | null;
  if (email && !email.value) email.value = inv.invitee_email;
}

main();
