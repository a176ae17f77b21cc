/**
 * Reads through a module's API instead of an in-process request (docs/mcp.md#performance): the
 * route's query check, remembered, and the problems the route's error handler (platform/problems.ts)
 * would answer, so that a tool read this way answers what the route would, refusals included.
 */
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../platform/auth.js';
import {
  type AjvIssue,
  problemOf,
  problem as routeProblem,
  validationDetail,
  validationErrors,
} from '../../platform/problems.js';
import { validatorCompiler } from '../../platform/validation.js';

/** A query after the route's check: coerced, with the schema's defaults; or the fields it refuses. */
export type CheckedQuery = { query: Record<string, unknown> } | { refused: Record<string, string> };

/**
 * A route's answer text read through its module's API, for a caller already admitted to the route,
 * with its instants already written with the offset of the answer's `timezone` (docs/mcp.md#answers).
 */
export type DirectRead = (caller: Caller, query: Record<string, unknown>) => Promise<Buffer | string>;

/**
 * The query-string check Fastify runs on the routes (platform/validation.ts: coercion from text and
 * the schema's defaults), compiled from the route's own query schema as the document states it.
 */
export const queryCompiler = validatorCompiler();

/** Query texts whose check is remembered per operation, and the longest such text. */
const MAX_CHECKED = 1024;
const MAX_CHECKED_TEXT = 2048;

/**
 * The route's query check, remembered by the query's text (~8 µs of a tool call in the server). It
 * needs no invalidation: the check (coercion from text, the schema's defaults, formats) is a pure
 * function of the values. The values hold no U+0000 (the gate refuses a body holding one before any
 * handler), so the names and values joined by it are the key. A refusal is kept as the fields the
 * route's error handler names (platform/problems.ts `validationErrors`). Each call gets its own copy
 * of the checked query (its lists too).
 */
export function rememberedCheck(
  validate: ((q: Record<string, unknown>) => boolean) & { errors?: unknown },
): (query: Record<string, string>) => CheckedQuery {
  const known = new Map<string, CheckedQuery>();
  return (query) => {
    let key = '';
    for (const k in query) key += `${k}\0${query[k]}\0`;
    let checked = known.get(key);
    if (checked === undefined) {
      const q: Record<string, unknown> = { ...query };
      checked = validate(q)
        ? { query: q }
        : { refused: validationErrors((validate.errors ?? []) as AjvIssue[], 'querystring') };
      if (key.length <= MAX_CHECKED_TEXT) {
        if (known.size >= MAX_CHECKED) known.clear();
        known.set(key, checked);
      }
    }
    if ('refused' in checked) return checked;
    const copy: Record<string, unknown> = {};
    for (const k in checked.query) {
      const v = checked.query[k];
      copy[k] = Array.isArray(v) ? [...v] : v;
    }
    return { query: copy };
  };
}

/** The problem the route answers for a query its schema refuses (`refused`: the fields and why). */
export function queryProblem(
  request: FastifyRequest,
  errors: Record<string, string>,
): Record<string, unknown> {
  return routeProblem('', request.id, 400, 'validation-error', validationDetail('querystring', errors), {
    errors,
  });
}

/**
 * The status and problem body the app's error handler answers for an error a read through a module's
 * API threw (platform/problems.ts `problemOf`, the one mapping); its headers have no place in a tool
 * result.
 */
export function thrownProblem(
  request: FastifyRequest,
  error: unknown,
): { status: number; body: Record<string, unknown> } {
  const p = problemOf(error, request);
  return { status: p.status, body: routeProblem('', request.id, p.status, p.slug, p.detail, p.extras) };
}
