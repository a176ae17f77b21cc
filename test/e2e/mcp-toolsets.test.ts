/**
 * The size of `tools/list` (docs/mcp.md#toolsets) and the toolsets that narrow it, through the
 * official MCP client: the default listing fits an agent's context (≤ 40 KB) with every tool still
 * described, `?toolsets=` lists only the named sets, and an unknown toolset is a 400 problem.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { REQUIRED_TOOLS } from '../helpers/mcp.js';

let t: TestApp;
const clients: Client[] = [];
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await t?.close();
});

/** The official client on `/mcp` (with `query`), and the bytes of each `tools/list` answer it read. */
async function connect(token: string, query = ''): Promise<{ client: Client; listBytes: number[] }> {
  const listBytes: number[] = [];
  const client = new Client({ name: 'kairos-toolsets-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      if (typeof init?.body === 'string' && init.body.includes('"tools/list"')) {
        listBytes.push(Buffer.byteLength(await res.clone().text()));
      }
      return res;
    },
  });
  await client.connect(transport);
  clients.push(client);
  return { client, listBytes };
}

describe('tools/list size and toolsets', () => {
  it('lists every tool in at most 40 KB by default, each with its description and schemas', async () => {
    const acc = await t.account();
    const { client, listBytes } = await connect(acc.key);
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name);
    for (const name of REQUIRED_TOOLS) expect(names).toContain(name);
    expect(listBytes).toHaveLength(1);
    const sizes = Object.fromEntries(tools.map((x) => [x.name, JSON.stringify(x).length]));
    expect(listBytes[0], JSON.stringify(sizes)).toBeLessThanOrEqual(40_000);
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(30);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(JSON.stringify(tool), tool.name).not.toContain('$ref');
    }
    // Still enough to use: the inputs keep their rules, the outputs their top-level fields.
    const book = tools.find((x) => x.name === 'book_on_link');
    expect(book?.inputSchema.required).toEqual(expect.arrayContaining(['slug', 'start_time']));
    const slots = tools.find((x) => x.name === 'get_available_slots');
    expect(Object.keys(slots?.outputSchema?.properties ?? {})).toEqual(
      expect.arrayContaining(['slots', 'timezone']),
    );
  });

  it('lists only the named toolsets (current_time always), and calls only their tools', async () => {
    const acc = await t.account();
    const { client } = await connect(acc.key, '?toolsets=booking,availability');
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name).sort();
    expect(names).toEqual(
      [
        'current_time',
        'get_available_slots',
        'get_next_available',
        'find_mutual_availability',
        'get_principal_availability',
        'create_booking',
        'list_bookings',
        'get_booking',
        'get_booking_series',
        'reschedule_booking',
        'cancel_booking',
      ].sort(),
    );
    const outside = (await client.callTool({ name: 'list_proposals', arguments: {} })) as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(outside.isError).toBe(true);
    expect(outside.content[0]?.text).toContain('unknown_tool');
    const inside = (await client.callTool({ name: 'list_bookings', arguments: {} })) as { isError?: boolean };
    expect(inside.isError).toBeFalsy();
  });

  it('refuses an unknown toolset with a 400 problem naming `toolsets` and the known ones', async () => {
    const acc = await t.account();
    const res = await fetch(`${t.url}/mcp?toolsets=booking,calendar`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${acc.key}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as { errors?: Record<string, string>; request_id?: string };
    expect(problem.request_id).toBeTruthy();
    expect(problem.errors?.toolsets).toContain('calendar');
    expect(problem.errors?.toolsets).toContain('booking');
  });
});
