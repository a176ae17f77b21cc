/**
 * The overview: the account and its hourly limit; each key's requests over the last day and week
 * (a bar chart from the keys' stats, with what is left of this hour); the next bookings; webhooks
 * whose recent deliveries failed.
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { failure, kairos } from '../lib/api.js';
import { Empty, FormError, when } from '../lib/ui.js';

type Booking = Item<Result<'listBookings'>>;
interface KeyUsage {
  id: string;
  name: string;
  day: number;
  week: number;
  remaining: number;
  limit: number;
}

function Usage(p: { usage: KeyUsage[] }): VNode {
  const max = Math.max(1, ...p.usage.map((u) => u.week));
  return html`<table class="usage">
    <caption>Requests per key (secret and publishable keys; the console’s own requests are not counted)</caption>
    <thead><tr><th scope="col">Key</th><th scope="col">Last 24 hours</th><th scope="col">Last 7 days</th><th scope="col">Left this hour</th></tr></thead>
    <tbody>
      ${p.usage.map(
        (u) => html`<tr key=${u.id}>
          <th scope="row">${u.name}</th>
          <td><span class="bar" aria-hidden="true"><span class="fill day" style=${{ width: `${(u.day / max) * 100}%` }}></span></span>${u.day}</td>
          <td><span class="bar" aria-hidden="true"><span class="fill" style=${{ width: `${(u.week / max) * 100}%` }}></span></span>${u.week}</td>
          <td>${u.remaining} of ${u.limit}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

export function Overview(): VNode {
  const [me, setMe] = useState<Result<'getMe'> | null>(null);
  const [usage, setUsage] = useState<KeyUsage[] | null>(null);
  const [bookings, setBookings] = useState<Booking[] | null>(null);
  const [failing, setFailing] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const fail = (err: unknown) => setError(failure(err).message);
    kairos.me().then(setMe, fail);
    kairos.apiKeys
      .list({ limit: 10 })
      .page()
      .then(async (r) => {
        const active = r.api_keys.filter((k) => k.status === 'active');
        const rows = await Promise.all(
          active.map(async (k) => {
            const [day, week] = await Promise.all([
              kairos.apiKeys.stats(k.id, { window: 'day' }),
              kairos.apiKeys.stats(k.id, { window: 'week' }),
            ]);
            return {
              id: k.id,
              name: k.name,
              day: day.stats.requests,
              week: week.stats.requests,
              remaining: day.stats.remaining,
              limit: day.stats.rate_limit_per_hour,
            };
          }),
        );
        setUsage(rows);
      })
      .catch(fail);
    kairos.bookings
      .list({ status: 'confirmed', from: new Date().toISOString(), limit: 5 })
      .then((r) => setBookings(r.bookings), fail);
    kairos.webhooks
      .list({ limit: 20 })
      .page()
      .then(async (r) => {
        const checked = await Promise.all(
          r.webhooks
            .filter((w) => w.active)
            .map(async (w) => {
              const d = await kairos.webhooks.deliveries(w.id, { limit: 10 });
              return d.deliveries.some((x) => x.status === 'failed') ? w.url : null;
            }),
        );
        setFailing(checked.filter((u): u is string => u !== null));
      })
      .catch(fail);
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
    <section class="panel" aria-labelledby="usage-title">
      <h2 id="usage-title">API usage</h2>
      ${usage === null ? html`<p role="status">Loading the keys’ usage…</p>` : null}
      ${usage?.length === 0 ? html`<${Empty}><p>No active key. <a href="/console/keys">Create an API key</a> to start.</p><//>` : null}
      ${usage && usage.length > 0 ? html`<${Usage} usage=${usage} />` : null}
    </section>
    <section class="panel" aria-labelledby="bookings-title">
      <h2 id="bookings-title">Upcoming bookings</h2>
      ${bookings === null ? html`<p role="status">Loading the bookings…</p>` : null}
      ${bookings?.length === 0 ? html`<${Empty}><p>No upcoming booking. Share a booking link, or book through the API.</p><//>` : null}
      ${
        bookings && bookings.length > 0
          ? html`<ul class="plain">
              ${bookings.map((b) => html`<li key=${b.id}><strong>${when(b.start_time)}</strong> — ${b.title ?? 'Booking'}</li>`)}
            </ul>`
          : null
      }
    </section>
    <section class="panel" aria-labelledby="failing-title">
      <h2 id="failing-title">Failing webhooks</h2>
      ${failing === null ? html`<p role="status">Checking the webhooks…</p>` : null}
      ${failing?.length === 0 ? html`<p>None: every webhook’s recent deliveries went through. <a href="/console/webhooks">Manage webhooks</a>.</p>` : null}
      ${
        failing && failing.length > 0
          ? html`<ul class="plain">
              ${failing.map((u) => html`<li key=${u}>${u} — <a href="/console/webhooks">see its deliveries</a></li>`)}
            </ul>`
          : null
      }
    </section>`;
}
