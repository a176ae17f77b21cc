/**
 * `kairos mcp --url <server>` (docs/mcp.md#stdio-bridge): for desktop clients that speak MCP only
 * over stdio, a relay between this process's stdin/stdout and a Kairos server's `POST /mcp`, with
 * the key from `KAIROS_API_KEY`. Messages pass through unchanged, in both protocol generations: a
 * 2025 client's `initialize` result sets the version header its later requests carry, and a current
 * client's requests carry their version in their own envelope (the SDK's transport derives the
 * headers from it). A refused HTTP request becomes that request's JSON-RPC error.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

/** The `/mcp` address of a server given by its base URL (or by its `/mcp` address itself). */
export function mcpUrl(base: string): URL {
  const u = new URL(base);
  if (!u.pathname.replace(/\/+$/, '').endsWith('/mcp')) u.pathname = `${u.pathname.replace(/\/+$/, '')}/mcp`;
  return u;
}

type Message = {
  jsonrpc: '2.0';
  id?: string | number;
  method?: string;
  result?: { protocolVersion?: unknown };
};

/** Relays until stdin closes; resolves then. */
export async function runStdioBridge(base: string, apiKey: string): Promise<void> {
  const http = new StreamableHTTPClientTransport(mcpUrl(base), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
  });
  const stdio = new StdioServerTransport();
  const initializing = new Set<string | number>();
  const done = new Promise<void>((resolve) => {
    stdio.onclose = () => {
      http.close().finally(resolve);
    };
  });
  stdio.onmessage = (raw) => {
    const m = raw as Message;
    if (m.method === 'initialize' && m.id !== undefined) initializing.add(m.id);
    http.send(raw).catch((err: unknown) => {
      if (m.id === undefined || m.method === undefined) return;
      const message = err instanceof Error ? err.message : String(err);
      void stdio.send({
        jsonrpc: '2.0',
        id: m.id,
        error: { code: -32603, message: `Kairos server at ${base}: ${message}` },
      });
    });
  };
  http.onmessage = (raw) => {
    const m = raw as Message;
    if (m.id !== undefined && initializing.delete(m.id) && typeof m.result?.protocolVersion === 'string') {
      http.setProtocolVersion(m.result.protocolVersion);
    }
    void stdio.send(raw);
  };
  http.onerror = (err) => process.stderr.write(`kairos mcp: ${err.message}\n`);
  await http.start();
  await stdio.start();
  return done;
}
