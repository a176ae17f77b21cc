/**
 * The client: one `request` that applies the contract's retry rules (docs/api.md, Errors and
 * Idempotency), and the resources, whose methods are made from the generated operation table.
 */
import { ConnectionError, errorFor, type KairosError, type Problem, retryAfterMs } from './errors.js';
import { operations } from './operations.js';
import type { Method, OperationId, PagePromise, RequestOptions } from './types.js';

export interface KairosOptions {
  /**
   * A secret key (`svc_sk_live_…`, or `svc_sk_test_…` for test mode), a publishable key (`svc_pk_…`),
   * a session token, or none (public routes). Any is sent as it is: the server decides what it is.
   */
  apiKey?: string;
  /** Where the server is, e.g. `https://kairos.example.com` (default: the page's origin in a browser). */
  baseUrl?: string;
  /** Retries of a retryable failure (429, 5xx, network errors, time-outs). Default 2. */
  maxRetries?: number;
  /** Time limit of one attempt, in milliseconds. Default 60 000. */
  timeoutMs?: number;
  /**
   * The longest wait the SDK accepts from `Retry-After` / `retry_after`, in milliseconds (default
   * 60 000): a server asking for longer gets the error thrown at once instead of a retry.
   */
  maxRetryDelayMs?: number;
  /** A `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

interface Call extends RequestOptions {
  method: string;
  path: string;
  body?: unknown;
  /** The server honours Idempotency-Key for this operation. */
  idempotent?: boolean;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

function newKey(): string {
  const c = globalThis.crypto;
  return c.randomUUID
    ? c.randomUUID()
    : [...c.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null) continue;
    for (const one of Array.isArray(v) ? v : [v]) q.append(k, String(one));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export class KairosCore {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  readonly maxRetryDelayMs: number;
  private readonly fetcher: typeof fetch;

  constructor(o: KairosOptions = {}) {
    this.apiKey = o.apiKey;
    this.baseUrl = (
      o.baseUrl ??
      (globalThis as { location?: { origin: string } }).location?.origin ??
      ''
    ).replace(/\/+$/, '');
    if (!this.baseUrl) throw new TypeError('Kairos: baseUrl is required outside a browser page');
    this.maxRetries = o.maxRetries ?? 2;
    this.timeoutMs = o.timeoutMs ?? 60_000;
    this.maxRetryDelayMs = o.maxRetryDelayMs ?? 60_000;
    // Called unbound: a browser's fetch throws "Illegal invocation" when called as a method of another object.
    this.fetcher = o.fetch ?? ((input, init) => fetch(input, init));
  }

  /**
   * One operation, with the contract's retry rules: 429, 408, 409 `idempotency-key-in-use` and 5xx
   * are retried with exponential backoff and jitter, waiting at least what `Retry-After` or
   * `retry_after` asks; network errors and time-outs too. Any other 4xx is thrown at once. A request
   * that may have changed something is sent again only when repeating it is safe: a GET, PUT, PATCH or
   * DELETE, or a POST carrying an Idempotency-Key the server honours (the same key on every attempt,
   * so a retried booking is one booking); other POSTs are retried only on 429 and 503, which the
   * contract says changed nothing.
   */
  async request<T>(call: Call): Promise<T> {
    // JSON answers everywhere (the connect routes redirect a browser unless asked for JSON); `Accept` is
    // CORS-safelisted, so it costs no preflight.
    const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (call.method === 'POST') headers['idempotency-key'] = call.idempotencyKey ?? newKey();
    const safe = call.method !== 'POST' || call.idempotent === true;
    const url = this.baseUrl + call.path + queryString(call.query);
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const maxRetries = call.maxRetries ?? this.maxRetries;
    const timeoutMs = call.timeoutMs ?? this.timeoutMs;
    let answer = '';
    for (let attempt = 0; ; attempt++) {
      const controller = new AbortController();
      const abort = () => controller.abort(call.signal?.reason);
      call.signal?.addEventListener('abort', abort);
      const timer = setTimeout(
        () => controller.abort(new Error(`timed out after ${timeoutMs} ms`)),
        timeoutMs,
      );
      let error: KairosError;
      let retryable: boolean;
      let wait = 0;
      try {
        const res = await this.fetcher(url, {
          method: call.method,
          headers,
          body,
          signal: controller.signal,
        });
        if (res.ok) {
          if (res.status === 204) return undefined as T;
          answer = await res.text();
          break;
        }
        let problem: Problem | undefined;
        try {
          problem = JSON.parse(await res.text());
        } catch {}
        error = errorFor(res.status, problem, res.headers);
        const s = res.status;
        retryable =
          s === 429 ||
          s === 503 ||
          (safe && (s === 408 || s >= 500 || (s === 409 && /idempotency-key-in-use$/.test(error.type))));
        wait = retryAfterMs(res.headers, problem, Date.now());
      } catch (err) {
        if (call.signal?.aborted) throw call.signal.reason;
        const cause = (err as { cause?: { message?: string } }).cause?.message;
        const reason = controller.signal.aborted
          ? String(controller.signal.reason)
          : `${String(err)}${cause ? ` (${cause})` : ''}`;
        error = new ConnectionError(0, undefined, undefined, `${call.method} ${call.path}: ${reason}`);
        retryable = Boolean(safe);
      } finally {
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', abort);
      }
      if (!retryable || attempt >= maxRetries || wait > this.maxRetryDelayMs) throw error;
      // Exponential backoff with jitter (0.5 s, 1 s, 2 s … up to 8 s, each 50–100 %), never less than asked.
      const backoff = Math.min(8000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
      await sleep(Math.max(wait, backoff), call.signal);
    }
    // Parsed outside the retry loop: an answer that is not JSON is an error of its own, not a network error.
    return JSON.parse(answer) as T;
  }

  /** The method an operation of the table becomes (see `Method` for its signature). */
  protected op<K extends OperationId>(id: K): Method<K> {
    const [method, path, flags] = operations[id];
    const fn = (...args: unknown[]) => {
      let i = 0;
      const filled = path.replace(/\{\w+\}/g, () => encodeURIComponent(String(args[i++])));
      const input = flags.includes('b') || flags.includes('q') ? args[i++] : undefined;
      const options = (args[i] ?? {}) as RequestOptions;
      const hasBody = flags.includes('b');
      const send = (query?: Record<string, unknown>) =>
        this.request({
          ...options,
          method,
          path: filled,
          idempotent: flags.includes('i'),
          body: hasBody ? (input ?? {}) : undefined,
          query: hasBody
            ? options.query
            : query
              ? { ...(input as Record<string, unknown>), ...query }
              : (input as Record<string, unknown>),
        });
      return flags.includes('p') ? paginate(send) : send();
    };
    return fn as unknown as Method<K>;
  }
}

interface Page {
  pagination: { next_cursor: string | null; has_more: boolean };
  [list: string]: unknown;
}

/** A list: thenable (the first page) and async-iterable (every item, page after page, over `next_cursor`). */
function paginate<R>(send: (query?: Record<string, unknown>) => Promise<unknown>): PagePromise<R> {
  const page = (cursor?: string) => send(cursor ? { cursor } : undefined) as Promise<R>;
  return {
    page,
    // biome-ignore lint/suspicious/noThenProperty: a list call is awaited for its first page, by design
    then: (ok, fail) => page().then(ok, fail),
    async *[Symbol.asyncIterator]() {
      let cursor: string | undefined;
      do {
        const p = (await page(cursor)) as Page;
        for (const [k, v] of Object.entries(p)) if (k !== 'pagination' && Array.isArray(v)) yield* v;
        cursor = p.pagination.has_more ? (p.pagination.next_cursor ?? undefined) : undefined;
      } while (cursor);
    },
  } as PagePromise<R>;
}
