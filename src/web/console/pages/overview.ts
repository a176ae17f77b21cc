/** The overview: the account, its hourly limit, and where to go next. */
import type { Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { failure, kairos } from '../lib/api.js';
import { FormError } from '../lib/ui.js';

export function Overview(): VNode {
  const [me, setMe] = useState<Result<'getMe'> | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    kairos.me().then(setMe, (err) => setError(failure(err).message));
  }, []);
  return html`<${FormError} message=${error} />
    ${me === null && !error ? html`<p role="status">Loading the account…</p>` : null}
    ${
      me
        ? html`<section class="panel" aria-labelledby="account-title">
            <h2 id="account-title">${me.account.name}</h2>
            <dl class="facts">
              <div><dt>Plan</dt><dd>${me.account.plan}</dd></div>
              <div><dt>API requests per hour</dt><dd>${me.account.rate_limit_per_hour}</dd></div>
              <div><dt>Signed in as</dt><dd>${me.user?.email ?? '—'}</dd></div>
            </dl>
            <p class="hint">The console’s own requests do not count against this limit.</p>
          </section>`
        : null
    }
    <section class="panel" aria-labelledby="next-title">
      <h2 id="next-title">Next steps</h2>
      <ul class="steps">
        <li><a href="/console/keys">Create an API key</a> for your server, or a publishable key for your site.</li>
        <li><a href="/console/webhooks">Add a webhook</a> to hear about bookings as they happen.</li>
      </ul>
    </section>`;
}
