/**
 * The fast way for reading tool calls (fast.ts) answers what the SDK answers: the same request is
 * sent as the official client sends it (fast) and with its `Mcp-Name` header in the SDK's Base64
 * form (the same request to the SDK, which the fast way leaves to it), and the two answers agree —
 * slots across a DST change, a refused input, a custom tool, a tool this credential does not see.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json, TestApp } from '../../../test/helpers/app.js';
import { postToolCall, startBerlinHost } from '../../../test/helpers/mcp.js';
import { fastToolCall } from './fast.js';
import type { McpService, ToolResult } from './service.js';

let t: TestApp;
let key: string;
let host: string;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ t, key, host, close } = await startBerlinHost());
});
afterAll(async () => {
  await close?.();
});

async function callTool(
  token: string,
  name: string,
  args: Record<string, unknown>,
  viaSdk: boolean,
  accept = true,
): Promise<{ status: number; type: string | null; headers: string[]; body: Json }> {
  const res = await postToolCall(t.url, token, name, args, {
    client: 'fast-test',
    accept,
    // The SDK's Base64 form of the same name: the fast way leaves the request to the SDK.
    ...(viaSdk ? { mcpName: `=?base64?${Buffer.from(name).toString('base64')}?=` } : {}),
  });
  // Request ids differ from request to request; the rest must not.
  const body = JSON.parse((await res.text()).replace(/req_[0-9a-z]+/g, 'req_'));
  delete body.id;
  // The headers by name (their values hold times and counts): request id, rate limit, length.
  const headers = [...res.headers.keys()].filter((k) => k !== 'date').sort();
  return { status: res.status, type: res.headers.get('content-type'), headers, body };
}

describe('reading tool calls answered without the SDK', () => {
  const cases: [string, Record<string, unknown>][] = [
    [
      'get_available_slots',
      { duration_minutes: 60, from: '2026-10-22T00:00:00+02:00', to: '2026-10-28T00:00:00+01:00' },
    ],
    [
      'get_available_slots',
      { duration_minutes: 60, from: '2026-10-24T09:00:00', to: '2026-10-28T00:00:00Z' },
    ],
    [
      'get_available_slots',
      { duration_minutes: 60, from: '2026-10-24T00:00:00Z', to: 'x', timezone: 'Asia/Tokyo' },
    ],
    ['get_next_available', { days_ahead: 14 }],
    ['list_hosts', {}],
    ['current_time', { timezone: 'America/New_York' }],
  ];

  it.each(cases)('%s answers as the SDK does (%j)', async (name, args) => {
    const withHost =
      name === 'list_hosts' || name === 'current_time' ? args : { principal_id: host, ...args };
    const sdk = await callTool(key, name, withHost, true);
    const fast = await callTool(key, name, withHost, false);
    expect(fast).toEqual(sdk);
    expect(sdk.status).toBe(200);
    if (name === 'get_available_slots' && !sdk.body.result.isError) {
      const offsets = new Set(sdk.body.result.structuredContent.slots.map((s: Json) => s.start.slice(-6)));
      expect([...offsets].sort()).toEqual(['+01:00', '+02:00']);
    }
  });

  it('answers as the SDK does without an Accept header', async () => {
    const args = {
      principal_id: host,
      duration_minutes: 30,
      from: '2026-10-26T00:00:00Z',
      to: '2026-10-27T00:00:00Z',
    };
    const sdk = await callTool(key, 'get_available_slots', args, true, false);
    const fast = await callTool(key, 'get_available_slots', args, false, false);
    expect(fast).toEqual(sdk);
  });

  it('leaves to the SDK what it must answer: a tool this key does not see, a mismatched header', async () => {
    const fn = fastToolCall(
      {
        tool: (_ctx: unknown, name: string) => ({ listed: { annotations: { readOnlyHint: name === 'r' } } }),
        callTool: async (): Promise<ToolResult> => ({
          content: [{ type: 'text', text: '{}' }],
          structuredContent: {},
        }),
      } as unknown as McpService,
      { name: 'kairos', title: 'Kairos', version: '1' },
    );
    const headers = {
      'content-type': 'application/json',
      'mcp-method': 'tools/call',
      'mcp-name': 'r',
      'mcp-protocol-version': '2026-07-28',
    };
    const body = (name: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: {},
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'fast-test', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    });
    const ctx = {} as Parameters<typeof fn>[2];
    expect(fn(headers, body('r'), ctx)).toBeDefined();
    expect(fn(headers, body('w'), ctx)).toBeUndefined();
    expect(fn({ ...headers, 'mcp-name': 'w' }, body('r'), ctx)).toBeUndefined();
    expect(fn({ ...headers, 'mcp-protocol-version': '2025-11-25' }, body('r'), ctx)).toBeUndefined();
    expect(fn({ ...headers, 'content-type': 'text/plain' }, body('r'), ctx)).toBeUndefined();
    const { _meta, ...noEnvelope } = body('r').params;
    expect(fn(headers, { ...body('r'), params: noEnvelope }, ctx)).toBeUndefined();
    expect(fn(headers, { ...body('r'), params: { ...body('r').params, task: {} } }, ctx)).toBeUndefined();
    // Top-level members other than JSON-RPC's own, after the same envelope was classified before.
    expect(fn(headers, { ...body('r'), extra: 1 }, ctx)).toBeUndefined();
    // Another envelope (a version the headers do not name) after this one was classified.
    const other = body('r');
    other.params._meta['io.modelcontextprotocol/protocolVersion'] = '2025-11-25';
    expect(fn(headers, other, ctx)).toBeUndefined();
    expect(fn(headers, body('r'), ctx)).toBeDefined();
    const answer = await fn(headers, body('r'), ctx);
    const bytes = answer ? Buffer.concat([answer.head, answer.tail]) : Buffer.alloc(0);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        content: [{ type: 'text', text: '{}' }],
        structuredContent: {},
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'kairos', title: 'Kairos', version: '1' } },
      },
    });
  });
});
