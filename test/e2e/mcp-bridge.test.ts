/**
 * `kairos mcp --url` (docs/mcp.md#stdio-bridge): the official MCP client spawns the bridge over stdio,
 * as a desktop client does, and sees the same tools as over HTTP — in both protocol generations.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { REQUIRED_TOOLS } from '../helpers/mcp.js';
import { CLI, runCli } from '../helpers/process.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function bridged(key: string, modern: boolean): Promise<Client> {
  const client = new Client(
    { name: 'kairos-bridge-test', version: '1.0.0' },
    modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--url', t.url],
      env: { ...env, KAIROS_API_KEY: key },
      stderr: 'pipe',
    }),
  );
  return client;
}

describe('kairos mcp (stdio bridge)', () => {
  for (const modern of [false, true]) {
    it(`lists every tool with schemas and annotations through the bridge (${modern ? 'current revision' : '2025-11-25 handshake'})`, async () => {
      const acc = await t.account();
      const client = await bridged(acc.key, modern);
      try {
        const { tools } = await client.listTools();
        const names = tools.map((x) => x.name);
        for (const name of REQUIRED_TOOLS) expect(names).toContain(name);
        for (const tool of tools) {
          expect(tool.inputSchema.type).toBe('object');
          expect(tool.outputSchema?.type, tool.name).toBe('object');
          expect(typeof tool.annotations?.readOnlyHint, tool.name).toBe('boolean');
        }
        const now = (await client.callTool({
          name: 'current_time',
          arguments: { timezone: 'Asia/Tokyo' },
        })) as {
          structuredContent?: { timezone: string; now: string };
        };
        expect(now.structuredContent?.timezone).toBe('Asia/Tokyo');
        expect(now.structuredContent?.now).toMatch(/\+09:00$/);
      } finally {
        await client.close();
      }
    }, 60_000);
  }

  it('prints its usage with --help and refuses to start without --url or KAIROS_API_KEY (exit code 2)', async () => {
    const help = await runCli(['mcp', '--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('kairos mcp --url URL');
    expect(help.stdout).not.toContain('accounts create');
    const noUrl = await runCli(['mcp'], { KAIROS_API_KEY: 'svc_sk_live_x' });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('--url is required');
    const noKey = await runCli(['mcp', '--url', t.url], { KAIROS_API_KEY: '' });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('KAIROS_API_KEY');
  }, 60_000);

  it('answers every request it read from a piped file before it exits 0, and exits non-zero when the server cannot be reached', async () => {
    const acc = await t.account();
    const lines = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'piped', version: '1' },
        },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'current_time', arguments: { timezone: 'Asia/Tokyo' } },
      },
    ];
    const input = `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
    const res = await runCli(['mcp', '--url', t.url], { KAIROS_API_KEY: acc.key }, input);
    expect(res.code, res.stderr).toBe(0);
    const answers = res.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { id?: number; result?: Record<string, unknown>; error?: unknown });
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3]);
    for (const a of answers) expect(a.error, JSON.stringify(a)).toBeUndefined();
    const byId = new Map(answers.map((a) => [a.id, a.result]));
    expect(byId.get(1)?.protocolVersion).toBe('2025-11-25');
    expect((byId.get(2)?.tools as unknown[] | undefined)?.length).toBeGreaterThan(10);
    expect((byId.get(3)?.structuredContent as { timezone?: string } | undefined)?.timezone).toBe(
      'Asia/Tokyo',
    );

    // Nothing listens on port 1: each request is answered with an error, and the exit code says so.
    const down = await runCli(['mcp', '--url', 'http://127.0.0.1:1'], { KAIROS_API_KEY: acc.key }, input);
    expect(down.code).not.toBe(0);
    const errors = down.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { id?: number; error?: { message: string } });
    expect(errors.map((a) => a.id).sort()).toEqual([1, 2, 3]);
    for (const e of errors) expect(e.error?.message).toContain('Kairos server at http://127.0.0.1:1');
  }, 60_000);

  it('passes --toolsets to the server: only those tools are listed, and an unknown one is an error (exit 1)', async () => {
    const acc = await t.account();
    const input = `${[
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'piped', version: '1' },
        },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n')}\n`;
    const answers = (stdout: string) =>
      stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map(
          (l) =>
            JSON.parse(l) as {
              id?: number;
              result?: { tools?: { name: string }[] };
              error?: { message: string };
            },
        );
    const res = await runCli(
      ['mcp', '--url', t.url, '--toolsets', 'network'],
      { KAIROS_API_KEY: acc.key },
      input,
    );
    expect(res.code, res.stderr).toBe(0);
    const list = answers(res.stdout).find((a) => a.id === 2);
    expect(list?.result?.tools?.map((x) => x.name).sort()).toEqual([
      'current_time',
      'invite_to_network',
      'list_network',
    ]);
    const bad = await runCli(
      ['mcp', '--url', t.url, '--toolsets', 'nope'],
      { KAIROS_API_KEY: acc.key },
      input,
    );
    expect(bad.code).toBe(1);
    const errors = answers(bad.stdout);
    expect(errors.map((a) => a.id).sort()).toEqual([1, 2]);
    expect(errors[0]?.error?.message).toContain('400');
  }, 60_000);

  it('answers a request with a JSON-RPC error naming the server when the key is refused', async () => {
    const client = new Client({ name: 'kairos-bridge-test', version: '1.0.0' });
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--url', t.url],
      env: { ...env, KAIROS_API_KEY: 'svc_sk_live_not-a-key' },
      stderr: 'pipe',
    });
    await expect(client.connect(transport)).rejects.toThrow(
      /Kairos server at .*401|Unauthorized|unauthorized/i,
    );
    await client.close().catch(() => {});
  }, 60_000);
});
