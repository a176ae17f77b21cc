import pg from 'pg';
import { describe, expect, it, inject } from 'vitest';
import { databaseUrl } from '../helpers/db.js';
import type { TestApp } from '../helpers/app.js';
import { callServer, type ServerProcess, spawnServer, spawnTwo, useTwoServers } from '../helpers/process.js';
import { clearOfHourBoundary } from '../helpers/windows.js';
import { waitUntil } from '../helpers/promises.js';

/** Two `kairos serve` processes sharing one database, as in a horizontally scaled deployment. */
let t: TestApp;
let a: ServerProcess;
let b: ServerProcess;
useTwoServers((s) => ({ t, a, b } = s));

const call = (
  base: string,
  method: string,
  path: string,
  token: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
) => callServer(base, method, path, token, init.body, init.headers);

describe('across two server processes on one database', () => {
  it('holds the per-key hourly limit exactly when 60 requests race across both processes', async () => {
    await clearOfHourBoundary();
    const acc = await t.account({ rateLimit: 20 });
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => call(i % 2 ? a.url : b.url, 'GET', '/v1/me', acc.key)),
    );
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(ok.length).toBe(20);
    expect(limited.length).toBe(40);
    const p = (await limited[0]!.json()) as Record<string, unknown>;
    expect(p.type).toMatch(/\/errors\/rate-limit-exceeded$/);
    expect(p.title).toBe('Too Many Requests');
    expect(typeof p.retry_after).toBe('string');
    expect(new Date(p.retry_after as string).toISOString()).toBe(p.retry_after);
    expect(limited[0]!.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited[0]!.headers.get('x-ratelimit-reset')).toBe(p.retry_after);
  });

  it('creates exactly one key when 50 identical requests with one Idempotency-Key race across both processes', async () => {
    const acc = await t.account();
    const body = { name: 'raced', description: 'one only' };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(i % 2 ? a.url : b.url, 'POST', '/v1/api-keys', acc.key, {
          body,
          headers: { 'idempotency-key': 'race-1' },
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = await t.ctx.db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', acc.id)
      .where('name', '=', 'raced')
      .execute();
    expect(created.length).toBe(1);
    const first = results.find((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null)!;
    const firstBody = await first.text();
    // Retrying now replays the stored answer byte for byte, from either process.
    for (const base of [a.url, b.url]) {
      const again = await call(base, 'POST', '/v1/api-keys', acc.key, {
        body,
        headers: { 'idempotency-key': 'race-1' },
      });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.text()).toBe(firstBody);
    }
    const conflict = results.find((r) => r.status === 409);
    if (conflict) {
      expect(conflict.headers.get('retry-after')).toBe('1');
      expect(((await conflict.json()) as { type: string }).type).toMatch(/idempotency-key-in-use$/);
    }
  });

  it('revokes a key in one process and the other answers 401 as soon as the NOTIFY arrives', async () => {
    const acc = await t.account();
    const created = (await (
      await call(a.url, 'POST', '/v1/api-keys', acc.key, { body: { name: 'short-lived' } })
    ).json()) as {
      api_key: { id: string; key: string };
    };
    const key = created.api_key.key;
    expect((await call(b.url, 'GET', '/v1/me', key)).status).toBe(200); // cached in b now
    expect((await call(a.url, 'DELETE', `/v1/api-keys/${created.api_key.id}`, acc.key)).status).toBe(200);
    expect((await call(a.url, 'GET', '/v1/me', key)).status).toBe(401);
    // B hears of the revocation through NOTIFY, sent at commit: usually before this request reaches it,
    // but a request can overtake it on a busy machine. Allow 1 s; after the first 401, never a 200.
    let status = 200;
    const refused = async () => {
      status = (await call(b.url, 'GET', '/v1/me', key)).status;
      return status !== 200;
    };
    await waitUntil('B to refuse the revoked key', refused, 1000, 5).catch(() => undefined);
    expect(status).toBe(401);
    expect((await call(b.url, 'GET', '/v1/me', key)).status).toBe(401);
  });

  // A third process starts from source inside the test: on a loaded CI machine that alone can take
  // most of the default 30 s, so the test gets the time its start and its drain are each allowed.
  it('exits 0 on SIGTERM after answering the requests it accepted', { timeout: 90_000 }, async () => {
    const env = { DATABASE_URL: t.database.url, KAIROS_MASTER_KEY: t.masterKey };
    const c = await spawnServer(env, 45_000);
    const acc = await t.account();
    const calls = Array.from({ length: 20 }, () => call(c.url, 'GET', '/v1/me', acc.key));
    const inflight = Promise.allSettled(calls);
    // SIGTERM once the first answer is in (the others are still in flight), not after a fixed delay,
    // which a busy machine can outlast before the server accepts anything.
    await Promise.race(calls);
    const code = await c.stop('SIGTERM');
    const settled = await inflight;
    expect(code).toBe(0);
    for (const s of settled) {
      if (s.status === 'fulfilled') expect([200, 503]).toContain(s.value.status);
    }
    expect(c.output()).toContain('shutdown complete');
    expect(c.output()).toMatch(
      /"request_id":"req_[0-9a-z]{26}","method":"GET","route":"\/v1\/me","status":200/,
    );
  });

  it('migrates an empty database once when two processes start on it at the same moment', {
    timeout: 90_000,
  }, async () => {
    const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await admin.connect();
    const name = `kairos_empty_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    const url = databaseUrl(inject('adminDatabaseUrl'), name);
    const env = { DATABASE_URL: url, KAIROS_MASTER_KEY: t.masterKey };
    const [x, y] = await spawnTwo(env);
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    const { rows } = await check.query('SELECT name, count(*)::int AS n FROM kysely_migration GROUP BY name');
    await check.end();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r: { n: number }) => r.n === 1)).toBe(true);
    expect((await fetch(`${x.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${y.url}/readyz`)).status).toBe(200);
    await Promise.all([x.stop(), y.stop()]);
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  });
});
