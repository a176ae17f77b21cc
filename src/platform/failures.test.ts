import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.js';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { createPool } from '../db/store.js';
import type { DB } from '../db/types.js';
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

  it('an unreachable store answers 503 service-unavailable and readyz says so', async () => {
    const config = {
      ...loadConfig({
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        KAIROS_MASTER_KEY: randomBytes(32).toString('base64'),
      }),
    };
    const pool = createPool('postgres://nobody@127.0.0.1:1/none', 2);
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
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
