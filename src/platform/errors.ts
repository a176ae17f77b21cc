/** Typed domain errors. Services throw these; one handler (platform/problems.ts) renders them. */

/**
 * The closed set of problem `code`s (docs/api.md#errors). Each module declares the codes it throws in
 * its own `errors.ts` with `errorCodes(...)` and merges them in here:
 *
 *   export const BOOKING_CODES = errorCodes('bookings', { slot_unavailable: { status: 409, meaning: '…' } });
 *   declare module '../../platform/errors.js' { interface ErrorCodes extends BookingCodes {} }
 *
 * so `code: 'typo'` fails to compile. Each operation lists the codes each of its error statuses may
 * carry (`config.problems`), and the OpenAPI document narrows that status's `code` to them.
 */
export interface ErrorCodes extends PlatformCodes {}
export type ErrorCode = keyof ErrorCodes;

/** What a code means: the status(es) it comes with and when. */
export interface CodeInfo {
  status: number | readonly number[];
  meaning: string;
}

const DECLARED = new Map<string, { module: string; info: CodeInfo }>();

/** Declares a module's codes (one place per module) and remembers them for the document and the tests. */
export function errorCodes<const K extends string>(
  module: string,
  codes: Record<K, CodeInfo>,
): Record<K, CodeInfo> {
  for (const [code, info] of Object.entries<CodeInfo>(codes)) {
    // Two modules may throw one code (each declares it): its statuses are those of both.
    const before = DECLARED.get(code);
    const status = before ? [...new Set([...statusList(before.info), ...statusList(info)])] : info.status;
    DECLARED.set(code, {
      module: before ? `${before.module}, ${module}` : module,
      info: { ...info, status },
    });
  }
  return codes;
}

/** Every code declared so far (by the platform and the modules loaded), with its module. */
export function declaredCodes(): ReadonlyMap<string, { module: string; info: CodeInfo }> {
  return DECLARED;
}

/** The statuses a code is declared with. */
export function statusesOf(code: string): readonly number[] {
  const d = DECLARED.get(code);
  return d ? statusList(d.info) : [];
}

function statusList(info: CodeInfo): readonly number[] {
  return typeof info.status === 'number' ? [info.status] : info.status;
}

/** Codes of the platform itself, possible on any operation's 503. */
export const PLATFORM_CODES = errorCodes('platform', {
  store_unavailable: { status: 503, meaning: 'The data store is unreachable or restarting; nothing changed' },
  overloaded: { status: 503, meaning: 'Every store connection stayed busy; nothing changed' },
  shutting_down: { status: 503, meaning: 'The server is draining; nothing ran, send the request elsewhere' },
});
type PlatformCodes = typeof PLATFORM_CODES;
/** The 503 codes every operation may answer. */
export const PLATFORM_503: readonly ErrorCode[] = ['store_unavailable', 'overloaded', 'shutting_down'];

export interface ProblemExtras {
  errors?: Record<string, string>;
  code?: ErrorCode;
  [member: string]: unknown;
}

export const TITLES: Record<string, string> = {
  'validation-error': 'Validation Error',
  'bad-request': 'Bad Request',
  'uri-too-long': 'URI Too Long',
  'header-fields-too-large': 'Request Header Fields Too Large',
  'request-timeout': 'Request Timeout',
  'expectation-failed': 'Expectation Failed',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  'not-found': 'Not Found',
  gone: 'Gone',
  'method-not-allowed': 'Method Not Allowed',
  conflict: 'Conflict',
  'idempotency-key-in-use': 'Idempotency Key In Use',
  'idempotency-key-reused': 'Idempotency Key Reused',
  'payload-too-large': 'Payload Too Large',
  'unsupported-media-type': 'Unsupported Media Type',
  unprocessable: 'Unprocessable Entity',
  'rate-limit-exceeded': 'Too Many Requests',
  'internal-error': 'Internal Server Error',
  'service-unavailable': 'Service Unavailable',
};

