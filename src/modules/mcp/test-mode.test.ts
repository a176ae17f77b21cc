/**
 * The MCP server with a test key (docs/api.md#test-mode, docs/mcp.md#test-mode), driven by the
 * official MCP client in both protocol generations: the instructions say test mode, `current_time`
 * answers the account's test clock with `livemode: false`, the test clock's tools are listed (and
 * only to a test key) and move the clock, and REST tools answer as that key's requests (a test host
 * with `livemode: false`, unseen by the live key).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, startTestApp, type TestApp } from '../../../test/helpers/app.js';
import { testKeyFor } from '../../../test/helpers/test-mode.js';
import { FakeClock } from '../../platform/clock.js';

const T0 = '2026-03-02T06:00:00.000Z';
const clock = new FakeClock(T0);
const DAY = 86_400;
let t: TestApp;
let live: string;
let test: string;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestApp({ clock });
  live = (await t.account()).key;
  test = (await testKeyFor(t, live)).key;
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await t?.close();
});

/** The official client on `/mcp` (with `query`); `modern` speaks the current revision. */
async function connect(token: string, modern: boolean, query = ''): Promise<Client> {
  const client = new Client(
    { name: 'kairos-test-mode', version: '1.0.0' },
    modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Json> {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: Json;
    content: { text?: string }[];
  };
  expect(r.isError, `${name}: ${r.content[0]?.text}`).toBeFalsy();
  expect(JSON.parse(r.content[0]?.text ?? 'null')).toEqual(r.structuredContent);
  return r.structuredContent;
}

const TEST_CLOCK_TOOLS = ['advance_test_clock', 'get_test_clock'];

describe('MCP with a test key', () => {
  it.each([
    ['2025-11-25 (initialize handshake)', false],
    ['2026-07-28 (no handshake)', true],
  ])(
    'in %s: lists the test clock tools, says test mode, and current_time is the test clock with livemode false',
    async (_era, modern) => {
      const client = await connect(test, modern);
      const names = (await client.listTools()).tools.map((x) => x.name);
      for (const name of ['current_time', 'list_hosts', 'get_available_slots', ...TEST_CLOCK_TOOLS])
        expect(names).toContain(name);
      if (!modern) expect(client.getInstructions()).toContain('TEST MODE');

      const { test_clock } = await ok(client, 'get_test_clock', { timezone: 'UTC' });
      const now = await ok(client, 'current_time', { timezone: 'UTC' });
      expect(now.livemode).toBe(false);
      expect(Date.parse(now.now_utc)).toBe(Date.parse(T0) + test_clock.offset_seconds * 1000);
      // A REST tool runs as the test key's own request.
      expect(await ok(client, 'list_hosts')).toHaveProperty('hosts');
    },
  );

  it('advance_test_clock moves the clock that current_time and get_test_clock read; live time stays', async () => {
    const client = await connect(test, true);
    const before = (await ok(client, 'get_test_clock', { timezone: 'UTC' })).test_clock;
    const moved = await ok(client, 'advance_test_clock', {
      seconds: 2 * DAY,
      idempotency_key: `advance-${Date.now()}`,
      timezone: 'UTC',
    });
    expect(moved.test_clock.offset_seconds).toBe(before.offset_seconds + 2 * DAY);
    const after = await ok(client, 'get_test_clock', { timezone: 'Europe/Paris' });
    expect(after.test_clock.offset_seconds).toBe(moved.test_clock.offset_seconds);
    expect(after.test_clock.now).toMatch(/\+01:00$/);
    const now = await ok(client, 'current_time');
    expect(Date.parse(now.now_utc)).toBe(Date.parse(T0) + after.test_clock.offset_seconds * 1000);

    const liveNow = await ok(await connect(live, true), 'current_time');
    expect(liveNow).toMatchObject({ livemode: true });
    expect(Date.parse(liveNow.now_utc)).toBe(Date.parse(T0));
  });

  it('a live key is not shown the test clock tools, and calling one is an unknown tool', async () => {
    for (const modern of [false, true]) {
      const client = await connect(live, modern);
      const names = (await client.listTools()).tools.map((x) => x.name);
      for (const name of TEST_CLOCK_TOOLS) expect(names).not.toContain(name);
      if (!modern) expect(client.getInstructions()).not.toContain('TEST MODE');
      const r = (await client.callTool({ name: 'get_test_clock', arguments: {} })) as {
        isError?: boolean;
        content: { text?: string }[];
      };
      expect(r.isError).toBe(true);
      expect(JSON.parse(r.content[0]?.text ?? '{}').error.code).toBe('unknown_tool');
    }
  });

  it('a REST tool answers each mode its own objects, each saying livemode', async () => {
    const made = await t.call('POST', '/v1/hosts', {
      token: test,
      body: { display_name: 'Test host', timezone: 'UTC' },
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const id = (await made.json()).host.principal_id as string;
    const testHosts = (await ok(await connect(test, true), 'list_hosts')).hosts as Json[];
    expect(testHosts.map((h) => h.principal_id)).toContain(id);
    for (const h of testHosts) expect(h.livemode).toBe(false);
    const liveHosts = (await ok(await connect(live, false), 'list_hosts')).hosts as Json[];
    expect(liveHosts.map((h) => h.principal_id)).not.toContain(id);
    for (const h of liveHosts) expect(h.livemode).toBe(true);
  });

  it('the test_clock toolset lists current_time and the two test clock tools', async () => {
    const client = await connect(test, true, '?toolsets=test_clock');
    const names = (await client.listTools()).tools.map((x) => x.name).sort();
    expect(names).toEqual(['current_time', ...TEST_CLOCK_TOOLS].sort());
  });
});
