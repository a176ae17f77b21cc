/**
 * The overview: the account and its hourly limit; the keys' requests per hour over the last day or
 * week (a bar chart of the keys' hourly series added up, with a table saying the same for screen
 * readers), each key's totals and what is left of this hour; the next bookings; webhooks whose
 * recent deliveries failed.
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { failure, kairos } from '../lib/api.js';
import { Empty, FormError, when } from '../lib/ui.js';

type Booking = Item<Result<'listBookings'>>;
type Hour = Result<'getApiKeyStats'>['stats']['series'][number];
type Window = 'day' | 'week';
interface KeyUsage {
  id: string;
  name: string;
  /** A test-mode key (docs/api.md#test-mode): shown with a "Test" badge. */
  test: boolean;
  day: number;
  week: number;
  remaining: number;
  limit: number;
}
interface Usage {
  keys: KeyUsage[];
  /** Every key's requests summed per hour, oldest first. */
  series: Record<Window, Hour[]>;
}

/** The keys' hourly series added up hour by hour. */
export function sumSeries(all: readonly (readonly Hour[])[]): Hour[] {
  const byStart = new Map<string, Hour>();
  for (const series of all) {
    for (const h of series) {
      const sum = byStart.get(h.start) ?? { start: h.start, requests: 0, rate_limited: 0 };
      sum.requests += h.requests;
      sum.rate_limited += h.rate_limited;
      byStart.set(h.start, sum);
    }
  }
  return [...byStart.values()].sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
}

function hourLabel(iso: string, week: boolean): string {
  return new Date(iso).toLocaleString(
    undefined,
    week ? { weekday: 'short', hour: '2-digit', minute: '2-digit' } : { hour: '2-digit', minute: '2-digit' },
  );
}

/**
 * Requests per hour as bars (refused ones, over a key's limit, stacked on top in another colour). The
 * picture is hidden from screen readers: the table after it says the same in words.
 */
function Chart(p: { series: Hour[]; window: Window }): VNode {
  const n = Math.max(1, p.series.length);
  const top = Math.max(1, ...p.series.map((h) => h.requests));
  const week = p.window === 'week';
  const busy = p.series.filter((h) => h.requests > 0);
  const total = p.series.reduce((t, h) => t + h.requests, 0);
  return html`<figure class="chart">
    <figcaption id="chart-title">Requests per hour, ${week ? 'last 7 days' : 'last 24 hours'}: ${total} in all, at most ${busy.length ? top : 0} in an hour${p.series.some((h) => h.rate_limited > 0) ? ' (in red: refused over a key’s limit)' : ''}</figcaption>
    <svg viewBox=${`0 0 ${n} 100`} preserveAspectRatio="none" aria-hidden="true" focusable="false">
      ${p.series.map((h, i) => {
        const all = (h.requests / top) * 100;
        const refused = (Math.min(h.rate_limited, h.requests) / top) * 100;
        return html`<g key=${h.start}>
          <rect class="ok" x=${i + 0.1} width="0.8" y=${100 - all} height=${all - refused}></rect>
          ${refused > 0 ? html`<rect class="refused" x=${i + 0.1} width="0.8" y=${100 - refused} height=${refused}></rect>` : null}
        </g>`;
      })}
    </svg>
    <div class="axis" aria-hidden="true"><span>${p.series[0] ? hourLabel(p.series[0].start, week) : ''}</span><span>now</span></div>
    <details>
      <summary>The figures as a table</summary>
      ${
        busy.length === 0
          ? html`<p>No request in this period.</p>`
          : html`<table class="hours">
              <caption>Requests per hour with at least one request (other hours had none)</caption>
              <thead><tr><th scope="col">Hour starting</th><th scope="col">Requests</th><th scope="col">Refused over the limit</th></tr></thead>
              <tbody>${busy.map((h) => html`<tr key=${h.start}><th scope="row">${hourLabel(h.start, week)}</th><td>${h.requests}</td><td>${h.rate_limited}</td></tr>`)}</tbody>
            </table>`
      }
    </details>
  </figure>`;
}

function UsagePanel(p: { usage: Usage }): VNode {
  const [period, setPeriod] = useState<Window>('day');
  return html`<fieldset class="switch">
      <legend>Period</legend>
      <label class="choice"><input type="radio" name="usage-window" checked=${period === 'day'} onChange=${() => setPeriod('day')} /> Last 24 hours</label>
      <label class="choice"><input type="radio" name="usage-window" checked=${period === 'week'} onChange=${() => setPeriod('week')} /> Last 7 days</label>
    </fieldset>
    <${Chart} series=${p.usage.series[period]} window=${period} />
    <table class="usage">
      <caption>Requests per key (secret and publishable keys; the console’s own requests are not counted)</caption>
      <thead><tr><th scope="col">Key</th><th scope="col">Last 24 hours</th><th scope="col">Last 7 days</th><th scope="col">Left this hour</th></tr></thead>
      <tbody>
        ${p.usage.keys.map(
          (u) => html`<tr key=${u.id}>
            <th scope="row">${u.name}${u.test ? html` <span class="badge test">Test</span>` : null}</th>
            <td>${u.day}</td>
            <td>${u.week}</td>
            <td>${u.remaining} of ${u.limit}</td>
          </tr>`,
        )}
      </tbody>
    </table>`;
}

export function Overview(): VNode {
  const [me, setMe] = useState<Result<'getMe'> | null>(null);
  const [usage, setUsage] = useState<Usage | null>(null);
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
        const stats = await Promise.all(
          active.map(async (k) => {
            const [day, week] = await Promise.all([
              kairos.apiKeys.stats(k.id, { window: 'day' }),
              kairos.apiKeys.stats(k.id, { window: 'week' }),
            ]);
            return { k, day: day.stats, week: week.stats };
          }),
        );
        setUsage({
          keys: stats.map(({ k, day, week }) => ({
            id: k.id,
            name: k.name,
            test: k.environment === 'test',
            day: day.requests,
            week: week.requests,
            remaining: day.remaining,
            limit: day.rate_limit_per_hour,
          })),
          series: {
            day: sumSeries(stats.map((x) => x.day.series)),
            week: sumSeries(stats.map((x) => x.week.series)),
          },
        });
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
      ${usage?.keys.length === 0 ? html`<${Empty}><p>No active key. <a href="/console/keys">Create an API key</a> to start.</p><//>` : null}
      ${usage && usage.keys.length > 0 ? html`<${UsagePanel} usage=${usage} />` : null}
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
