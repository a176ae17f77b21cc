import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { storeUnavailability } from '../db/unavailable.js';
import { AppError, TITLES } from './errors.js';
import { UUID_PATTERN } from './ids.js';
import { HOSTNAME_PATTERN, NON_BLANK_PATTERN } from './schemas.js';
import { EMAIL_ADDRESS_PATTERN, ISO_INSTANT_PATTERN, TIME_ZONE_FORMAT } from './validation.js';

/** The pattern of a prefixed id (schemas.ts `prefixedIdPattern`: `^cons_[…]{26}$`), its prefix captured. */
const PREFIXED_ID = /^\^([a-z]+)_\[[^\]]+\]\{26\}\$$/;

/** Retry-After (seconds) on a 503 for an unreachable store: about what a PostgreSQL restart takes. */
const STORE_RETRY_AFTER_S = 5;

/** Where problem `type` URIs point: the server's public base URL (read at answer time; tests set it late). */
export interface ProblemConfig {
  baseUrl: string;
}

/** A problem+json body (docs/api.md, Errors). */
export function problem(
  baseUrl: string,
  requestId: string,
  status: number,
  slug: string,
  detail: string,
  extras = {},
) {
  return {
    type: `${baseUrl}/errors/${slug}`,
    title: TITLES[slug] ?? 'Error',
    status,
    detail,
    request_id: requestId,
    ...extras,
  };
}

/** Sends a problem+json answer on a Fastify reply. */
export function sendProblem(
  config: ProblemConfig,
  reply: FastifyReply,
  request: FastifyRequest,
  status: number,
  slug: string,
  detail: string,
  extras: object = {},
) {
  return reply
    .code(status)
    .type('application/problem+json')
    .send(JSON.stringify(problem(config.baseUrl, request.id, status, slug, detail, extras)));
}

/** Sends a typed domain error: its headers and its problem. */
export function sendAppError(
  config: ProblemConfig,
  reply: FastifyReply,
  request: FastifyRequest,
  err: AppError,
) {
  for (const [h, v] of Object.entries(err.headers)) reply.header(h, v);
  return sendProblem(config, reply, request, err.status, err.slug, err.message, err.extras);
}

function fieldPath(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra) parts.push(extra);
  return parts.join('.');
}

export type AjvIssue = {
  instancePath?: string;
  keyword: string;
  /** Set by Ajv on an issue found in an object's key (`propertyNames`), not in its value. */
  propertyName?: string;
  message?: string;
  params: Record<string, unknown>;
};

/** Maps schema validation issues to `errors`: field (dot path) → message. */
export function validationErrors(issues: AjvIssue[], context: string | undefined): Record<string, string> {
  const errors: Record<string, string> = {};
  // A union of literals (or an enum) fails with one issue per allowed value: name them all at once.
  const allowed = new Map<string, string[]>();
  for (const issue of issues) {
    const values =
      issue.keyword === 'const'
        ? [issue.params.allowedValue]
        : issue.keyword === 'enum' && Array.isArray(issue.params.allowedValues)
          ? issue.params.allowedValues
          : null;
    if (!values) continue;
    const at = issue.instancePath ?? '';
    allowed.set(at, [...(allowed.get(at) ?? []), ...values.map((v) => String(v))]);
  }
  for (const issue of issues) {
    let field = fieldPath(issue.instancePath ?? '');
    let message = issue.message ?? 'is invalid';
    const choices = allowed.get(issue.instancePath ?? '');
    if ((issue.keyword === 'const' || issue.keyword === 'enum' || issue.keyword === 'anyOf') && choices) {
      message = `must be one of: ${[...new Set(choices)].join(', ')}`;
    } else if (issue.keyword === 'required') {
      field = fieldPath(issue.instancePath ?? '', String(issue.params.missingProperty));
      message = 'is required';
    } else if (issue.keyword === 'propertyNames' || issue.propertyName !== undefined) {
      // The key itself is wrong: name it (cut short, it may be the long one) as the field.
      const key = String(issue.propertyName ?? issue.params.propertyName ?? '');
      field = fieldPath(issue.instancePath ?? '', key.slice(0, 60));
      message = issue.keyword === 'propertyNames' ? 'is not an allowed key' : `key ${message}`;
    } else if (issue.keyword === 'additionalProperties') {
      field = fieldPath(issue.instancePath ?? '', String(issue.params.additionalProperty));
      message = 'is not a known field';
    } else if (
      (issue.keyword === 'format' && issue.params.format === 'email') ||
      (issue.keyword === 'pattern' && issue.params.pattern === EMAIL_ADDRESS_PATTERN)
    ) {
      message = 'must be a valid e-mail address';
    } else if (issue.keyword === 'pattern' && issue.params.pattern === ISO_INSTANT_PATTERN) {
      message = 'must be an ISO 8601 timestamp with an offset, e.g. 2054-06-10T14:00:00Z';
    } else if (issue.keyword === 'format' && issue.params.format === 'date-time') {
      message = 'must be an ISO 8601 timestamp with an offset, e.g. 2054-06-10T14:00:00Z';
    } else if (issue.keyword === 'format' && issue.params.format === TIME_ZONE_FORMAT) {
      message = 'must be a valid IANA time zone';
    } else if (
      (issue.keyword === 'format' && issue.params.format === 'uuid') ||
      (issue.keyword === 'pattern' && issue.params.pattern === UUID_PATTERN)
    ) {
      message = 'must be a UUID';
    } else if (issue.keyword === 'pattern' && issue.params.pattern === HOSTNAME_PATTERN) {
      message = 'must be a hostname such as example.com';
    } else if (issue.keyword === 'pattern' && issue.params.pattern === NON_BLANK_PATTERN) {
      message = 'must not be empty';
    } else if (issue.keyword === 'format' && issue.params.format === 'uri') {
      message = 'must be an absolute URL, e.g. https://example.com/hooks';
    } else if (issue.keyword === 'pattern' && PREFIXED_ID.test(String(issue.params.pattern))) {
      message = `must be an id of the form ${PREFIXED_ID.exec(String(issue.params.pattern))?.[1]}_…`;
    }
    if (!field) field = context === 'body' ? 'body' : (context ?? 'request');
    if (!(field in errors)) errors[field] = message;
  }
  return errors;
}

