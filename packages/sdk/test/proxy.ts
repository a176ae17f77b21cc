/**
 * A tiny HTTP proxy in front of the real test server, for the SDK's retry tests: it can answer a
 * request itself (a 429 or 503 with `Retry-After`), or forward it and then drop the answer after the
 * server committed (the connection is destroyed instead of answered), and it records every request.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  at: number;
}

/**
 * What to do with the n-th request (1-based): forward it, answer it, forward it and drop the answer,
 * or never answer (`hang`).
 */
export type Plan = (
  n: number,
  req: Seen,
) => 'forward' | 'drop' | 'hang' | { status: number; headers?: Record<string, string>; body?: unknown };

export interface TestProxy {
  url: string;
  seen: Seen[];
  plan: Plan;
  close(): Promise<void>;
}

const HOP = new Set(['host', 'connection', 'content-length', 'keep-alive', 'transfer-encoding']);

export async function startProxy(upstream: string): Promise<TestProxy> {
  const proxy: TestProxy = { url: '', seen: [], plan: () => 'forward', close: async () => {} };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const seen: Seen = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      at: Date.now(),
    };
    proxy.seen.push(seen);
    const step = proxy.plan(proxy.seen.length, seen);
    if (step === 'hang') return;
    if (typeof step === 'object') {
      res.writeHead(step.status, { 'content-type': 'application/problem+json', ...step.headers });
      res.end(JSON.stringify(step.body ?? {}));
      return;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (!HOP.has(k) && typeof v === 'string') headers[k] = v;
    const answer = await fetch(upstream + seen.path, {
      method: seen.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    const body = Buffer.from(await answer.arrayBuffer());
    if (step === 'drop') {
      // The server has answered (and committed); the client never hears it.
      req.socket.destroy();
      return;
    }
    const out: Record<string, string> = {};
    answer.headers.forEach((v, k) => {
      if (!HOP.has(k) && k !== 'content-encoding') out[k] = v;
    });
    res.writeHead(answer.status, out).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
