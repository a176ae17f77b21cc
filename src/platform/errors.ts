/** Typed domain errors. Services throw these; one handler (platform/http-errors.ts) renders them. */
export interface ProblemExtras {
  errors?: Record<string, string>;
  code?: string;
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
