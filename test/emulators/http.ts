/** Tiny HTTP plumbing shared by the provider emulators (node:http, 127.0.0.1, random port). */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EmuRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface EmuResponse {
  status: number;
  headers?: Record<string, string>;
  /** Objects are sent as JSON, strings as-is. */
  body?: unknown;
}

export interface RunningServer {
  url: string;
  /**
   * From now on, each request is held for the milliseconds `holdMs` answers before the handler answers
   * it (a provider slower than the client's time limit); undefined: answered at once.
   */
  holdRequests(holdMs: (req: EmuRequest) => number | undefined): void;
  close(): Promise<void>;
}

export type Handler = (req: EmuRequest) => EmuResponse | Promise<EmuResponse>;

export async function startHttpServer(handler: Handler): Promise<RunningServer> {
  let holdMs: (req: EmuRequest) => number | undefined = () => undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const host = req.headers.host ?? '127.0.0.1';
      const emuReq: EmuRequest = {
        method: req.method ?? 'GET',
        url: new URL(req.url ?? '/', `http://${host}`),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const hold = holdMs(emuReq);
      const held =
        hold === undefined
          ? Promise.resolve()
          : new Promise<void>((resolve) => setTimeout(resolve, hold).unref());
      held
        .then(() => handler(emuReq))
        .catch(
          (err: unknown): EmuResponse => ({
            status: 500,
            body: { error: { code: 500, message: err instanceof Error ? err.message : String(err) } },
          }),
        )
        .then((out) => {
          const headers: Record<string, string> = { ...out.headers };
          let payload: string | undefined;
          if (typeof out.body === 'string') {
            payload = out.body;
          } else if (out.body !== undefined) {
            payload = JSON.stringify(out.body);
            headers['content-type'] ??= 'application/json; charset=utf-8';
          }
          if (res.destroyed) return; // the client gave up while the request was held
          res.writeHead(out.status, headers);
          res.end(payload);
        });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    holdRequests(f) {
      holdMs = f;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): EmuResponse {
  return { status, body, headers };
}

export function html(status: number, text: string): EmuResponse {
  return {
    status,
    body: `<!doctype html><title>${status}</title><p>${text}</p>`,
    headers: { 'content-type': 'text/html' },
  };
}

export function redirect(location: string): EmuResponse {
  return { status: 302, headers: { location }, body: '' };
}

/** Accepts a number (epoch ms), an ISO string or a Date. */
export type TimeInput = number | string | Date;

export function toMs(t: TimeInput): number {
  const ms = typeof t === 'number' ? t : new Date(t).getTime();
  if (!Number.isFinite(ms)) throw new RangeError(`bad time: ${String(t)}`);
  return ms;
}

/** Follows an authorize URL like a browser whose user consents, and returns what the redirect carried. */
export async function authorizeViaRedirect(
  authorizeUrl: string,
): Promise<{ location: string; code?: string; state?: string; error?: string }> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  await res.body?.cancel();
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`authorize answered ${res.status}, not a redirect`);
  const q = new URL(location).searchParams;
  const out: { location: string; code?: string; state?: string; error?: string } = { location };
  for (const k of ['code', 'state', 'error'] as const) {
    const v = q.get(k);
    if (v !== null) out[k] = v;
  }
  return out;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A request's JSON body as `{ value }`; undefined when it is not JSON (the emulator answers 400). */
export function parseJson(req: EmuRequest): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(req.body) };
  } catch {
    return undefined;
  }
}

/** The page size a list request asks for in `param`, within 1…`max`; `fallback` when absent or not a number. */
export function pageSize(param: string | null, max: number, fallback: number): number {
  const asked = Number(param ?? fallback);
  return Math.max(1, Math.min(max, Number.isFinite(asked) ? asked : fallback));
}

/** The `size` items of `all` from `offset`, and where the next page starts (undefined: this is the last). */
export function pageAt<T>(all: readonly T[], offset: number, size: number): { items: T[]; next?: number } {
  const items = all.slice(offset, offset + size);
  return offset + size < all.length ? { items, next: offset + size } : { items };
}

/** The URL of the same list request at `base` + `path` with `param` (e.g. Graph's `$skip`) set to `value`. */
export function pageLink(
  base: string,
  path: string,
  query: URLSearchParams,
  param: string,
  value: number,
): string {
  const next = new URL(`${base}${path}`);
  for (const [k, v] of query) if (k !== param) next.searchParams.set(k, v);
  next.searchParams.set(param, String(value));
  return next.toString();
}

/** Sets every request counter back to 0 (an emulator's reset()). */
export function resetCounts(counts: Record<string, number>): void {
  for (const k of Object.keys(counts)) counts[k] = 0;
}
