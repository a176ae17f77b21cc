/**
 * What the MCP tests share: the tools the server must list (docs/mcp.md#tools), a host to ask about,
 * and a raw current-revision tool call.
 */
import { expect } from 'vitest';
import { FakeClock } from '../../src/platform/clock.js';
import { startTestApp, type TestApp } from './app.js';
import { serveCalendar, vcalendar } from './ics.js';

/** The tools the server must list (docs/mcp.md#tools). */
export const REQUIRED_TOOLS = [
  'current_time',
  'list_hosts',
  'get_available_slots',
  'get_next_available',
  'find_mutual_availability',
  'get_principal_availability',
  'check_consent',
  'list_consents',
  'grant_consent',
  'revoke_consent',
  'list_network',
  'invite_to_network',
  'list_booking_links',
  'create_booking_link',
  'create_booking',
  'list_bookings',
  'get_booking',
  'reschedule_booking',
  'cancel_booking',
  'join_waitlist',
  'create_proposal',
  'create_poll',
  'respond_to_proposal',
  'close_poll',
  'cancel_proposal',
  'list_proposals',
];

/** The current protocol revision, as the official client sends it without a handshake. */
export const CURRENT_REVISION = '2026-07-28';

/**
 * A test app on a stopped clock (20 October 2026, 06:00 UTC) with one account and a host in
 * Europe/Berlin whose calendar is an empty ICS feed: free in its working hours, across the autumn
 * DST change a week later.
 */
export async function startBerlinHost(): Promise<{
  t: TestApp;
  key: string;
  host: string;
  close: () => Promise<void>;
}> {
  const feed = await serveCalendar(vcalendar('\r\n', []));
  const t = await startTestApp({
    clock: new FakeClock('2026-10-20T06:00:00.000Z'),
    env: { KAIROS_ALLOW_PRIVATE_NETWORK: 'true' },
  });
  const acc = await t.account();
  const h = await t.ctx.modules.principals.createHost(acc.id, {
    display_name: 'Berlin host',
    timezone: 'Europe/Berlin',
  });
  const c = await t.call('POST', '/v1/calendars/ics', {
    token: acc.key,
    body: { url: feed.url, principal_id: h.principal_id },
  });
  expect(c.status, await c.clone().text()).toBe(201);
  return {
    t,
    key: acc.key,
    host: h.principal_id,
    close: async () => {
      await t.close();
      await feed.close();
    },
  };
}

let requests = 0;

/**
 * POST /mcp with a `tools/call` as the official client sends it in the current revision (its
 * headers and `_meta` envelope). `mcpName` replaces the `Mcp-Name` header's value; `accept: false`
 * leaves out the Accept header.
 */
export function postToolCall(
  base: string,
  token: string,
  name: string,
  args: Record<string, unknown>,
  opts: { client: string; mcpName?: string; accept?: boolean },
): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(opts.accept === false ? {} : { accept: 'application/json, text/event-stream' }),
      'content-type': 'application/json',
      'mcp-method': 'tools/call',
      'mcp-name': opts.mcpName ?? name,
      'mcp-protocol-version': CURRENT_REVISION,
    },
    body: JSON.stringify({
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': CURRENT_REVISION,
          'io.modelcontextprotocol/clientInfo': { name: opts.client, version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
      jsonrpc: '2.0',
      id: ++requests,
    }),
  });
}
