/**
 * What an agent reads back (docs/mcp.md#answers): times with their offset in a named IANA zone, and
 * problems as `isError` results that say what went wrong and what to do next.
 */
import { isoInZone } from '../../lib/time.js';
import type { RestTool } from './tools.js';

/** An instant as the API writes it (or as an agent may pass it): date, time, then Z or an offset. */
const INSTANT = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/;
/** Date and time with no offset: what an agent must not send. */
const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$/;

/** Digit at `i` of `s`, or NaN. */
function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : Number.NaN;
}

/**
 * The instant the API writes (`2026-06-10T14:00:00.000Z`, UTC with milliseconds) read by
 * arithmetic, as `Date.parse` reads it; NaN for any other shape (the general way reads those).
 */
function parseApiInstant(v: string): number {
  if (
    v.length !== 24 ||
    v.charCodeAt(23) !== 90 /* Z */ ||
    v[4] !== '-' ||
    v[7] !== '-' ||
    v[10] !== 'T' ||
    v[13] !== ':' ||
    v[16] !== ':' ||
    v[19] !== '.'
  ) {
    return Number.NaN;
  }
  const y = digit(v, 0) * 1000 + digit(v, 1) * 100 + digit(v, 2) * 10 + digit(v, 3);
  const mo = digit(v, 5) * 10 + digit(v, 6);
  const d = digit(v, 8) * 10 + digit(v, 9);
  const h = digit(v, 11) * 10 + digit(v, 12);
  const mi = digit(v, 14) * 10 + digit(v, 15);
  const sec = digit(v, 17) * 10 + digit(v, 18);
  const milli = digit(v, 20) * 100 + digit(v, 21) * 10 + digit(v, 22);
  // Ranges where Date.UTC and Date.parse agree (Date.parse also rolls a 30 February over).
  if (
    !(y >= 1000 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 && mi <= 59 && sec <= 59 && milli >= 0)
  ) {
    return Number.NaN;
  }
  return Date.UTC(y, mo - 1, d, h, mi, sec, milli);
}

/** Every instant in `value`, shown in `zone` with its offset (`2026-06-10T16:00:00+02:00`). */
export function inZone(value: unknown, zone: string): unknown {
  if (typeof value === 'string') {
    const fast = parseApiInstant(value);
    if (!Number.isNaN(fast)) return isoInZone(fast, zone);
    if (value.length < 16 || value.length > 40 || !INSTANT.test(value)) return value;
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? value : isoInZone(ms, zone);
  }
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = inZone(value[i], zone);
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) out[k] = inZone((value as Record<string, unknown>)[k], zone);
    return out;
  }
  return value;
}

/** The instant fields of an input that carry no offset, with the message that names each. */
export function offsetless(args: Record<string, unknown>, fields: readonly string[]): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const v = args[f];
    if (typeof v === 'string' && !INSTANT.test(v) && LOCAL_DATE_TIME.test(v.trim())) {
      errors[f] =
        `has no UTC offset: "${v}" could be any of 38 zones' wall clock. Send it with its offset, e.g. "${v.trim().replace(' ', 'T')}+02:00" for Paris in summer or "${v.trim().replace(' ', 'T')}Z" for UTC (current_time gives a zone's offset).`;
    }
  }
  return errors;
}

export interface ToolError {
  isError: true;
  content: { type: 'text'; text: string }[];
}

/** An `isError` result: the problem's members and the next step, as JSON an agent can read. */
export function toolError(problem: Record<string, unknown>, next: string): ToolError {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify({ error: problem, next }, null, 2) }],
  };
}

/** A validation problem made by the tool layer itself (before any request), field by field. */
export function inputError(errors: Record<string, string>): ToolError {
  const fields = Object.keys(errors);
  return toolError(
    {
      title: 'Invalid input',
      status: 400,
      code: 'validation_error',
      detail: fields.map((f) => `${f} ${errors[f]}`).join('; '),
      errors,
    },
    `Fix ${fields.map((f) => `\`${f}\``).join(', ')} and call again.`,
  );
}

/** The next step for an agent after the API answered `problem` to `tool`. */
export function nextStep(tool: RestTool, status: number, problem: Record<string, unknown>): string {
  const code = typeof problem.code === 'string' ? problem.code : undefined;
  const errors = problem.errors as Record<string, string> | undefined;
  if (status === 400 && errors) {
    return `Fix ${Object.keys(errors)
      .map((f) => `\`${f}\``)
      .join(', ')} (see errors) and call again.`;
  }
  if (status === 401) {
    return 'The credential is missing, revoked or expired: retrying will not help; ask the user for a valid API key.';
  }
  if (status === 403) {
    if (problem.key_type === 'publishable') {
      return 'A publishable key only reaches the public booking surface: this needs a secret key or a user session.';
    }
    if (code === 'consent_required' || tool.consentHint) {
      const who = Array.isArray(problem.participant_ids)
        ? ` Missing for: ${(problem.participant_ids as string[]).join(', ')}.`
        : '';
      return `Consent missing.${who} ${tool.consentHint ?? 'Call check_consent, then ask the principal to grant_consent.'}`;
    }
    if (problem.required_scope) return `This key lacks the \`${String(problem.required_scope)}\` scope.`;
    return 'You may not act on this resource with this credential; check the ids (list tools give the ones you can use).';
  }
  if (status === 404) {
    if (code === 'calendar_not_connected') {
      return 'This principal has no connected calendar, so Kairos cannot know their free time (this is not "no free time"): ask them to connect a calendar, then ask again.';
    }
    return 'Nothing with that id is visible to you: take ids from the list tools.';
  }
  if (status === 409) {
    if (code === 'idempotency-key-in-use' || problem.type?.toString().endsWith('/idempotency-key-in-use')) {
      return 'The first call with this idempotency key is still running: wait a moment and repeat it with the same key.';
    }
    if (Array.isArray(problem.conflicts) && problem.conflicts.length > 0) {
      return 'Nothing was booked: the occurrences in `conflicts` cannot be (each with its `reason`). Pick another start time, fewer occurrences (`count`) or another frequency, or book without `recurrence`.';
    }
    if (code === 'slot_full') {
      return 'Every seat of this slot is taken: ask for slots again and pick another (do not repeat the same time).';
    }
    if (
      code === 'slot_unavailable' ||
      tool.creates ||
      tool.name === 'reschedule_booking' ||
      tool.name === 'respond_to_proposal'
    ) {
      return 'This time was just taken: ask for slots again and pick another (do not repeat the same time; a time outside working hours or too soon is refused the same way).';
    }
    return 'The resource is not in a state that allows this (see detail and code): read it again before deciding.';
  }
  if (status === 410) return 'The link or token has expired: ask for a new one.';
  if (status === 422)
    return 'The request is well-formed but impossible as asked (see detail): change it, do not repeat it.';
  if (status === 429) {
    return `The key's hourly rate limit is used up: wait until ${String(problem.retry_after ?? 'the window resets')}.`;
  }
  if (status >= 500) {
    return 'A temporary failure on the server or a calendar provider: retry later with the same idempotency key (nothing was done twice).';
  }
  return 'See detail.';
}