/** One error surface: every error a route, hook or parser throws leaves as problem+json. */
/** What the app answers for an error: the problem's parts and the headers sent with it. */
export interface ErrorProblem {
  status: number;
  slug: string;
  detail: string;
  extras: object;
  headers: Record<string, string>;
}

/** The detail of a validation problem: every refused field and why, after what was refused. */
export function validationDetail(context: string | undefined, errors: Record<string, string>): string {
  return `Invalid ${context ?? 'request'}: ${Object.entries(errors)
    .map(([f, m]) => `${f} ${m}`)
    .join('; ')}`;
}

/**
 * The one mapping of an error to its problem (docs/api.md, Errors): the error handler sends it, and a
 * read answered outside a route (mcp/direct.ts) writes it into its own transport. Logs what it maps to
 * a 503 for an unreachable store or to a 500.
 */
export function problemOf(error: unknown, request: FastifyRequest): ErrorProblem {
  const answer = (status: number, slug: string, detail: string, extras: object = {}, headers = {}) => ({
    status,
    slug,
    detail,
    extras,
    headers,
  });
  if (error instanceof AppError)
    return answer(error.status, error.slug, error.message, error.extras, error.headers);
  const fe = error as FastifyError & { validationContext?: string; code?: string };
  if (fe.validation) {
    const errors = validationErrors(fe.validation as AjvIssue[], fe.validationContext);
    return answer(400, 'validation-error', validationDetail(fe.validationContext, errors), { errors });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return answer(413, 'payload-too-large', 'The request body is larger than 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return answer(
        415,
        'unsupported-media-type',
        `Content-Type ${request.headers['content-type'] ?? '(none)'} is not supported; send application/json`,
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return answer(400, 'validation-error', 'The JSON body is empty', {
        errors: { body: 'must be a JSON object' },
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return answer(400, 'validation-error', 'Content-Length does not match the body', {
        errors: { body: 'has a wrong Content-Length' },
      });
  }
  if (
    fe.statusCode === 400 &&
    (error instanceof SyntaxError || fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
  ) {
    return answer(400, 'validation-error', 'The body is not valid JSON', {
      errors: { body: 'is not valid JSON' },
    });
  }
  if (fe.code === '23505' || fe.code === '23P01') {
    return answer(409, 'conflict', 'The request conflicts with the current state of the resource');
  }
  // The store is down, restarting or out of connections: the request changed nothing (its transaction
  // did not commit), so the client may retry it as it is.
  switch (storeUnavailability(error)) {
    case 'store-unreachable':
      request.log.warn({ err: error, request_id: request.id }, 'store unreachable');
      return answer(
        503,
        'service-unavailable',
        'The data store is unreachable; retry shortly',
        { code: 'store_unavailable' },
        { 'retry-after': String(STORE_RETRY_AFTER_S) },
      );
    case 'pool-exhausted':
      // Every pooled connection stayed busy past the pool's wait (overload): retry, not a server fault.
      return answer(
        503,
        'service-unavailable',
        'The server is overloaded; retry shortly',
        { code: 'overloaded' },
        { 'retry-after': '2' },
      );
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return answer(fe.statusCode, fe.statusCode === 404 ? 'not-found' : 'validation-error', fe.message);
  }
  request.log.error({ err: error, request_id: request.id }, 'unhandled error');
  return answer(500, 'internal-error', 'An internal error occurred; it has been logged');
}

export function registerErrorHandler(app: FastifyInstance, config: ProblemConfig): void {
  app.setErrorHandler(async (error: FastifyError | AppError | Error, request, reply) => {
    const p = problemOf(error, request);
    for (const [h, v] of Object.entries(p.headers)) reply.header(h, v);
    return sendProblem(config, reply, request, p.status, p.slug, p.detail, p.extras);
  });
}
