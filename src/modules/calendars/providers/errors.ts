/** Typed errors shared by the provider clients (Google, Microsoft Graph, CalDAV, ICS feeds). */

export type ProviderErrorCode = 'unauthorized' | 'rate_limited' | 'unavailable' | 'bad_request';

/**
 * - `unauthorized`: the access token (or CalDAV password, or ICS secret URL) was rejected; for OAuth
 *   providers the caller refreshes the token and retries once.
 * - `rate_limited`: back off; `retryAfterMs` is set when the provider said how long.
 * - `unavailable`: provider 5xx or network failure; retry later (`retryAfterMs` when given).
 * - `bad_request`: anything else the provider refused (4xx); retrying as-is will not help.
 *   `reason` carries the provider's own code (e.g. `insufficientPermissions`, `ErrorTimeIntervalTooBig`).
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly code: ProviderErrorCode;
  /** HTTP status from the provider, 0 when the request never got an answer. */
  readonly status: number;
  readonly retryAfterMs?: number;
  readonly reason?: string;

  constructor(
    code: ProviderErrorCode,
    status: number,
    message: string,
    opts: { retryAfterMs?: number; reason?: string; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.status = status;
    if (opts.retryAfterMs !== undefined) this.retryAfterMs = opts.retryAfterMs;
    if (opts.reason !== undefined) this.reason = opts.reason;
  }
}

/** Retry-After as delta-seconds or HTTP-date (RFC 9110 10.2.3) → milliseconds, never negative. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** Wraps a rejected fetch (DNS, reset, timeout, guard refusal) as `unavailable`. */
export function networkError(err: unknown, what: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  return new ProviderError('unavailable', 0, `${what}: ${msg}`, { cause: err });
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
