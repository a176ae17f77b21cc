/**
 * The differential test of the shortcut (fast.ts): its answer equals the SDK's, the oracle. Each
 * request is sent as the official client sends it (the shortcut takes it) and with its `Mcp-Name`
 * header in the SDK's Base64 form (the same request, which the shortcut leaves to the SDK: the switch
 * that forces the SDK path), and the two answers agree as parsed JSON — slot-reading tools across
 * zones and DST days, links, bad arguments, an unknown link, a key without access, a publishable
 * key — and a tool that throws gets the SDK's JSON-RPC error. The slots tool's refusals are the
 * route's own problems.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json, TestApp } from '../../../test/helpers/app.js';
import { CURRENT_REVISION, postToolCall, startBerlinHost } from '../../../test/helpers/mcp.js';
import { fastToolCall } from './fast.js';
import { createMcpEndpoint } from './server.js';
import type { CallContext, McpService, ToolResult } from './service.js';

let t: TestApp;
let key: string;
let host: string;
let close: (() => Promise<void>) | undefined;
/** A key of another account (it may not read `host`), a publishable key of `host`'s account. */
let stranger: string;
let publishable: string;
const SLUG = `fast-diff-${Date.now()}`;

beforeAll(async () => {
  ({ t, key, host, close } = await startBerlinHost());
  stranger = (await t.account()).key;
  const pk = await t.call('POST', '/v1/api-keys', {
    token: key,
    body: { name: 'embed', key_type: 'publishable' },
  });
  expect(pk.status).toBe(201);
  publishable = (await pk.json()).api_key.key;
  const link = await t.call('POST', '/v1/booking-links', {
    token: key,
    body: { slug: SLUG, title: 'Intro', host_ids: [host], duration_minutes: 30 },
  });
  expect(link.status, await link.clone().text()).toBe(201);
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

  const DST = { from: '2026-10-24T00:00:00Z', to: '2026-10-27T00:00:00Z' };
  const spread: [string, () => string, string, Record<string, unknown>][] = [
    [
      'zoned, US DST day',
      () => key,
      'get_available_slots',
      { ...DST, to: '2026-11-03T00:00:00Z', duration_minutes: 30, timezone: 'America/New_York' },
    ],
    ['by day', () => key, 'get_available_slots', { ...DST, duration_minutes: 45, group_by_day: true }],
    [
      'by day, zoned',
      () => key,
      'get_available_slots',
      { ...DST, duration_minutes: 30, group_by_day: true, timezone: 'Australia/Lord_Howe' },
    ],
    [
      'buffer and interval',
      () => key,
      'get_available_slots',
      { ...DST, duration_minutes: 30, buffer: 10, slot_interval: 20 },
    ],
    ['schema refusal', () => key, 'get_available_slots', { ...DST, duration_minutes: 3 }],
    [
      'window too long',
      () => key,
      'get_available_slots',
      { from: '2026-10-24T00:00:00Z', to: '2027-03-01T00:00:00Z', duration_minutes: 30 },
    ],
    ['unknown field', () => key, 'get_available_slots', { ...DST, duration_minutes: 30, colour: 'red' }],
    [
      'bad zone',
      () => key,
      'get_available_slots',
      { ...DST, duration_minutes: 30, timezone: 'Mars/Olympus' },
    ],
    [
      'unknown principal',
      () => key,
      'get_available_slots',
      { ...DST, duration_minutes: 30, principal_id: '01900000-0000-7000-8000-000000000000' },
    ],
    ['a key without access', () => stranger, 'get_available_slots', { ...DST, duration_minutes: 30 }],
    ['a publishable key', () => publishable, 'get_available_slots', { ...DST, duration_minutes: 30 }],
    ['a link', () => key, 'get_link_slots', { slug: SLUG, ...DST }],
    ['a link, zoned', () => key, 'get_link_slots', { slug: SLUG, ...DST, timezone: 'Asia/Kolkata' }],
    ['a link, publishable key', () => publishable, 'get_link_slots', { slug: SLUG, ...DST }],
    ['an unknown link', () => key, 'get_link_slots', { slug: 'no-such-link', ...DST }],
    ['next, zoned', () => key, 'get_next_available', { days_ahead: 10, timezone: 'Asia/Tokyo' }],
    ['a tool this key does not see', () => publishable, 'list_bookings', {}],
  ];

  it.each(spread)('%s: the shortcut answers as the SDK does', async (_what, token, name, args) => {
    const withHost =
      name === 'get_link_slots' || 'principal_id' in args ? args : { principal_id: host, ...args };
    // Twice: a first answer and a remembered one.
    for (let i = 0; i < 2; i++) {
      const sdk = await callTool(token(), name, withHost, true);
      const fast = await callTool(token(), name, withHost, false);
      expect(fast).toEqual(sdk);
    }
  });

  it('answers the slots tool’s refusals with the route’s own problems', async () => {
    const refused: [string, Record<string, string>][] = [
      [key, { duration_minutes: '3' }],
      [key, { duration_minutes: '30', to: '2027-03-01T00:00:00Z' }],
      [key, { duration_minutes: '30', principal_id: '01900000-0000-7000-8000-000000000000' }],
      [stranger, { duration_minutes: '30' }],
    ];
    for (const [token, q] of refused) {
      const query = { principal_id: host, ...DST, ...q };
      const rest = await t.call('GET', `/v1/availability/slots?${new URLSearchParams(query)}`, { token });
      expect(rest.status).toBeGreaterThanOrEqual(400);
      const { type: _type, instance: _instance, request_id: _id, ...problem } = await rest.json();
      const tool = await callTool(token, 'get_available_slots', query, false);
      const { request_id, ...error } = JSON.parse(tool.body.result.content[0].text).error;
      expect(error).toEqual(problem);
      expect(request_id).toMatch(/^req_/);
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
    expect(fn(headers, { ...body('r'), id: 1.5 }, ctx)).toBeUndefined();
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

  it('answers a tool that throws with the SDK’s JSON-RPC error, once taken', async () => {
    const broken = {
      tool: () => ({ listed: { annotations: { readOnlyHint: true }, outputSchema: { type: 'object' } } }),
      callTool: async () => {
        throw new Error('the store went away');
      },
    } as unknown as McpService;
    const endpoint = createMcpEndpoint(broken, '1');
    try {
      const headers = {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-method': 'tools/call',
        'mcp-name': 'r',
        'mcp-protocol-version': CURRENT_REVISION,
      };
      const body = {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: {
          name: 'r',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': CURRENT_REVISION,
            'io.modelcontextprotocol/clientInfo': { name: 'fast-test', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      };
      const ctx = { caller: { kind: 'secret', scopes: ['read'] } } as unknown as CallContext;
      const taken = endpoint.fast(headers, body, ctx);
      expect(taken).toBeDefined();
      const fast = await taken!;
      const sdk = await endpoint.handle(
        new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(body) }),
        body,
        ctx,
      );
      expect(fast.status).toBe(sdk.status);
      const fastJson = JSON.parse(Buffer.concat([fast.head, fast.tail]).toString('utf8'));
      expect(fastJson).toEqual(await sdk.json());
      expect(fastJson.error.message).toBe('the store went away');
    } finally {
      await endpoint.close();
    }
  });
});
