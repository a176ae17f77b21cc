/**
 * The providers' `HttpFetch` over the outbound guard (platform/outbound.ts), for URLs a user gave us
 * (CalDAV servers, ICS feeds). Every hop, redirects included, goes through `outboundFetch`: the static
 * URL check and the connect-time address check (DNS rebinding) apply to each one.
 */
import { ProviderError } from './providers/index.js';
import type { HttpFetch } from './providers/index.js';
import { type OutboundPolicy, outboundFetch } from '../../platform/outbound.js';

export interface GuardedFetchOptions {
  /** Overall limit per hop (connect, headers and body). */
  timeoutMs: number;
  /** Largest body read; a longer one fails as `bad_request`. */
  maxBodyBytes: number;
  /** Redirects followed at most (default 5). */
  maxRedirects?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);

function headerRecord(init: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

function bodyText(body: RequestInit['body']): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError('guarded fetch sends string bodies only');
}

/** An `HttpFetch` whose every request (and redirect) passes the SSRF guard for `policy`. */
export function guardedFetch(policy: OutboundPolicy, opts: GuardedFetchOptions): HttpFetch {
  const maxRedirects = opts.maxRedirects ?? 5;
  return async (url, init = {}) => {
    let target = url;
    let method = (init.method ?? 'GET').toUpperCase();
    const headers = headerRecord(init.headers);
    let body = bodyText(init.body);
    for (let hop = 0; ; hop++) {
      const res = await outboundFetch(
        target,
        { method, headers, body, timeoutMs: opts.timeoutMs, maxBodyBytes: opts.maxBodyBytes },
        policy,
      );
      const location = res.headers.location;
      if (REDIRECTS.has(res.status) && location && hop < maxRedirects) {
        const next = new URL(location, target);
        // Credentials never follow a redirect to another origin (as in the Fetch standard).
        if (next.origin !== new URL(target).origin) delete headers.authorization;
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          delete headers['content-type'];
        }
        target = next.toString();
        continue;
      }
      if (res.truncated) {
        throw new ProviderError('bad_request', res.status, `answer larger than ${opts.maxBodyBytes} bytes`);
      }
      return new Response(NULL_BODY.has(res.status) ? null : res.body, {
        status: res.status,
        headers: res.headers,
      });
    }
  };
}

/** An `HttpFetch` for the configured OAuth providers' own endpoints (trusted URLs), with a time limit. */
export function timedFetch(timeoutMs: number): HttpFetch {
  return (url, init = {}) => fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
}