/** What each slug means, for the human-readable pages served at /errors/<slug>. */
export const DESCRIPTIONS: Record<string, string> = {
  'validation-error':
    'The request has invalid or missing parameters. The `errors` member maps each offending field ' +
    '(a dot path for nested fields) to a message. Fix the request; do not retry it unchanged.',
  'bad-request':
    'The request could not be read: a request target with malformed percent-encoding (%ZZ, a lone %, ' +
    'an overlong UTF-8 sequence) or a message that is not valid HTTP/1.1. Fix the client; do not retry.',
  'uri-too-long': 'A path segment (an id) is longer than 100 characters; no resource has such an id.',
  'header-fields-too-large': 'The request headers are larger than 16 KiB.',
  'request-timeout': 'The request did not arrive completely within the server’s time limit.',
  'expectation-failed': 'The request carries an Expect header other than 100-continue.',
  gone: 'The link or token existed but has expired; ask for a new one.',
  unauthorized: 'The request carries no credential, or one that is malformed, unknown, revoked or expired.',
  forbidden:
    'The credential is valid but may not do this: a publishable key outside the public booking surface, ' +
    'a key without the required scope, an origin outside the key’s allowed domains, or a principal that is ' +
    'not accessible (or does not exist).',
  'not-found': 'The resource does not exist, or the business has no connected calendar.',
  'method-not-allowed':
    'The path exists but not with this method; the Allow header lists the methods it takes.',
  conflict:
    'The request conflicts with the current state, e.g. the slot is no longer available. Re-query; ' +
    'do not repeat the same request.',
  'idempotency-key-in-use':
    'A request with this Idempotency-Key is still being processed. Retry after the ' +
    'Retry-After interval to receive its response.',
  'idempotency-key-reused':
    'This Idempotency-Key was used with a different method, path or body within 24 ' +
    'hours. Use a new key for a new request.',
  'payload-too-large': 'The request body is larger than 1 MiB.',
  'unsupported-media-type': 'The body must be JSON (Content-Type: application/json).',
  unprocessable: 'The request is valid but cannot be carried out, e.g. a booking start_time in the past.',
  'rate-limit-exceeded':
    'The key (or, for anonymous calls, the client address) used up its hourly allowance. ' +
    'Retry after `retry_after`.',
  'internal-error': 'Something failed on our side. Retry with exponential backoff.',
  'service-unavailable':
    'The service cannot serve the request now (store unreachable, shutting down, or a ' +
    'calendar provider unreachable with nothing cached). Retry with exponential backoff.',
};

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    detail: string,
    readonly extras: ProblemExtras = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
  get title(): string {
    return TITLES[this.slug] ?? 'Error';
  }
}

export class ValidationFailed extends AppError {
  constructor(errors: Record<string, string>, detail?: string) {
    const fields = Object.keys(errors);
    super(
      400,
      'validation-error',
      detail ?? `Invalid request: ${fields.map((f) => `${f} ${errors[f]}`).join('; ')}`,
      {
        errors,
      },
    );
  }
}

export class Unauthorized extends AppError {
  constructor(detail = 'Missing or invalid API key') {
    super(401, 'unauthorized', detail);
  }
}

export class Forbidden extends AppError {
  constructor(detail = 'You do not have access to this resource', extras: ProblemExtras = {}) {
    super(403, 'forbidden', detail, extras);
  }
}

export class NotFound extends AppError {
  constructor(detail = 'The resource does not exist') {
    super(404, 'not-found', detail);
  }
}

export class Conflict extends AppError {
  constructor(detail: string, extras: ProblemExtras = {}) {
    super(409, 'conflict', detail, extras);
  }
}

export class Unprocessable extends AppError {
  constructor(detail: string, extras: ProblemExtras = {}) {
    super(422, 'unprocessable', detail, extras);
  }
}

export class ServiceUnavailable extends AppError {
  constructor(detail = 'The service is temporarily unavailable', retryAfterSeconds = 5) {
    super(503, 'service-unavailable', detail, {}, { 'retry-after': String(retryAfterSeconds) });
  }
}
