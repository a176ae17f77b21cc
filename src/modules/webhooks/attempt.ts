/**
 * One webhook delivery attempt: POST the body to the receiver through the outbound guard and
 * describe what happened. No database, no retries (the caller schedules those, docs/api.md#signatures-and-retries).
 */
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import {
  findOutboundRefused,
  type OutboundPolicy,
  OutboundTimeout,
  outboundFetch,
} from '../../platform/outbound.js';

/** Response body bytes read from the receiver at most (the rest is not read). */
export const ATTEMPT_READ_BODY_BYTES = 64 * 1024;
/** Response body bytes kept in the attempt record at most. */
export const ATTEMPT_KEEP_BODY_BYTES = 1024;
/** Longest error text kept. */
const MAX_ERROR_LENGTH = 500;

export interface AttemptInput {
  url: string;
  /** The exact JSON text to POST (the one that was signed). */
  body: string;
  /** From buildDeliveryHeaders. */
  headers: Record<string, string>;
  /** Overall limit for connect + response, in milliseconds. */
  timeoutMs: number;
  policy: OutboundPolicy;
  /** Tests only: a dispatcher from createOutboundDispatcher. */
  dispatcher?: Dispatcher;
}

export interface AttemptResult {
  /** True only for a 2xx answer. */
  ok: boolean;
  /** The receiver's status, null when there was no answer. */
  response_status: number | null;
  duration_ms: number;
  /** null on a 2xx; `HTTP <status>` for another status; 'timeout'; 'refused: <reason>'; the network error. */
  error: string | null;
  /** The first KiB of the answer (UTF-8), null when there was no answer. */
  response_body: string | null;
}

/** Performs one delivery attempt. Never throws. */
export async function attemptDelivery(input: AttemptInput): Promise<AttemptResult> {
  const started = performance.now();
  try {
    const res = await outboundFetch(
      input.url,
      {
        method: 'POST',
        headers: input.headers,
        body: input.body,
        timeoutMs: input.timeoutMs,
        maxBodyBytes: ATTEMPT_READ_BODY_BYTES,
        dispatcher: input.dispatcher,
      },
      input.policy,
    );
    const ok = res.status >= 200 && res.status < 300;
    return {
      ok,
      response_status: res.status,
      duration_ms: res.durationMs,
      error: ok ? null : `HTTP ${res.status}`,
      response_body: keepBody(res.body),
    };
  } catch (err) {
    return {
      ok: false,
      response_status: null,
      duration_ms: Math.round(performance.now() - started),
      error: describeError(err),
      response_body: null,
    };
  }
}

function keepBody(body: Buffer): string {
  const kept = body.subarray(0, ATTEMPT_KEEP_BODY_BYTES).toString('utf8');
  // A multi-byte character cut at the limit decodes to U+FFFD; drop it.
  return body.length > ATTEMPT_KEEP_BODY_BYTES ? kept.replace(/\uFFFD+$/, '') : kept;
}

function describeError(err: unknown): string {
  if (err instanceof OutboundTimeout) return 'timeout';
  const refused = findOutboundRefused(err);
  if (refused) return `refused: ${refused.reason}`;
  let message = err instanceof Error ? err.message : String(err);
  const code = err instanceof Error ? (err as NodeJS.ErrnoException).code : undefined;
  if (err instanceof AggregateError && err.errors.length > 0) {
    message = err.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join('; ');
  }
  if (!message) message = code ?? 'network error';
  return message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH - 1)}…` : message;
}
