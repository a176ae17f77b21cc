import { randomBytes } from 'node:crypto';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { waitUntil } from '../../test/helpers/promises.js';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { createDb, createPool } from '../db/store.js';
import { startRuntime } from '../runtime.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('failures never leak internals', () => {
  it('an unexpected exception is a 500 internal-error problem with a generic detail', async () => {
    const app = await buildApp(t.ctx);
    app.get('/v1/boom', { config: { access: 'private' } }, async () => {
      throw new Error('db password is hunter2 at /srv/kairos/src/x.ts:12');
    });
    await app.ready();
    const { key } = await t.account();
    const res = await app.inject({
      method: 'GET',
      url: '/v1/boom',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const p = res.json();
    expect(p).toMatchObject({ status: 500, title: 'Internal Server Error' });
    expect(p.type).toMatch(/\/errors\/internal-error$/);
    expect(p.request_id).toMatch(/^req_/);
    expect(res.body).not.toContain('hunter2');
    expect(res.body).not.toContain('x.ts');
    await app.close();
  });

  it('while the app drains, the request in flight finishes 200 and the next one on its connection is 503 problem+json with Retry-After and code shutting_down', async () => {
    const app = await buildApp(t.ctx);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => {};
    const inHandler = new Promise<void>((resolve) => {
      started = resolve;
    });
    app.get('/v1/slow', { config: { access: 'unmetered' } }, async () => {
      started();
      await held;
      return { done: true };
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    // One connection, two requests pipelined on it: the second is read once the first has answered.
    const client = new Client(url, { pipelining: 2 });
    const slow = client.request({ method: 'GET', path: '/v1/slow' });
    await inHandler;
    const late = client.request({ method: 'GET', path: '/healthz' });
    const closing = app.close();
    // The drain is under way (preClose, then the server stops listening and closes the connections
    // idle at that moment) while the first request still holds this one; the second is read after it.
    await waitUntil('the server to stop listening', () => !app.server.listening);
    release();
    const first = await slow;
    expect(first.statusCode).toBe(200);
    await first.body.dump();
    const second = await late;
    expect(second.statusCode).toBe(503);
    expect(second.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(second.headers['retry-after']).toBe('1');
    const body = (await second.body.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 503, code: 'shutting_down' });
    expect(body.request_id).toMatch(/^req_/);
    await closing;
    await client.close();
  });

  it('an unreachable store answers 503 service-unavailable and readyz says so', async () => {
    const config = {
      ...loadConfig({
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        KAIROS_MASTER_KEY: randomBytes(32).toString('base64'),
      }),
    };
    const pool = createPool('postgres://nobody@127.0.0.1:1/none', 2);
    const db = createDb(pool);
    const rt = await startRuntime({
      config,
      log: { info() {}, warn() {}, error() {} },
      store: { db, pool, url: 'postgres://nobody@127.0.0.1:1/none', masterKey: config.masterKey! },
      notifier: false,
      workers: false,
      usage: false,
    });
    const app = rt.app!;
    await app.ready();
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(ready.json().type).toMatch(/\/errors\/service-unavailable$/);
    const res = await app.inject({
      method: 'GET',
      url: '/v1/me',
      headers: { authorization: `Bearer svc_sk_live_${'x'.repeat(43)}` },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().type).toMatch(/\/errors\/service-unavailable$/);
    expect(res.headers['retry-after']).toBeDefined();
    await rt.close();
    await db.destroy();
  });
});
