import { request } from 'node:http';
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request with the request target sent exactly as given (absolute-form, `//`, `/./`, malformed
 * percent-encoding…), which fetch would normalise or refuse.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  target: string,
  opts: { headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, method, path: target, headers: opts.headers ?? {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = String(v);
          resolve({ status: res.statusCode ?? 0, headers, body });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Writes `text` on a fresh connection and returns everything the server writes back before closing. */
export function rawExchange(baseUrl: string, text: string): Promise<string> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => socket.write(text));
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      out += c;
    });
    socket.on('close', () => resolve(out));
    socket.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNRESET' ? resolve(out) : reject(err),
    );
  });
}

/** Splits a raw HTTP/1.1 answer into status, lower-cased headers and body. */
export function parseRawAnswer(text: string): RawAnswer {
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end).split('\r\n');
  const status = Number(head[0]?.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status, headers, body: text.slice(end + 4) };
}
