import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, type Json, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { openApiPath } from '../../test/helpers/openapi-check.js';
import { defineModule } from '../modules/module.js';
import type { Access } from './auth.js';

// docs/design.md#openapi: the document says who may call each operation and every status it
// can answer. The access each route declares (`config.access`) is read from the running app: a test
// module records it for every answer, and each operation of the document is called once.
const seen = new Map<string, Access | undefined>();
const recorder = defineModule()({
  name: 'test-access-recorder',
  needs: [],
  create: () => ({
    api: {},
    routes: (app) =>
      (app as unknown as FastifyInstance).addHook('onSend', async (request, _reply, payload) => {
        if (!request.is404 && request.routeOptions.url) {
          seen.set(
            `${request.method} ${openApiPath(request.routeOptions.url)}`,
            request.routeOptions.config.access,
          );
        }
        return payload;
      }),
  }),
});

let t: TestApp;
let doc: Json;
const ops: { method: string; path: string; op: Json }[] = [];
beforeAll(async () => {
  t = await startTestApp({ modules: [recorder] });
  doc = await getJson(`${t.url}/v1/openapi.json`);
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(methods)) ops.push({ method: method.toUpperCase(), path, op });
  }
});
afterAll(() => t.close());

/** What `security` must say for a route's access (platform/auth.ts Access). */
function securityFor(access: Access | undefined): unknown[] {
  if (access === 'none' || access === 'unmetered') return [];
  if (access === 'public') return [{}, { bearer: [] }];
  return [{ bearer: [] }];
}

describe('the OpenAPI document (docs/design.md#openapi)', () => {
  it('says, for every operation, the credentials its route accepts', async () => {
    expect(ops.length).toBeGreaterThan(50);
    for (const { method, path } of ops) {
      // Any value of each path parameter reaches the route (and its access): the answer does not matter.
      const url = path.replace(/\{[^}]+\}/g, 'x');
      await t.ctx.app?.inject({ method: method as 'GET', url });
    }
    const wrong: string[] = [];
    for (const { method, path, op } of ops) {
      const key = `${method} ${path}`;
      if (!seen.has(key)) {
        wrong.push(`${key}: not reached`);
        continue;
      }
      const access = seen.get(key);
      const effective = op.security ?? doc.security;
      if (JSON.stringify(effective) !== JSON.stringify(securityFor(access))) {
        wrong.push(`${key}: access ${access} but security ${JSON.stringify(effective)}`);
      }
    }
    expect(wrong).toEqual([]);
    // The public booking surface and the token links take no key, or an optional one.
    expect(doc.paths['/v1/public/links/{slug}'].get.security).toEqual([{}, { bearer: [] }]);
    expect(doc.paths['/v1/sessions'].post.security).toEqual([]);
    expect(doc.paths['/v1/hosts'].get.security ?? doc.security).toEqual([{ bearer: [] }]);
  });

  it('lists 414 wherever a path has a parameter, 413 and 415 wherever a body is read, and 429 everywhere', () => {
    const missing: string[] = [];
    for (const { method, path, op } of ops) {
      const listed = Object.keys(op.responses);
      const need = ['429', ...(path.includes('{') ? ['414'] : [])];
      if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) need.push('413', '415');
      for (const status of need) if (!listed.includes(status)) missing.push(`${method} ${path}: ${status}`);
      for (const [status, res] of Object.entries(op.responses as Record<string, Json>)) {
        if (Number(status) >= 400 && !res.content?.['application/problem+json'])
          missing.push(`${method} ${path} ${status}: application/problem+json`);
      }
    }
    expect(missing).toEqual([]);
  });
});
