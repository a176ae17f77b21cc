/**
 * How a tool call reaches the API: in-process, as the REST request it mirrors (Fastify `inject`),
 * with the caller's own `Authorization` and the dispatch mark (platform/dispatch.ts) so the request
 * the tool call arrived in is the only one counted against the key. Access rules, validation,
 * consents, idempotency and problems are therefore the REST ones by construction.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { innerDispatchHeaders } from '../../platform/dispatch.js';

export interface Dispatched {
  status: number;
  /** The answer's text, as the route sent it. */
  text: string;
  body: unknown;
  headers: Record<string, string | string[] | number | undefined>;
}

export interface DispatchRequest {
  method: string;
  /** The path with its parameters filled in. */
  url: string;
  query?: Record<string, string>;
  body?: unknown;
  idempotencyKey?: string;
}

/** Runs one API request for the caller of `outer` and parses its JSON answer. */
export async function dispatch(
  app: FastifyInstance,
  outer: FastifyRequest,
  req: DispatchRequest,
): Promise<Dispatched> {
  const headers: Record<string, string> = { ...innerDispatchHeaders() };
  const auth = outer.headers.authorization;
  if (auth !== undefined) headers.authorization = auth;
  if (req.idempotencyKey !== undefined) headers['idempotency-key'] = req.idempotencyKey;
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  const res = await app.inject({
    method: req.method as 'GET',
    url: req.url,
    ...(req.query ? { query: req.query } : {}),
    headers,
    ...(req.body !== undefined ? { payload: JSON.stringify(req.body) } : {}),
  });
  // Parsed when first read: a remembered tool answer (service.ts) needs only the text.
  let parsed: { body: unknown } | undefined;
  const text = res.body;
  return {
    status: res.statusCode,
    text,
    get body() {
      parsed ??= { body: parseBody(text) };
      return parsed.body;
    },
    headers: res.headers,
  };
}

function parseBody(text: string): unknown {
  if (text.length === 0) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
