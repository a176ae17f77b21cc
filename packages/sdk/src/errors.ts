/**
 * Typed errors. Every error answer of the API is an RFC 9457 problem (docs/api.md, Errors): `type`,
 * `title`, `status`, `detail`, `request_id`, and where it applies `errors` (400), `retry_after` (429) and
 * a machine `code`. The SDK raises one subclass of KairosError per problem status, so callers branch
 * with `instanceof` and read the problem's fields as properties.
 */
import type { components } from './openapi.js';

export type Problem = components['schemas']['Problem'];

export class KairosError extends Error {
  /** The HTTP status; 0 when no answer arrived (a network error or a time-out). */
  readonly status: number;
  /** The problem type URI (`{base_url}/errors/<slug>`). */
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  /** The machine-readable reason where a client must branch on it (docs/api.md, Error codes). */
  readonly code: string | undefined;
  /** Field → message, on validation errors. */
  readonly errors: Record<string, string> | undefined;
  /** The answer's `X-Request-Id` (the problem's `request_id`): quote it to support. */
  readonly requestId: string | undefined;
  /** The whole problem body, with any extra members (`reason`, `principal_id`, …). */
  readonly problem: Problem | undefined;
  readonly headers: Headers | undefined;

  constructor(status: number, problem: Problem | undefined, headers?: Headers, message?: string) {
    const title = problem?.title ?? message ?? `HTTP ${status}`;
    const detail = problem?.detail ?? message ?? title;
    super(detail);
    this.name = new.target.name;
    this.status = status;
    this.type = problem?.type ?? 'about:blank';
    this.title = title;
    this.detail = detail;
    this.code = problem?.code;
    this.errors = problem?.errors;
    this.requestId = problem?.request_id ?? headers?.get('x-request-id') ?? undefined;
    this.problem = problem;
    this.headers = headers;
  }
}

/** 400: invalid or missing input; `errors` names each field. */
export class ValidationError extends KairosError {}
/** 401: no credential or an invalid one. */
export class AuthenticationError extends KairosError {}
/** 403: a publishable key outside its reach, a missing scope, a foreign origin. */
export class PermissionError extends KairosError {}
/** 404: no such resource. */
export class NotFoundError extends KairosError {}
/** 409: the state forbids it. Not retried: re-read the state and decide again. */
export class ConflictError extends KairosError {}
/**
 * 409 `slot_unavailable`: the time cannot be booked, and `reason` says why: `taken` (another booking
 * or hold), `calendar_busy` (busy in a connected calendar), `outside_working_hours`, `minimum_notice`,
 * `max_days_ahead` (beyond the bookable horizon), `no_host` (no host of the link can take it); none
 * when a proposal's time is no longer free for everyone. Re-query availability and pick another time.
 */
export class SlotUnavailableError extends ConflictError {
  /** Why the time cannot be booked (the problem's `reason`), if the server said. */
  readonly reason: string | undefined;
  constructor(status: number, problem: Problem | undefined, headers?: Headers, message?: string) {
    super(status, problem, headers, message);
    this.reason = typeof problem?.reason === 'string' ? problem.reason : undefined;
  }
}
/**
 * A SlotUnavailableError whose time is occupied meanwhile: `reason` `taken` or `calendar_busy`, or no
 * reason (a proposal's time taken). A time refused for the host's rules (hours, notice, horizon) is
 * a SlotUnavailableError only: asking again later for the same time will not help.
 */
export class SlotTakenError extends SlotUnavailableError {}

/** The `slot_unavailable` reasons that mean the time is occupied (SlotTakenError). */
const TAKEN_REASONS = new Set<string | undefined>(['taken', 'calendar_busy', undefined]);
/** 422: valid but impossible (e.g. `start_in_past`: pick a later time). */
export class UnprocessableError extends KairosError {}
/** 429: the hourly allowance is used up. */
export class RateLimitError extends KairosError {
  /** Seconds until a retry may succeed (from `Retry-After` or `retry_after`). */
  readonly retryAfter: number | undefined;
  constructor(status: number, problem: Problem | undefined, headers?: Headers) {
    super(status, problem, headers);
    this.retryAfter = retryAfterMs(headers, problem, Date.now()) / 1000 || undefined;
  }
}
/** 5xx: a failure on the server's side, or the store or a provider unavailable (`Retry-After`). */
export class ServerError extends KairosError {}
/** No answer: the network failed or `timeoutMs` passed (status 0). */
export class ConnectionError extends KairosError {}

const BY_STATUS: Record<number, typeof KairosError> = {
  400: ValidationError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableError,
  429: RateLimitError,
};

/** The error for a problem answer. */
export function errorFor(status: number, problem: Problem | undefined, headers: Headers): KairosError {
  if (status === 409 && problem?.code === 'slot_unavailable') {
    const reason = typeof problem.reason === 'string' ? problem.reason : undefined;
    return new (TAKEN_REASONS.has(reason) ? SlotTakenError : SlotUnavailableError)(status, problem, headers);
  }
  const Class = BY_STATUS[status] ?? (status >= 500 ? ServerError : KairosError);
  return new Class(status, problem, headers);
}

/**
 * How long the server asks the client to wait, in milliseconds (0 when it does not say): the
 * `Retry-After` header (seconds or an HTTP date), else the problem's `retry_after` instant.
 */
export function retryAfterMs(
  headers: Headers | undefined,
  problem: Problem | undefined,
  now: number,
): number {
  const header = headers?.get('retry-after');
  if (header) {
    const seconds = Number(header);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - now;
    if (ms >= 0) return ms;
  }
  const at = problem?.retry_after ? Date.parse(problem.retry_after) - now : Number.NaN;
  return Number.isNaN(at) ? 0 : Math.max(at, 0);
}
