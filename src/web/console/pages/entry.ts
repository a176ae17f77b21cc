/** The pages before signing in: the one-time setup link's form and the sign-in form. */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { anyFailure, consoleCall, type Failure, NO_FAILURE } from '../lib/api.js';
import { Field, FormError, ShownOnce } from '../lib/ui.js';

function value(form: HTMLFormElement, name: string): string {
  const el = form.elements.namedItem(name);
  return el instanceof HTMLInputElement ? el.value : '';
}

export function SignIn(): VNode {
  const [fail, setFail] = useState<Failure>(NO_FAILURE);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setBusy(true);
    try {
      await consoleCall('POST', '/console/session', {
        email: value(form, 'email'),
        password: value(form, 'password'),
      });
      location.assign('/console');
    } catch (err) {
      setFail(anyFailure(err));
      setBusy(false);
    }
  };
  return html`<main id="main" class="narrow">
    <h1>Sign in to the Kairos console</h1>
    <form onSubmit=${submit} novalidate>
      <${FormError} message=${fail.message} />
      <${Field} id="email" label="E-mail" error=${fail.fields.email}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="email" type="email" autocomplete="username" required />`}
      <//>
      <${Field} id="password" label="Password" error=${fail.fields.password}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="password" type="password" autocomplete="current-password" required />`}
      <//>
      <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
  </main>`;
}

type SetupState = 'checking' | 'valid' | 'used' | 'expired' | 'unknown';

export function Setup(): VNode {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const [state, setState] = useState<SetupState>('checking');
  const [fail, setFail] = useState<Failure>(NO_FAILURE);
  const [busy, setBusy] = useState(false);
  const [key, setKey] = useState<string | null>(null);
  useEffect(() => {
    consoleCall('GET', `/console/setup/state?token=${encodeURIComponent(token)}`)
      .then((r) => setState((r as { state: SetupState }).state))
      .catch(() => setState('unknown'));
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    setBusy(true);
    try {
      const r = (await consoleCall('POST', '/console/setup', {
        token,
        account_name: value(form, 'account_name'),
        name: value(form, 'name'),
        email: value(form, 'email'),
        password: value(form, 'password'),
      })) as { api_key: { key: string } };
      // The address keeps no token: reloading shows that the link is used, never the key again.
      history.replaceState(null, '', '/console/setup');
      setKey(r.api_key.key);
    } catch (err) {
      setFail(anyFailure(err));
      setBusy(false);
    }
  };
  if (key !== null) {
    return html`<main id="main" class="narrow">
      <h1>Kairos is set up</h1>
      <p>Your account, your user and your first secret API key are ready. You are signed in.</p>
      <${ShownOnce} id="first-key" label="Your first secret API key" value=${key} />
      <p><a class="button" href="/console">Continue to the console</a></p>
    </main>`;
  }
  if (state === 'checking')
    return html`<main id="main" class="narrow"><h1>Set up Kairos</h1><p role="status">Checking the setup link…</p></main>`;
  if (state !== 'valid') {
    const why =
      state === 'used'
        ? 'This setup link was already used.'
        : state === 'expired'
          ? 'This setup link has expired.'
          : 'This is not a setup link of this server.';
    return html`<main id="main" class="narrow">
      <h1>Set up Kairos</h1>
      <p>${why} If the server already has an account, <a href="/console/sign-in">sign in</a>. Otherwise restart the server: it logs a new setup link while it has no account.</p>
    </main>`;
  }
  return html`<main id="main" class="narrow">
    <h1>Set up Kairos</h1>
    <p>Create the first account, its owner (you) and its first secret API key. This link works once.</p>
    <form onSubmit=${submit} novalidate>
      <${FormError} message=${fail.message} />
      <${Field} id="account_name" label="Business name" error=${fail.fields.account_name}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="account_name" autocomplete="organization" required />`}
      <//>
      <${Field} id="name" label="Your name" hint="How customers and your network see you; never your e-mail." error=${fail.fields.name}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="name" autocomplete="name" required />`}
      <//>
      <${Field} id="email" label="Your e-mail" error=${fail.fields.email}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="email" type="email" autocomplete="username" required />`}
      <//>
      <${Field} id="password" label="Password" hint="At least 10 characters." error=${fail.fields.password}>
        ${(a: Record<string, unknown>) => html`<input ...${a} name="password" type="password" autocomplete="new-password" required />`}
      <//>
      <button type="submit" disabled=${busy}>${busy ? 'Setting up…' : 'Create the account'}</button>
    </form>
  </main>`;
}
