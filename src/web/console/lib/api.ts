/**
 * How the console talks to the server: `@kairos/sdk` for every API call, pointed at the console's
 * same-origin proxy (`/console/api`), whose `fetch` adds the session's CSRF proof. The session itself
 * is an httpOnly cookie this script never sees.
 */
import { Kairos, KairosError } from '@kairos/sdk';

export interface PageData {
  page: string;
  csrf: string | null;
  user: { email: string; account_name: string } | null;
  /** The webhook event types a subscription may name (the webhooks page only). */
  events?: string[];
  /** The server has no account yet (pages before signing in): the setup link is the way in. */
  no_account?: true;
}

function readData(): PageData {
  const el = document.getElementById('console-data');
  return JSON.parse(el?.textContent ?? '{}') as PageData;
}

export const data: PageData = readData();

function withProof(init: RequestInit | undefined): RequestInit {
  const headers = new Headers(init?.headers);
  if (data.csrf) headers.set('x-csrf-token', data.csrf);
  return { ...init, headers, credentials: 'same-origin' };
}

export const kairos = new Kairos({
  baseUrl: `${location.origin}/console/api`,
  maxRetries: 1,
  fetch: async (input, init) => {
    const res = await fetch(input, withProof(init));
    // The session ended (expired, or signed out in another tab): sign in again.
    if (res.status === 401) location.assign('/console/sign-in');
    return res;
  },
});

/**
 * What a failed call tells a form: the message, each field's error by field name (`questions`), and
 * each error by its whole path (`questions.2.label`), for the fields of a list's items.
 */
export interface Failure {
  message: string;
  fields: Record<string, string>;
  paths?: Record<string, string>;
}

export const NO_FAILURE: Failure = { message: '', fields: {} };

/** A field name out of a validation error's key (`allowed_domains/0`, `/name`, `body.name`). */
function fieldOf(key: string): string {
  const m = /^(?:body\.|\/)?([A-Za-z_]+)/.exec(key);
  return m?.[1] ?? key;
}

export function failure(err: unknown): Failure {
  if (err instanceof KairosError) {
    const fields: Record<string, string> = {};
    const paths: Record<string, string> = {};
    for (const [k, v] of Object.entries(err.errors ?? {})) {
      fields[fieldOf(k)] ??= v;
      paths[
        k
          .replace(/^body\./, '')
          .replace(/^\//, '')
          .replaceAll('/', '.')
      ] ??= v;
    }
    return { message: err.detail || err.title, fields, paths };
  }
  return { message: err instanceof Error ? err.message : String(err), fields: {} };
}

/** A request to the console's own endpoints (setup, sign-in, sign-out), not the API. */
export async function consoleCall(method: string, path: string, body?: unknown): Promise<unknown> {
  const init: RequestInit = { method, headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { ...init.headers, 'content-type': 'application/json' };
  }
  const res = await fetch(path, withProof(init));
  const text = await res.text();
  const parsed: unknown = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const p = (parsed ?? {}) as { detail?: string; title?: string; errors?: Record<string, string> };
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(p.errors ?? {})) fields[fieldOf(k)] ??= v;
    throw Object.assign(new Error(p.detail ?? p.title ?? `HTTP ${res.status}`), { fields });
  }
  return parsed;
}

/** failure() for consoleCall's errors too. */
export function anyFailure(err: unknown): Failure {
  if (err instanceof Error && 'fields' in err) {
    return { message: err.message, fields: (err as Error & { fields: Record<string, string> }).fields };
  }
  return failure(err);
}

export async function signOut(): Promise<void> {
  try {
    await consoleCall('DELETE', '/console/session');
  } finally {
    location.assign('/console/sign-in');
  }
}
