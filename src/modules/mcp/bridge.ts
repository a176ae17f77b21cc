/**
 * `kairos mcp --url <server>` (docs/mcp.md#stdio-bridge): for desktop clients that speak MCP only
 * over stdio, a relay between this process's stdin/stdout (one JSON-RPC message a line) and a Kairos
 * server's `POST /mcp`, with the key from `KAIROS_API_KEY`. Messages pass through unchanged, in both
 * protocol generations: a 2025 client's `initialize` result sets the version header its later
 * requests carry (messages read while an `initialize` is under way wait for its answer), and a
 * current client's requests carry their version in their own envelope (the SDK's transport derives
 * the headers from it). A refused HTTP request becomes that request's JSON-RPC error.
 *
 * When stdin ends (a client that quits, or a file piped in), every request read so far is answered
 * before the bridge ends: its exit code is 0 when every message reached the server, 1 otherwise.
 */
import { createInterface } from 'node:readline';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/**
 * The `/mcp` address of a server given by its base URL (or by its `/mcp` address itself), with the
 * `toolsets` to list when given (docs/mcp.md#toolsets).
 */
export function mcpUrl(base: string, toolsets?: string): URL {
  const u = new URL(base);
  if (!u.pathname.replace(/\/+$/, '').endsWith('/mcp')) u.pathname = `${u.pathname.replace(/\/+$/, '')}/mcp`;
  if (toolsets !== undefined) u.searchParams.set('toolsets', toolsets);
  return u;
}

type Id = string | number;
type Message = {
  jsonrpc: '2.0';
  id?: Id | null;
  method?: string;
  result?: { protocolVersion?: unknown };
};

export interface BridgeOptions {
  /** Comma-separated toolsets the server lists (its `?toolsets=`). */
  toolsets?: string;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

/** Relays until stdin ends and every request read has its answer; resolves to the exit code. */
export async function runStdioBridge(
  base: string,
  apiKey: string,
  opts: BridgeOptions = {},
): Promise<number> {
  const input = opts.input ?? process.stdin;
  const output = opts.output ?? process.stdout;
  const http = new StreamableHTTPClientTransport(mcpUrl(base, opts.toolsets), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
  });
  let failed = false;
  /** Requests sent and not yet answered: each resolves when its answer is written. */
  const pending = new Map<Id, () => void>();
  /** Every send under way and every answer awaited. */
  const waiting = new Set<Promise<void>>();
  const initializing = new Set<Id>();
  /** Resolved when no `initialize` is under way: what is read meanwhile waits for its answer. */
  let gate: Promise<void> = Promise.resolve();

  const write = (m: unknown): Promise<void> =>
    new Promise((resolve) => {
      if (output.write(`${JSON.stringify(m)}\n`)) resolve();
      else output.once('drain', () => resolve());
    });
  const answered = (id: Id | null | undefined) => {
    if (id === undefined || id === null) return;
    const done = pending.get(id);
    pending.delete(id);
    done?.();
  };
  const track = (p: Promise<void>) => {
    const tracked = p.finally(() => waiting.delete(tracked));
    waiting.add(tracked);
  };

  http.onmessage = (m) => {
    const id = 'id' in m ? m.id : undefined;
    const result = 'result' in m ? (m.result as Message['result']) : undefined;
    if (id !== undefined && initializing.delete(id) && typeof result?.protocolVersion === 'string') {
      http.setProtocolVersion(result.protocolVersion);
    }
    void write(m).then(() => answered(id));
  };
  http.onerror = (err) => process.stderr.write(`kairos mcp: ${err.message}\n`);

  const relay = (m: Message) => {
    const id = m.id;
    const isRequest = id !== undefined && id !== null && typeof m.method === 'string';
    let answer: Promise<void> = Promise.resolve();
    if (isRequest) {
      answer = new Promise<void>((resolve) => pending.set(id, resolve));
      track(answer);
      if (m.method === 'initialize') initializing.add(id);
    }
    const before = gate;
    if (isRequest && m.method === 'initialize') gate = before.then(() => answer);
    const send = before
      .then(() => http.send(m as Parameters<typeof http.send>[0]))
      .catch(async (err: unknown) => {
        failed = true;
        const message = err instanceof Error ? err.message : String(err);
        process.stderr.write(`kairos mcp: ${message}\n`);
        if (!isRequest) return;
        initializing.delete(id);
        await write({
          jsonrpc: '2.0',
          id,
          error: { code: -32603, message: `Kairos server at ${base}: ${message}` },
        });
        answered(id);
      });
    track(send);
  };

  await http.start();
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let m: Message;
    try {
      m = JSON.parse(line) as Message;
    } catch {
      failed = true;
      await write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: not JSON' } });
      continue;
    }
    if (m === null || typeof m !== 'object' || Array.isArray(m)) {
      failed = true;
      await write({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } });
      continue;
    }
    relay(m);
  }
  // stdin ended: every send settles and every request read has its answer written.
  while (waiting.size > 0) await Promise.allSettled([...waiting]);
  await http.close().catch(() => {});
  return failed ? 1 : 0;
}
