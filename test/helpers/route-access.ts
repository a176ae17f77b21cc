/**
 * Every route an app serves, read from its router, for tests that must cover each one (the access
 * matrix, test/house/access-matrix.test.ts): a route added later is then walked too, never skipped.
 */
import type { FastifyInstance } from 'fastify';

export interface ServedRoute {
  method: string;
  /** The route template as registered: `/v1/hosts/:id`, `/console/*`. */
  url: string;
}

/**
 * The app's routes, one per method, from Fastify's own listing of its router (`printRoutes` without
 * common prefixes: a tree whose lines each add a piece of the path, with the methods it takes).
 */
export function servedRoutes(app: FastifyInstance): ServedRoute[] {
  const out: ServedRoute[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = (m[1] ?? '').length / 4;
    stack.length = depth;
    const url = (depth > 0 ? stack[depth - 1] : '') + (m[2] ?? '');
    stack.push(url);
    for (const method of (m[3] ?? '').split(',').map((s) => s.trim())) {
      if (method !== '') out.push({ method, url });
    }
  }
  if (out.length === 0) throw new Error('printRoutes gave no route: has its format changed?');
  return out;
}

/** The names of a route template's path parameters, each with the segment before it (`hosts/:id`). */
export function pathParams(url: string): { name: string; key: string }[] {
  return [...url.matchAll(/([^/]*)\/:([A-Za-z0-9_]+)/g)].map((m) => ({
    name: m[2] ?? '',
    key: `${m[1]}/:${m[2]}`,
  }));
}

/** The template with each parameter replaced by the value `value` gives its `key`. */
export function fillPath(url: string, value: (key: string) => string): string {
  return url.replace(
    /([^/]*)\/:([A-Za-z0-9_]+)/g,
    (_all, before: string, name: string) => `${before}/${encodeURIComponent(value(`${before}/:${name}`))}`,
  );
}
