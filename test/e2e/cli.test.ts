import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { REPO, runCli, type ServerProcess, spawnServer } from '../helpers/process.js';

/** The CLI on the embedded store, as a new user runs it, and against an external database. */
describe('kairos CLI', () => {
  describe('on the embedded store', () => {
    const dataDir = join(REPO, '.test-data', `cli-${process.pid}`);
    const env = { KAIROS_DATA_DIR: dataDir };
    let server: ServerProcess | null = null;
    beforeAll(() => {
      rmSync(dataDir, { recursive: true, force: true });
      mkdirSync(dataDir, { recursive: true, mode: 0o755 });
    });
    afterAll(async () => {
      await server?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('creates an account with the server stopped, then serve accepts its key', {
      timeout: 90_000,
    }, async () => {
      const out = await runCli(['accounts', 'create', '--name', 'Acme', '--json'], env);
      expect(out.code, out.stderr).toBe(0);
      const lines = out.stdout.trim().split('\n');
      expect(lines.length).toBe(1);
      const created = JSON.parse(lines[0]!);
      expect(Object.keys(created)).toEqual(['account', 'api_key']);
      expect(created.account).toMatchObject({ name: 'Acme', plan: 'free' });
      expect(created.api_key.key).toMatch(/^svc_sk_live_/);

      server = await spawnServer(env);
      const me = await fetch(`${server.url}/v1/me`, {
        headers: { authorization: `Bearer ${created.api_key.key}` },
      });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { account: { name: string } }).account.name).toBe('Acme');

      // with the server running, the CLI uses the same embedded PostgreSQL server
      const second = await runCli(
        ['accounts', 'create', '--name', 'Beta', '--plan', 'premium', '--json'],
        env,
      );
      expect(second.code, second.stderr).toBe(0);
      const beta = JSON.parse(second.stdout);
      expect(beta.account.plan).toBe('premium');
      const me2 = await fetch(`${server.url}/v1/me`, {
        headers: { authorization: `Bearer ${beta.api_key.key}` },
      });
      expect(me2.headers.get('x-ratelimit-limit')).toBe('1000');

      // The operator raises the free account's limit, and lists the accounts.
      const refused = await runCli(
        ['accounts', 'update', created.account.id, '--rate-limit', '50000', '--json'],
        env,
      );
      expect(refused.code).not.toBe(0);
      expect(JSON.parse(refused.stdout).error.message).toMatch(/enterprise/);
      const updated = await runCli(
        ['accounts', 'update', created.account.id, '--plan', 'enterprise', '--rate-limit', '50000', '--json'],
        env,
      );
      expect(updated.code, updated.stderr).toBe(0);
      expect(JSON.parse(updated.stdout).account).toMatchObject({
        plan: 'enterprise',
        rate_limit_per_hour: 50000,
      });
      const listed = await runCli(['accounts', 'list', '--json'], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout).accounts.map((a: { name: string }) => a.name)).toEqual([
        'Acme',
        'Beta',
      ]);
    });
  });

  describe('on an external database', () => {
    let t: TestApp;
    let env: Record<string, string>;
    beforeAll(async () => {
      t = await startTestApp();
      env = { DATABASE_URL: t.database.url, KAIROS_MASTER_KEY: t.masterKey };
    });
    afterAll(() => t.close());

    it('creates users, keys, lists and revokes them, each printing one JSON object', {
      timeout: 120_000,
    }, async () => {
      const acc = JSON.parse(
        (
          await runCli(
            ['accounts', 'create', '--name', 'Cli', '--plan', 'enterprise', '--rate-limit', '5000', '--json'],
            env,
          )
        ).stdout,
      );
      expect(acc.account.rate_limit_per_hour).toBe(5000);
      const user = await runCli(
        [
          'users',
          'create',
          '--account',
          acc.account.id,
          '--email',
          'cli@example.com',
          '--password-stdin',
          '--json',
        ],
        env,
        'a long enough password\n',
      );
      expect(user.code, user.stderr).toBe(0);
      expect(JSON.parse(user.stdout).user.email).toBe('cli@example.com');
      const login = await t.call('POST', '/v1/sessions', {
        body: { email: 'cli@example.com', password: 'a long enough password' },
      });
      expect(login.status).toBe(201);

      const pk = await runCli(
        [
          'keys',
          'create',
          '--account',
          acc.account.id,
          '--type',
          'publishable',
          '--allowed-domain',
          'shop.example',
          '--json',
        ],
        env,
      );
      const pkKey = JSON.parse(pk.stdout).api_key;
      expect(pkKey.key).toMatch(/^svc_pk_live_/);
      expect(pkKey.allowed_domains).toEqual(['shop.example']);

      const list = JSON.parse(
        (await runCli(['keys', 'list', '--account', acc.account.id, '--json'], env)).stdout,
      );
      expect(list.api_keys.length).toBe(2);
      expect(JSON.stringify(list)).not.toMatch(/svc_[sp]k_live_[A-Za-z0-9_-]{20,}/);

      const revoked = await runCli(['keys', 'revoke', pkKey.id, '--json'], env);
      expect(JSON.parse(revoked.stdout).api_key.status).toBe('revoked');
      expect((await t.call('GET', '/v1/public/links/x', { token: pkKey.key })).status).toBe(401);
    });

    it('reports usage errors with exit code 2 and bad input as one JSON error object', {
      timeout: 120_000,
    }, async () => {
      const usage = await runCli(['accounts', 'create', '--json'], env);
      expect(usage.code).toBe(2);
      expect(JSON.parse(usage.stdout).error.message).toContain('--name');
      const bad = await runCli(['keys', 'list', '--account', 'nope', '--json'], env);
      expect(bad.code).not.toBe(0);
      expect(JSON.parse(bad.stdout)).toHaveProperty('error');
      const unknown = await runCli(['frobnicate'], env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('Usage: kairos');
    });
  });
});
