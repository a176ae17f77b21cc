/**
 * The pages before signing in: the one-time setup link's form and the sign-in form; while the server
 * has no account, both say where the setup link is printed instead.
 */
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { anyFailure, consoleCall, data, type Failure, NO_FAILURE } from '../lib/api.js';
import { Field, FormError, ShownOnce } from '../lib/ui.js';

function value(form: HTMLFormElement, name: string): string {
  const el = form.elements.namedItem(name);
  return el instanceof HTMLInputElement ? el.value : '';
}

/**
 * A server with no account: where the server printed the setup link, and how to get a new one. It
 * shows no link itself (a visitor is not yet anyone); `lead` says what happened first, if anything.
 */
function NoAccount(p: { lead?: ComponentChildren }): VNode {
  return html`<main id="main" class="narrow">
    <h1>Kairos has no account yet</h1>
    ${p.lead ? html`<p>${p.lead}</p>` : null}
    <p>The first account is made with a one-time setup link that the server printed when it started.
      Look in the server’s output (the terminal running <code>kairos serve</code> or <code>npm start</code>, or its log) for this line:</p>
    <pre class="log"><code>No account yet: open …/console/setup?token=… to create the first one (single use, 24 hours)</code></pre>
    <p>In JSON logs the link is the line’s <code>setup_link</code> field. Open it in this browser: it makes the account, you as its owner and its first API key.</p>
    <p>Lost the link, or more than 24 hours old? Restart the server: every start prints a new one while there is no account.</p>
  </main>`;
}

/** Already set up: the way in is signing in. */
function SetUp(p: { lead: string }): VNode {
  return html`<main id="main" class="narrow">
    <h1>Set up Kairos</h1>
    <p>${p.lead}</p>
    <p><a class="button" href="/console/sign-in">Sign in</a></p>
    <p class="hint">No user of your own yet? Ask the account’s owner, or make one with <code>kairos users create</code> on the server.</p>
  </main>`;
}

export function SignIn(): VNode {
  return data.no_account ? html`<${NoAccount} />` : html`<${SignInForm} />`;
}

function SignInForm(): VNode {
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

type SetupState = 'checking' | 'valid' | 'used' | 'expired' | 'unknown' | 'set_up';

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
  if (state === 'set_up') return html`<${SetUp} lead="This server is already set up." />`;
  if (state !== 'valid') {
    const why =
      state === 'used'
        ? 'This setup link was already used.'
        : state === 'expired'
          ? 'This setup link has expired.'
          : token
            ? 'This is not a setup link of this server.'
            : '';
    if (data.no_account) return html`<${NoAccount} lead=${why} />`;
    return html`<${SetUp} lead=${`${why ? `${why} ` : ''}This server already has an account.`} />`;
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
