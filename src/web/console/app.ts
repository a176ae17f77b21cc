/**
 * The Kairos console (README.md, Console): one script for every console page; the server's HTML
 * names the page and carries the session's CSRF proof (never a credential).
 */
import { html } from 'htm/preact';
import { render, type VNode } from 'preact';
import { data } from './lib/api.js';
import { Shell } from './lib/ui.js';
import { Bookings } from './pages/bookings.js';
import { Setup, SignIn } from './pages/entry.js';
import { Hosts } from './pages/hosts.js';
import { Keys } from './pages/keys.js';
import { Links } from './pages/links.js';
import { Network } from './pages/network.js';
import { Overview } from './pages/overview.js';
import { Polls } from './pages/polls.js';
import { Webhooks } from './pages/webhooks.js';

function page(): VNode {
  switch (data.page) {
    case '/console/setup':
      return html`<${Setup} />`;
    case '/console/sign-in':
      return html`<${SignIn} />`;
    case '/console/keys':
      return html`<${Shell} title="API keys"><${Keys} /><//>`;
    case '/console/hosts':
      return html`<${Shell} title="Hosts and calendars"><${Hosts} /><//>`;
    case '/console/links':
      return html`<${Shell} title="Booking links"><${Links} /><//>`;
    case '/console/network':
      return html`<${Shell} title="Consents and network"><${Network} /><//>`;
    case '/console/polls':
      return html`<${Shell} title="Proposals and polls"><${Polls} /><//>`;
    case '/console/bookings':
      return html`<${Shell} title="Bookings"><${Bookings} /><//>`;
    case '/console/webhooks':
      return html`<${Shell} title="Webhooks"><${Webhooks} /><//>`;
    default:
      return html`<${Shell} title="Overview"><${Overview} /><//>`;
  }
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(page(), root);
}
