/** Webhooks: not yet in the console; the API and the SDK manage them meanwhile. */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { Empty } from '../lib/ui.js';

export function Webhooks(): VNode {
  return html`<${Empty}>
    <p>Managing webhooks here is coming next. Meanwhile create them with <code>POST /v1/webhooks</code> or the SDK’s <code>kairos.webhooks.create</code>.</p>
  <//>`;
}
