/**
 * What the JSON calendar APIs (Google Calendar v3, Microsoft Graph v1.0) share, written once: one
 * authenticated call with its error mapping, the fan-out of a free/busy query over windows and groups
 * of calendars, and paging. The status → error code mapping serves CalDAV and ICS feeds too.
 */
import { type Clock, systemClock } from '../../../platform/clock.js';
import {
  isRecord,
  networkError,
  ProviderError,
  type ProviderErrorCode,
  parseRetryAfter,
  str,
} from './errors.js';
import { clip, type Interval, normalizedCopy } from '../../../lib/intervals.js';
import {
  type BusyResult,
  type CalendarError,
  chunk,
  type HttpFetch,
  mapLimit,
  splitWindow,
} from './types.js';

/** Free/busy calls in flight at once per query. */
const CONCURRENCY = 3;

/** Generic status mapping once the provider-specific body has been read. */
export function codeForStatus(status: number, rateLimited: boolean): ProviderErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 429 || rateLimited) return 'rate_limited';
  if (status >= 500) return 'unavailable';
  return 'bad_request';
}

/**
 * The ProviderError for a non-2xx answer, from what the provider's body parser read out of it: the
 * code from the status (`rateLimited` when the body says so), Retry-After, the provider's reason.
 */
export function answerError(
  res: Response,
  nowMs: number,
  read: { message: string; reason: string | undefined; rateLimited?: boolean },
): ProviderError {
  const code = codeForStatus(res.status, read.rateLimited === true);
  const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), nowMs);
  const opts: { retryAfterMs?: number; reason?: string } = {};
  if (retryAfterMs !== undefined) opts.retryAfterMs = retryAfterMs;
  if (read.reason !== undefined) opts.reason = read.reason;
  return new ProviderError(code, res.status, read.message, opts);
}

/** Reads a JSON body without throwing; undefined when absent or not JSON. */
export async function readJsonSafe(res: Response): Promise<unknown> {
  try {
    const text = await res.text();
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One authenticated JSON call to a provider API: Bearer token, JSON accepted, network failures as
 * `unavailable`, and non-2xx answers turned into a ProviderError by the provider's own body parser.
 */
export async function bearerJsonRequest(
  fetch: (url: string, init?: RequestInit) => Promise<Response>,
  url: string,
  accessToken: string,
  init: RequestInit & { headers?: Record<string, string> },
  what: string,
  toError: (res: Response, json: unknown) => ProviderError,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      ...init,
      headers: { ...init.headers, authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    });
  } catch (err) {
    throw networkError(err, `${what} request failed`);
  }
  const json = await readJsonSafe(res);
  if (res.ok) return json;
  throw toError(res, json);
}

/** One call to a JSON calendar API (any method; a 204 without a body resolves to undefined). */
export type ApiRequest<Cfg> = (
  cfg: Cfg,
  fetch: HttpFetch,
  url: string,
  accessToken: string,
  init: RequestInit & { headers?: Record<string, string> },
) => Promise<unknown>;

/**
 * The request function of one JSON calendar API: `what` names it in network errors, `toError` reads
 * its error bodies (with the config's clock for Retry-After dates).
 */
export function jsonApi<Cfg extends { clock?: Pick<Clock, 'nowMs'> }>(
  what: string,
  toError: (res: Response, json: unknown, nowMs: number) => ProviderError,
): ApiRequest<Cfg> {
  return (cfg, fetch, url, accessToken, init) =>
    bearerJsonRequest(fetch, url, accessToken, init, what, (res, json) =>
      toError(res, json, (cfg.clock ?? systemClock).nowMs()),
    );
}

/**
 * A free/busy query fanned out over the provider's limits: the window split into spans of at most
 * `maxWindowMs`, the calendars into groups of at most `perCall`, a few calls at a time; the busy time
 * merged and clipped to the window, each calendar's first error kept.
 */
export async function fanOutBusy(
  window: Interval,
  ids: readonly string[],
  limits: { maxWindowMs: number; perCall: number },
  call: (w: Interval, group: readonly string[]) => Promise<BusyResult>,
): Promise<BusyResult> {
  const jobs = splitWindow(window, limits.maxWindowMs).flatMap((w) =>
    chunk(ids, limits.perCall).map((group) => ({ w, group })),
  );
  const results = await mapLimit(jobs, CONCURRENCY, ({ w, group }) => call(w, group));
  const busy: Interval[] = [];
  const errors = new Map<string, CalendarError>();
  for (const r of results) {
    busy.push(...r.busy);
    for (const e of r.errors) if (!errors.has(e.calendarId)) errors.set(e.calendarId, e);
  }
  return { busy: clip(normalizedCopy(busy), window), errors: [...errors.values()] };
}

/**
 * Reads a paged listing from `first`: `readPage` takes in one page and answers the next page's URL,
 * or undefined when the listing is complete. Answers whether it was (false: `maxPages` pages read and
 * there were more).
 */
export async function readPages(
  first: string,
  maxPages: number,
  readPage: (url: string) => Promise<string | undefined>,
): Promise<boolean> {
  let url: string | undefined = first;
  for (let page = 0; url && page < maxPages; page++) url = await readPage(url);
  return !url;
}

/** Google's next page: the same request with the answer's `nextPageToken`; undefined on the last page. */
export function nextPageTokenUrl(url: string, json: unknown): string | undefined {
  const token = isRecord(json) ? str(json.nextPageToken) : undefined;
  if (!token) return undefined;
  const next = new URL(url);
  next.searchParams.set('pageToken', token);
  return next.toString();
}

/**
 * Graph's next page: the answer's `@odata.nextLink` (relative to `base`); undefined on the last page,
 * 'foreign' when it leads away from the configured Graph origin (the bearer token goes with it) or
 * cannot be read.
 */
export function graphNextLink(json: unknown, base: string): string | 'foreign' | undefined {
  const next = isRecord(json) ? str(json['@odata.nextLink']) : undefined;
  if (!next) return undefined;
  const url = URL.canParse(next, base) ? new URL(next, base) : undefined;
  if (url?.origin !== new URL(base).origin) return 'foreign';
  return url.toString();
}
