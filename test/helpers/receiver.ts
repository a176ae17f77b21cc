/**
 * A real HTTP webhook receiver on 127.0.0.1 (random port) for tests. It records every request
 * (raw body as received) and answers as the current behaviour says.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** Path and query as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, decoded as UTF-8. */
  body: string;
  /** Date.now() when the body had been read. */
  at: number;
}

export interface ReceiverReply {
  /** Default 200. */
  status?: number;
  /** Wait this long before answering (headers included). */
  delayMs?: number;
  /** Default ''. */
  body?: string;
  headers?: Record<string, string>;
}

/** `n` is the 1-based number of the request among all the receiver got. */
export type ReceiverBehaviour = (n: number, req: ReceivedRequest) => ReceiverReply;

export interface Receiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string;
  port: number;
  received: ReceivedRequest[];
  setBehaviour(fn: ReceiverBehaviour): void;
  /** Resolves once at least `count` requests were received; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(
  behaviour: ReceiverBehaviour = () => ({ status: 200 }),
): Promise<Receiver> {
  let current = behaviour;
  const received: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => {});
    req.on('end', () => {
      const record: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(record);
      for (const wake of [...waiters]) wake();
      let reply: ReceiverReply;
      try {
        reply = current(received.length, record);
      } catch {
        reply = { status: 500, body: 'receiver behaviour threw' };
      }
      const answer = () => {
        if (res.destroyed || res.writableEnded) return;
        res.writeHead(reply.status ?? 200, reply.headers ?? {});
        res.end(reply.body ?? '');
      };
      if (reply.delayMs && reply.delayMs > 0) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, reply.delayMs);
        timers.add(timer);
      } else {
        answer();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    setBehaviour(fn) {
      current = fn;
    },
    waitFor(count, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        if (received.length >= count) {
          resolve(received);
          return;
        }
        const check = () => {
          if (received.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(received);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver got ${received.length} of ${count} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
